#include "store/data_folder_lock.h"

#include <filesystem>

namespace abacus {

std::string SqliteDataFolder(std::string_view url) {
  if (!url.starts_with("sqlite://")) return "";
  std::string_view path = url.substr(9);
  path = path.substr(0, path.find('?'));
  if (path.empty() || path == ":memory:") return "";
  std::filesystem::path p = std::filesystem::absolute(std::filesystem::path(std::string(path)));
  return p.parent_path().string();
}

}  // namespace abacus

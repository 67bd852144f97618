#include "common/file.h"

#include <cstdio>

namespace abacus {

Result<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFound("cannot open " + std::string(what) + " '" + path + "'");
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Unavailable("error reading " + std::string(what) + " '" + path + "'");
  return data;
}

}  // namespace abacus

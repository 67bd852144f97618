#include "agent/loop/node_credential.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace abacus::agent {
namespace {

std::string PathIn(const std::string& work_dir) { return work_dir + "/node.credential"; }

}  // namespace

std::string LoadNodeCredential(const std::string& work_dir, const std::string& name) {
  if (work_dir.empty()) return "";
  std::ifstream in(PathIn(work_dir));
  std::string stored_name, token;
  if (!(in >> stored_name >> token) || stored_name != name) return "";
  return token;
}

Status StoreNodeCredential(const std::string& work_dir, const std::string& name, const std::string& token) {
  if (work_dir.empty()) return Status::OK();
  const std::string path = PathIn(work_dir), tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot write " + tmp + ": " + std::strerror(errno));
  const std::string content = name + " " + token + "\n";
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ok = ::fsync(fd) == 0 && ok;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    return Unavailable("cannot write " + path + ": " + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace abacus::agent

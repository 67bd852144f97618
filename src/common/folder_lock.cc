#include "common/folder_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

namespace abacus {
namespace {

// What the holder wrote: "pid N (ROLE)", or "another process" when unreadable.
std::string Holder(int fd) {
  char buf[256];
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "another process";
  std::string text(buf, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text.empty() ? "another process" : "abacus " + text;
}

}  // namespace

Result<std::unique_ptr<DataFolderLock>> DataFolderLock::Acquire(const std::string& dir, std::string_view role,
                                                                std::string_view noun, std::string_view rule) {
  std::string path = (std::filesystem::path(dir) / kFileName).string();
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot open lock file " + path + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = err == EWOULDBLOCK ? Holder(fd) : "";
    close(fd);
    if (err != EWOULDBLOCK) return Unavailable("cannot lock " + path + ": " + std::strerror(err));
    return FailedPrecondition(std::string(noun) + " " + dir + " is in use by " + holder + ": " + std::string(rule));
  }
  std::string text = "pid " + std::to_string(getpid()) + " (" + std::string(role) + ")\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    int err = errno;
    close(fd);
    return Unavailable("cannot write lock file " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<DataFolderLock>(new DataFolderLock(fd, std::move(path)));
}

DataFolderLock::~DataFolderLock() { close(fd_); }

}  // namespace abacus

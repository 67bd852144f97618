#include "agent/runtime/results.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

namespace abacus::agent {

namespace {

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string Errno() { return ::strerror(errno); }

// The status report is JSON, which holds text only.
bool IsUtf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace

Status PrepareResultsDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return FailedPrecondition("cannot create the results directory " + dir + ": " + ec.message());
  if (::chmod(dir.c_str(), 0700) != 0) {
    return FailedPrecondition("cannot set mode 0700 on the results directory " + dir + ": " + Errno());
  }
  return Status::OK();
}

std::string ResultsFileName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) return kDefaultResultsFile;
  return name;
}

TaskResults ReadResults(const std::string& dir, const std::string& preferred) {
  TaskResults out;
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
  if (d.fd < 0) return out;  // no directory: nothing was written
  std::string name = ResultsFileName(preferred);
  Fd f{::openat(d.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0 && errno == ENOENT && name != kDefaultResultsFile) {
    name = kDefaultResultsFile;
    f.fd = ::openat(d.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  if (f.fd < 0) {
    if (errno == ENOENT) return out;
    out.error = errno == ELOOP ? name + " is a symbolic link; write the results as a regular file"
                               : "cannot read " + name + ": " + Errno();
    return out;
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    out.error = "cannot read " + name + ": " + Errno();
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.error = name + " is not a regular file";
    return out;
  }
  // The agent reads as root what a task user wrote: a hard link could name a file the task may
  // not read.
  if (st.st_nlink > 1) {
    out.error = name + " has more than one hard link; write the results as a file of its own";
    return out;
  }
  if (static_cast<size_t>(st.st_size) > kMaxResultsBytes) {
    out.error = name + " is " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(kMaxResultsBytes) + " allowed";
    return out;
  }
  // Read one byte past the cap, in case the file grew since fstat.
  std::string text(kMaxResultsBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(f.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = "cannot read " + name + ": " + Errno();
      return out;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxResultsBytes) {
    out.error = name + " is more than the " + std::to_string(kMaxResultsBytes) + " bytes allowed";
    return out;
  }
  text.resize(got);
  if (!IsUtf8(text)) {
    out.error = name + " is not UTF-8 text";
    return out;
  }
  out.text = std::move(text);
  return out;
}

}  // namespace abacus::agent

// One writer per folder: an exclusive flock on DIR/abacus.lock, held for the holder's life (the
// process's, for a server or an agent), with the holder's pid and role written in the file so
// that a second process names it when it is refused. The kernel drops the lock when the process
// ends, kill -9 included: a stale file never blocks a restart. A server's data folder and an
// agent's work folder each take one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus {

class DataFolderLock {
 public:
  // The lock file inside a data folder.
  static constexpr std::string_view kFileName = "abacus.lock";

  // Takes the lock of `dir` (which must exist) for `role` ("server", "admin migrate", "agent
  // gpu-1", …). FailedPrecondition "NOUN DIR is in use by abacus pid N (ROLE): RULE" when
  // another open file (another process, or another holder in this one) holds it; Unavailable
  // when the file cannot be opened or locked.
  static Result<std::unique_ptr<DataFolderLock>> Acquire(
      const std::string& dir, std::string_view role, std::string_view noun = "data folder",
      std::string_view rule = "one server (or admin command) per data folder; stop it first");

  // Releases the lock (closes the file; the file itself stays).
  ~DataFolderLock();
  DataFolderLock(const DataFolderLock&) = delete;
  DataFolderLock& operator=(const DataFolderLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  DataFolderLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_;
  std::string path_;
};

}  // namespace abacus

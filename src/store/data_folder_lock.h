// One writer per data folder: an exclusive flock on DATA/abacus.lock, held for the holder's
// life (the process's, for a server), with the holder's pid and role written in the file so
// that a second process names it when it is refused. The kernel drops the lock when the
// process ends, kill -9 included: a stale file never blocks a restart.
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

  // Takes the lock of `dir` (which must exist) for `role` ("server", "admin migrate", …).
  // FailedPrecondition "data folder DIR is in use by abacus pid N (ROLE)" when another open
  // file (another process, or another holder in this one) holds it; Unavailable when the file
  // cannot be opened or locked.
  static Result<std::unique_ptr<DataFolderLock>> Acquire(const std::string& dir, std::string_view role);

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

// One writer per PostgreSQL database: a session advisory lock held on its own connection for
// the holder's life (PostgreSQL releases it when the connection ends, the process's death
// included). A server without --ha takes it exclusive, an HA leader shared: two non-HA servers,
// or a non-HA server and HA servers, never write to one database at once.
class PgSessionLock;  // store/postgres/pg_writer_lock.cc
struct PgSessionLockDeleter {
  void operator()(PgSessionLock* lock) const;
};
using PostgresWriterLock = std::unique_ptr<PgSessionLock, PgSessionLockDeleter>;
// Takes the lock on the database of `url` (a postgres:// URL), `shared` or exclusive.
// FailedPrecondition naming the holding connection's backend pid and client address when it is
// held in a conflicting mode; Unavailable when the database cannot be reached.
Result<PostgresWriterLock> LockPostgresWriters(const std::string& url, bool shared);

// The data folder of a SQLite store URL ("sqlite:///x/y/abacus.db" -> "/x/y"); "" for any
// other URL (PostgreSQL, memory, sqlite://:memory:).
std::string SqliteDataFolder(std::string_view url);

}  // namespace abacus

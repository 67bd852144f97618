// One writer per data folder (DataFolderLock, common/folder_lock.h) and per PostgreSQL database.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/folder_lock.h"
#include "common/status.h"

namespace abacus {

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

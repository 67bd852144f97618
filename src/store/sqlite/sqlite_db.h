// Thin RAII wrappers over the SQLite C API: a connection with a cache of prepared statements,
// and a scoped use of one statement. Errors become Status values that name the database path.
// Neither class is thread-safe; SqliteStore guards each connection with a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace abacus {

class SqliteConnection;

// One use of a cached prepared statement: bind parameters in order, step, read columns. The
// destructor resets the statement and clears its bindings so the cache can hand it out again.
class SqliteQuery {
 public:
  SqliteQuery(SqliteConnection& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  SqliteQuery(SqliteQuery&& other) noexcept;
  SqliteQuery& operator=(SqliteQuery&&) = delete;
  SqliteQuery(const SqliteQuery&) = delete;
  ~SqliteQuery();

  // Bind the next parameter. Text is not copied: it must stay alive until the query ends.
  SqliteQuery& Bind(std::string_view text);
  SqliteQuery& Bind(int64_t value);

  // Steps once: true when a row is ready, false when done.
  Result<bool> Step();
  // Steps until done, ignoring rows.
  Status Run();

  int64_t ColumnInt(int column) const;
  std::string ColumnText(int column) const;

 private:
  SqliteConnection* db_;
  sqlite3_stmt* stmt_;
  int next_param_ = 1;
  int bind_rc_ = 0;  // first failing bind's result code, reported by Step()
};

class SqliteConnection {
 public:
  // Opens `path` (":memory:" for a private in-memory database), read-write and created if
  // missing, or read-only. Unavailable naming the path when it cannot be opened.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path, bool read_only,
                                                        int busy_timeout_ms);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // Runs one or more statements without caching (schema, pragmas).
  Status Exec(std::string_view sql);
  // Returns a use of the cached statement for `sql`, preparing it on first use. `sql` must
  // have static storage duration: the cache is keyed by its address.
  Result<SqliteQuery> Query(const char* sql);
  // Returns the rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;
  // Returns the rowid of the last successful INSERT on this connection.
  int64_t LastInsertRowid() const;
  // Returns whether a transaction is open.
  bool InTransaction() const;

  // Calls `on_commit(frames in the WAL)` after every commit of this connection (sqlite3_wal_hook;
  // replaces automatic checkpoints, which `PRAGMA wal_autocheckpoint = 0` turns off). `on_commit`
  // must outlive the connection and be cheap: it runs inside the commit.
  void OnWalCommit(std::function<void(int)>* on_commit);
  // Copies what the WAL holds into the database without waiting for readers or writers
  // (SQLITE_CHECKPOINT_PASSIVE); `frames` and `copied` tell how far it got.
  Status CheckpointPassive(int& frames, int& copied);

  // Returns the Status for SQLite result code `rc` during `what`, naming the path and
  // SQLite's message.
  Status Error(int rc, std::string_view what) const;

  const std::string& path() const { return path_; }

 private:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  std::unordered_map<const char*, sqlite3_stmt*> statements_;
};

}  // namespace abacus

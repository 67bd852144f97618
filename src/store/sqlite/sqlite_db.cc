#include "store/sqlite/sqlite_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <sqlite3.h>

#include <string>

#include "store/storage_full.h"

namespace abacus {

namespace {

// Maps a SQLite primary result code to the Status code callers can act on.
StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PROTOCOL:
      return StatusCode::kUnavailable;
    case SQLITE_FULL:
      return StatusCode::kResourceExhausted;  // Error() makes it StorageFullError
    case SQLITE_CONSTRAINT:
      return StatusCode::kAborted;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return StatusCode::kPermissionDenied;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return StatusCode::kFailedPrecondition;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

SqliteQuery::SqliteQuery(SqliteQuery&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), next_param_(other.next_param_), bind_rc_(other.bind_rc_) {
  other.stmt_ = nullptr;
}

SqliteQuery::~SqliteQuery() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

SqliteQuery& SqliteQuery::Bind(std::string_view text) {
  int rc = sqlite3_bind_text(stmt_, next_param_++, text.data(), static_cast<int>(text.size()),
                             SQLITE_STATIC);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteQuery& SqliteQuery::Bind(int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, next_param_++, value);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Result<bool> SqliteQuery::Step() {
  if (bind_rc_ != SQLITE_OK) return db_->Error(bind_rc_, "binding parameters");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, sqlite3_sql(stmt_));
}

Status SqliteQuery::Run() {
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::OK();
  }
}

int64_t SqliteQuery::ColumnInt(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string SqliteQuery::ColumnText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return std::string();
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path,
                                                                 bool read_only,
                                                                 int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX |
              (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  // A new database is created owner-only (0600): it holds token hashes, users, sealed secrets
  // and the audit log. SQLite gives its -wal and -shm files the database file's mode.
  if (!read_only && path != ":memory:" && !path.empty()) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open SQLite database '" + path + "': " +
                      (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return Status(CodeFor(rc) == StatusCode::kInternal ? StatusCode::kUnavailable : CodeFor(rc),
                  std::move(msg));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<SqliteConnection>(new SqliteConnection(db, path));
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

void SqliteConnection::OnWalCommit(std::function<void(int)>* on_commit) {
  sqlite3_wal_hook(
      db_,
      [](void* arg, sqlite3*, const char*, int frames) {
        (*static_cast<std::function<void(int)>*>(arg))(frames);
        return SQLITE_OK;
      },
      on_commit);
}

Status SqliteConnection::CheckpointPassive(int& frames, int& copied) {
  int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) return Error(rc, "checkpointing the WAL");
  return Status::OK();
}

Status SqliteConnection::Exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::OK();
  std::string msg = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return Status(CodeFor(rc), "SQLite database '" + path_ + "': " + msg);
}

Result<SqliteQuery> SqliteConnection::Query(const char* sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return Error(rc, std::string("preparing ") + sql);
    it = statements_.emplace(sql, stmt).first;
  }
  return SqliteQuery(*this, it->second);
}

int64_t SqliteConnection::Changes() const { return sqlite3_changes64(db_); }

int64_t SqliteConnection::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }

bool SqliteConnection::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

Status SqliteConnection::Error(int rc, std::string_view what) const {
  std::string msg = "SQLite database '" + path_ + "': " + std::string(what) + ": " +
                    sqlite3_errstr(rc);
  const char* detail = sqlite3_errmsg(db_);
  if (detail != nullptr && std::string_view(detail) != sqlite3_errstr(rc)) {
    msg += " (";
    msg += detail;
    msg += ")";
  }
  if ((rc & 0xff) == SQLITE_FULL) return StorageFullError(std::move(msg));  // not "retry" (429)
  return Status(CodeFor(rc), std::move(msg));
}

}  // namespace abacus

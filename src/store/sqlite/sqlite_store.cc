#include "store/sqlite/sqlite_store.h"

#include <cstdint>
#include <limits>

#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "store/group_txn.h"
#include "store/sqlite/sqlite_db.h"

namespace abacus {

namespace {

constexpr char kCreateMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_us INTEGER NOT NULL)";
constexpr char kSchemaVersion[] = "SELECT COALESCE(MAX(version), 0) FROM schema_migrations";
constexpr char kRecordMigration[] =
    "INSERT INTO schema_migrations (version, name, applied_us) VALUES (?, ?, ?)";

constexpr char kBegin[] = "BEGIN IMMEDIATE";
constexpr char kCommit[] = "COMMIT";
constexpr char kRollback[] = "ROLLBACK";
constexpr char kSavepoint[] = "SAVEPOINT batch";
constexpr char kRelease[] = "RELEASE batch";
constexpr char kRollbackTo[] = "ROLLBACK TO batch";

// No write statement has a RETURNING clause: SQLite collects RETURNING rows in an ephemeral
// table opened and closed per execution, which cost about as much as the write itself. The one
// writer (write_mu_) reads what it needs with a point lookup or from the connection instead.
constexpr char kInsertObject[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES (?, ?, 1, ?, ?)";
constexpr char kInsertNew[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES (?, ?, 1, ?, ?)"
    " ON CONFLICT (kind, key) DO NOTHING";
constexpr char kUpdateAt[] =
    "UPDATE objects SET version = version + 1, json = ?, updated_us = ?"
    " WHERE kind = ? AND key = ? AND version = ?";
constexpr char kDelete[] = "DELETE FROM objects WHERE kind = ? AND key = ?";
constexpr char kDeleteAt[] = "DELETE FROM objects WHERE kind = ? AND key = ? AND version = ?";
constexpr char kVersionOf[] = "SELECT version FROM objects WHERE kind = ? AND key = ?";
// seq is the rowid (INTEGER PRIMARY KEY): the connection's last insert rowid.
constexpr char kAppendEvent[] =
    "INSERT INTO events (object_kind, object_key, time_us, type, json) VALUES (?, ?, ?, ?, ?)";
constexpr char kNextJournalSeq[] = "SELECT COALESCE(MAX(seq), 0) + 1 FROM journal WHERE stream = ?";
constexpr char kAppendJournalAt[] = "INSERT INTO journal (stream, seq, time_us, json) VALUES (?, ?, ?, ?)";
constexpr char kPutMeta[] =
    "INSERT INTO meta (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value";

constexpr char kGet[] =
    "SELECT version, json, updated_us FROM objects WHERE kind = ? AND key = ?";
constexpr char kList[] =
    "SELECT key, version, json, updated_us FROM objects WHERE kind = ? ORDER BY key";
constexpr char kCount[] = "SELECT COUNT(*) FROM objects WHERE kind = ?";
constexpr char kEvents[] =
    "SELECT seq, time_us, type, json FROM events"
    " WHERE object_kind = ? AND object_key = ? AND seq > ? ORDER BY seq LIMIT ?";
constexpr char kJournal[] =
    "SELECT seq, time_us, json FROM journal WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?";
constexpr char kGetMeta[] = "SELECT value FROM meta WHERE key = ?";

constexpr char kKinds[] = "SELECT DISTINCT kind FROM objects ORDER BY kind";
constexpr char kStreams[] = "SELECT DISTINCT stream FROM journal ORDER BY stream";
constexpr char kEventsAfter[] =
    "SELECT seq, object_kind, object_key, time_us, type, json FROM events WHERE seq > ?"
    " ORDER BY seq LIMIT ?";
constexpr char kAllMeta[] = "SELECT key, value FROM meta ORDER BY key";
constexpr char kLoadObject[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES (?, ?, ?, ?, ?)";
// AUTOINCREMENT remembers the largest seq inserted, so later events continue after it.
constexpr char kLoadEvent[] =
    "INSERT INTO events (seq, object_kind, object_key, time_us, type, json)"
    " VALUES (?, ?, ?, ?, ?, ?)";
constexpr char kLoadJournal[] =
    "INSERT INTO journal (stream, seq, time_us, json) VALUES (?, ?, ?, ?)";
constexpr char kErase[] =
    "DELETE FROM objects; DELETE FROM events; DELETE FROM journal; DELETE FROM meta;"
    " DELETE FROM sqlite_sequence WHERE name = 'events'";


}  // namespace

SqliteStore::SqliteStore(std::string path, const Clock& clock)
    : path_(std::move(path)), clock_(clock) {}

SqliteStore::~SqliteStore() {
  if (checkpointer_.joinable()) {
    {
      MutexLock lock(checkpoint_mu_);
      checkpoint_stop_ = true;
    }
    checkpoint_cv_.notify_one();
    checkpointer_.join();
  }
  // The other connections go first so that closing the writer, the last connection,
  // checkpoints the WAL into the database file.
  checkpoint_conn_.reset();
  own_reader_.reset();
  writer_.reset();
}

void SqliteStore::Checkpointer() {
  MutexLock lock(checkpoint_mu_);
  while (true) {
    lock.Wait(checkpoint_cv_, [&]() REQUIRES(checkpoint_mu_) { return checkpoint_due_ || checkpoint_stop_; });
    if (checkpoint_stop_) return;
    checkpoint_due_ = false;
    lock.Unlock();
    int frames = 0, copied = 0;
    if (Status st = checkpoint_conn_->CheckpointPassive(frames, copied); !st.ok()) {
      ABACUS_LOG_WARN("{}", st.ToString());
    }
    lock.Lock();
  }
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       const SqliteStoreOptions& options) {
  const Clock& clock = options.clock ? *options.clock : SystemClock::Get();
  std::unique_ptr<SqliteStore> store(new SqliteStore(path, clock));
  MutexLock writer_lock(store->write_mu_);  // no other thread yet: uncontended
  ABACUS_ASSIGN_OR_RETURN(store->writer_,
                          SqliteConnection::Open(path, /*read_only=*/false,
                                                 options.busy_timeout_ms));
  SqliteConnection& db = *store->writer_;
  const bool in_memory = path == ":memory:";
  if (!in_memory) {
    ABACUS_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode = WAL"));
    ABACUS_ASSIGN_OR_RETURN(SqliteQuery mode, db.Query("PRAGMA journal_mode"));
    ABACUS_ASSIGN_OR_RETURN(bool row, mode.Step());
    if (!row || mode.ColumnText(0) != "wal") {
      return Unavailable("SQLite database '" + path +
                         "': cannot switch to WAL mode (is the file system local?)");
    }
  }
  ABACUS_RETURN_IF_ERROR(db.Exec(options.synchronous == SqliteSynchronous::kFull
                                     ? "PRAGMA synchronous = FULL"
                                     : "PRAGMA synchronous = NORMAL"));
  ABACUS_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));
  if (options.max_pages > 0) {
    ABACUS_RETURN_IF_ERROR(db.Exec("PRAGMA max_page_count = " + std::to_string(options.max_pages)));
  }
  ABACUS_RETURN_IF_ERROR(
      store->Migrate(options.migrations.empty() ? SqliteMigrations() : options.migrations));

  if (in_memory) {
    store->read_mu_ = &store->write_mu_;
    store->reader_ = store->writer_.get();
  } else {
    ABACUS_ASSIGN_OR_RETURN(store->own_reader_,
                            SqliteConnection::Open(path, /*read_only=*/true,
                                                   options.busy_timeout_ms));
    store->read_mu_ = &store->own_read_mu_;
    store->reader_ = store->own_reader_.get();
    // Checkpoints leave the commit path (see Checkpointer).
    ABACUS_ASSIGN_OR_RETURN(store->checkpoint_conn_,
                            SqliteConnection::Open(path, /*read_only=*/false, options.busy_timeout_ms));
    // A connection learns that the file is in WAL mode when it first reads it; until then a
    // checkpoint through it does nothing.
    ABACUS_RETURN_IF_ERROR(store->checkpoint_conn_->Exec("PRAGMA journal_mode = WAL"));
    ABACUS_RETURN_IF_ERROR(db.Exec("PRAGMA wal_autocheckpoint = 0"));
    SqliteStore* self = store.get();
    store->on_wal_commit_ = [self](int frames) {
      if (frames < kCheckpointFrames) return;
      {
        MutexLock lock(self->checkpoint_mu_);
        if (self->checkpoint_due_) return;
        self->checkpoint_due_ = true;
      }
      self->checkpoint_cv_.notify_one();
    };
    db.OnWalCommit(&store->on_wal_commit_);
    store->checkpointer_ = std::thread([self] {
      NameThisThread("abacus-ckpt");
      self->Checkpointer();
    });
  }
  return store;
}

Status SqliteStore::Migrate(std::span<const Migration> migrations) {
  ABACUS_RETURN_IF_ERROR(CheckMigrations(migrations));
  SqliteConnection& db = *writer_;
  ABACUS_RETURN_IF_ERROR(db.Exec(kCreateMigrations));
  const int latest = migrations.empty() ? 0 : migrations.back().version;

  // Reads the version inside the transaction, so that two processes opening the same new
  // file do not both apply a migration.
  auto current_version = [&]() -> Result<int> {
    ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kSchemaVersion));
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    return row ? static_cast<int>(q.ColumnInt(0)) : 0;
  };

  ABACUS_ASSIGN_OR_RETURN(schema_version_, current_version());
  if (schema_version_ > latest) {
    return FailedPrecondition("SQLite database '" + path_ + "' has schema version " +
                              std::to_string(schema_version_) +
                              ", newer than this abacus binary knows (" + std::to_string(latest) +
                              "); run a newer abacus or restore a backup");
  }
  for (const Migration& m : migrations) {
    if (m.version <= schema_version_) continue;
    ABACUS_RETURN_IF_ERROR(db.Exec(kBegin));
    auto apply = [&]() -> Status {
      ABACUS_ASSIGN_OR_RETURN(int current, current_version());
      if (current >= m.version) return Status::OK();  // another process got here first
      ABACUS_RETURN_IF_ERROR(db.Exec(m.sql));
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery record, db.Query(kRecordMigration));
      return record.Bind(int64_t{m.version}).Bind(m.name).Bind(ToMicros(clock_.Now())).Run();
    };
    Status s = apply();
    if (s.ok()) s = db.Exec(kCommit);
    if (!s.ok()) {
      if (db.InTransaction()) (void)db.Exec(kRollback);
      return s.WithContext("schema migration " + std::to_string(m.version) + " (" +
                           std::string(m.name) + ")");
    }
    schema_version_ = m.version;
  }
  return Status::OK();
}

Status SqliteStore::RunWriter(const char* sql) {
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, writer_->Query(sql));
  return q.Run();
}

Result<std::optional<int64_t>> SqliteStore::VersionOf(const std::string& kind, const std::string& key) {
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, writer_->Query(kVersionOf));
  q.Bind(kind).Bind(key);
  ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<int64_t>();
  return std::optional<int64_t>(q.ColumnInt(0));
}

Status SqliteStore::Conflict(const std::string& kind, const std::string& key, int64_t expected) {
  ABACUS_ASSIGN_OR_RETURN(std::optional<int64_t> found, VersionOf(kind, key));
  std::string msg = kind + "/" + key + ": expected version " + std::to_string(expected) + ", ";
  msg += found ? "found version " + std::to_string(*found) : std::string("not found");
  return Aborted(std::move(msg));
}

Status SqliteStore::ApplyOp(const WriteOp& op, int64_t now_us, int64_t& assigned) {
  SqliteConnection& db = *writer_;
  if (const auto* put = std::get_if<PutOp>(&op)) {
    // An unconditional put expects whatever version is stored now (none: it inserts).
    int64_t expected = put->expected_version.value_or(0);
    if (!put->expected_version) {
      ABACUS_ASSIGN_OR_RETURN(std::optional<int64_t> stored, VersionOf(put->kind, put->key));
      expected = stored.value_or(0);
    }
    if (expected == 0) {
      // Unconditional: the lookup above saw no row, and only this writer inserts.
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(put->expected_version ? kInsertNew : kInsertObject));
      ABACUS_RETURN_IF_ERROR(q.Bind(put->kind).Bind(put->key).Bind(put->json).Bind(now_us).Run());
    } else {
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kUpdateAt));
      ABACUS_RETURN_IF_ERROR(q.Bind(put->json).Bind(now_us).Bind(put->kind).Bind(put->key).Bind(expected).Run());
    }
    if (db.Changes() != 1) return Conflict(put->kind, put->key, expected);
    assigned = expected + 1;
    return Status::OK();
  }
  if (const auto* del = std::get_if<DeleteOp>(&op)) {
    ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(del->expected_version ? kDeleteAt : kDelete));
    q.Bind(del->kind).Bind(del->key);
    if (del->expected_version) q.Bind(*del->expected_version);
    ABACUS_RETURN_IF_ERROR(q.Run());
    if (del->expected_version && db.Changes() == 0) {
      return Conflict(del->kind, del->key, *del->expected_version);
    }
    return Status::OK();
  }
  if (const auto* event = std::get_if<EventOp>(&op)) {
    ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kAppendEvent));
    q.Bind(event->object_kind).Bind(event->object_key).Bind(event->time_us).Bind(event->type);
    ABACUS_RETURN_IF_ERROR(q.Bind(event->json).Run());
    assigned = db.LastInsertRowid();
    return Status::OK();
  }
  if (const auto* entry = std::get_if<JournalOp>(&op)) {
    {
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery next, db.Query(kNextJournalSeq));
      next.Bind(entry->stream);
      ABACUS_ASSIGN_OR_RETURN(bool row, next.Step());
      if (!row) return Internal("the next journal seq query returned no row");
      assigned = next.ColumnInt(0);
    }
    // The batch fails and its transaction (or savepoint) rolls back what it wrote before.
    if (entry->expected_seq && *entry->expected_seq != assigned) return JournalSeqConflict(*entry, assigned);
    ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kAppendJournalAt));
    return q.Bind(entry->stream).Bind(assigned).Bind(entry->time_us).Bind(entry->json).Run();
  }
  if (const auto* meta = std::get_if<MetaOp>(&op)) {
    ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kPutMeta));
    return q.Bind(meta->key).Bind(meta->value).Run();
  }
  return Internal("unknown write op");
}

Status SqliteStore::ApplyBatch(const WriteBatch& batch, int64_t now_us, CommitResult& result) {
  if (batch.fence()) ABACUS_RETURN_IF_ERROR(CheckBatchFence(*batch.fence()));
  result.assigned.assign(batch.size(), 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    ABACUS_RETURN_IF_ERROR(ApplyOp(batch.ops()[i], now_us, result.assigned[i]));
  }
  return Status::OK();
}

void SqliteStore::CommitGroup(std::span<const WriteBatch* const> batches,
                              std::span<CommitResult* const> results,
                              std::span<Status> statuses) {
  // Validate outside the lock; only well-formed, non-empty batches enter the transaction.
  std::vector<size_t> members = SelectGroupMembers(batches, results, statuses);
  if (members.empty()) return;
  MutexLock lock(write_mu_);
  const int64_t now_us = ToMicros(clock_.Now());
  GroupTxn txn;
  txn.exec = [this](TxnStatement st) REQUIRES(write_mu_) {
    switch (st) {
      case TxnStatement::kBegin: return RunWriter(kBegin);
      case TxnStatement::kSavepoint: return RunWriter(kSavepoint);
      case TxnStatement::kRollbackToSavepoint: return RunWriter(kRollbackTo);
      case TxnStatement::kReleaseSavepoint: return RunWriter(kRelease);
      case TxnStatement::kCommit: return RunWriter(kCommit);
      case TxnStatement::kRollback: break;
    }
    return RunWriter(kRollback);
  };
  txn.in_transaction = [this]() REQUIRES(write_mu_) { return writer_->InTransaction(); };
  txn.apply = [this, now_us](const WriteBatch& b, CommitResult& r) REQUIRES(write_mu_) {
    return ApplyBatch(b, now_us, r);
  };
  RunGroupTransaction(txn, batches, results, statuses, members);
}

Result<std::optional<ObjectRecord>> SqliteStore::Get(std::string_view kind,
                                                     std::string_view key) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kGet));
  q.Bind(kind).Bind(key);
  ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<ObjectRecord>();
  return std::optional<ObjectRecord>(ObjectRecord{std::string(kind), std::string(key),
                                                  q.ColumnInt(0), q.ColumnText(1),
                                                  q.ColumnInt(2)});
}

Result<std::vector<ObjectRecord>> SqliteStore::List(std::string_view kind) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kList));
  q.Bind(kind);
  std::vector<ObjectRecord> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(ObjectRecord{std::string(kind), q.ColumnText(0), q.ColumnInt(1),
                               q.ColumnText(2), q.ColumnInt(3)});
  }
  return out;
}

Result<int64_t> SqliteStore::Count(std::string_view kind) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kCount));
  q.Bind(kind);
  ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.ColumnInt(0) : int64_t{0};
}

Result<std::vector<EventRecord>> SqliteStore::Events(std::string_view kind, std::string_view key,
                                                     int64_t after_seq, size_t limit) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kEvents));
  q.Bind(kind).Bind(key).Bind(after_seq).Bind(LimitOrAll(limit));
  std::vector<EventRecord> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(EventRecord{q.ColumnInt(0), std::string(kind), std::string(key),
                              q.ColumnInt(1), q.ColumnText(2), q.ColumnText(3)});
  }
  return out;
}

Result<std::vector<JournalRecord>> SqliteStore::Journal(std::string_view stream,
                                                        int64_t after_seq, size_t limit) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kJournal));
  q.Bind(stream).Bind(after_seq).Bind(LimitOrAll(limit));
  std::vector<JournalRecord> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(
        JournalRecord{std::string(stream), q.ColumnInt(0), q.ColumnInt(1), q.ColumnText(2)});
  }
  return out;
}

Result<std::optional<std::string>> SqliteStore::GetMeta(std::string_view key) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kGetMeta));
  q.Bind(key);
  ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(q.ColumnText(0));
}

// --- StoreCopyAccess ---

Result<std::vector<std::string>> SqliteStore::ObjectKinds() {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kKinds));
  std::vector<std::string> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(q.ColumnText(0));
  }
  return out;
}

Result<std::vector<std::string>> SqliteStore::JournalStreams() {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kStreams));
  std::vector<std::string> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(q.ColumnText(0));
  }
  return out;
}

Result<std::vector<EventRecord>> SqliteStore::EventsAfter(int64_t after_seq, size_t limit) {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kEventsAfter));
  q.Bind(after_seq).Bind(LimitOrAll(limit));
  std::vector<EventRecord> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(EventRecord{q.ColumnInt(0), q.ColumnText(1), q.ColumnText(2), q.ColumnInt(3),
                              q.ColumnText(4), q.ColumnText(5)});
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> SqliteStore::AllMeta() {
  MutexLock lock(*read_mu_);
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, reader_->Query(kAllMeta));
  std::vector<std::pair<std::string, std::string>> out;
  while (true) {
    ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.emplace_back(q.ColumnText(0), q.ColumnText(1));
  }
  return out;
}

Status SqliteStore::InWriteTransaction(const std::function<Status()>& body) {
  MutexLock lock(write_mu_);
  ABACUS_RETURN_IF_ERROR(RunWriter(kBegin));
  Status s = body();
  if (s.ok()) s = RunWriter(kCommit);
  if (!s.ok() && writer_->InTransaction()) (void)RunWriter(kRollback);
  return s;
}

Status SqliteStore::Load(const StoreRecords& records) {
  return InWriteTransaction([&]() REQUIRES(write_mu_) -> Status {
    SqliteConnection& db = *writer_;
    for (const ObjectRecord& o : records.objects) {
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kLoadObject));
      ABACUS_RETURN_IF_ERROR(
          q.Bind(o.kind).Bind(o.key).Bind(o.version).Bind(o.json).Bind(o.updated_us).Run());
    }
    for (const EventRecord& e : records.events) {
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kLoadEvent));
      ABACUS_RETURN_IF_ERROR(q.Bind(e.seq)
                                 .Bind(e.object_kind)
                                 .Bind(e.object_key)
                                 .Bind(e.time_us)
                                 .Bind(e.type)
                                 .Bind(e.json)
                                 .Run());
    }
    for (const JournalRecord& j : records.journal) {
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kLoadJournal));
      ABACUS_RETURN_IF_ERROR(q.Bind(j.stream).Bind(j.seq).Bind(j.time_us).Bind(j.json).Run());
    }
    for (const auto& [key, value] : records.meta) {
      ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, db.Query(kPutMeta));
      ABACUS_RETURN_IF_ERROR(q.Bind(key).Bind(value).Run());
    }
    return Status::OK();
  });
}

Status SqliteStore::Erase() {
  return InWriteTransaction([&]() REQUIRES(write_mu_) { return writer_->Exec(kErase); });
}

}  // namespace abacus

#include "store/postgres/postgres_store.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>

#include "common/blocking_region.h"
#include "common/mutex.h"
#include "store/group_txn.h"
#include "store/postgres/pg_conn.h"

namespace abacus {

namespace {

// Serializes schema migrations of every Abacus process on one database ("abac" in ASCII).
constexpr char kLock[] = "SELECT pg_advisory_lock(1633837411)";
constexpr char kUnlock[] = "SELECT pg_advisory_unlock(1633837411)";
constexpr char kCreateMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_us BIGINT NOT NULL)";
constexpr char kSchemaVersion[] = "SELECT COALESCE(MAX(version), 0) FROM schema_migrations";
constexpr char kRecordMigration[] =
    "INSERT INTO schema_migrations (version, name, applied_us) VALUES ($1, $2, $3)";

constexpr char kUpsert[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES ($1, $2, 1, $3, $4)"
    " ON CONFLICT (kind, key) DO UPDATE SET version = objects.version + 1,"
    " json = excluded.json, updated_us = excluded.updated_us RETURNING version";
constexpr char kInsertNew[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES ($1, $2, 1, $3, $4)"
    " ON CONFLICT (kind, key) DO NOTHING RETURNING version";
constexpr char kUpdateAt[] =
    "UPDATE objects SET version = version + 1, json = $1, updated_us = $2"
    " WHERE kind = $3 AND key = $4 AND version = $5 RETURNING version";
// The fast path's variants of the conditional writes: a failed version check raises an error
// (unique_violation, or AB001 from abacus_version_conflict()) instead of returning no row.
constexpr char kInsertNewOrFail[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES ($1, $2, 1, $3, $4)"
    " RETURNING version";
constexpr char kUpdateAtOrFail[] =
    "WITH u AS (UPDATE objects SET version = version + 1, json = $1, updated_us = $2"
    " WHERE kind = $3 AND key = $4 AND version = $5 RETURNING version)"
    " SELECT version FROM u UNION ALL"
    " SELECT abacus_version_conflict() WHERE NOT EXISTS (SELECT 1 FROM u)";
constexpr char kDeleteAtOrFail[] =
    "WITH d AS (DELETE FROM objects WHERE kind = $1 AND key = $2 AND version = $3 RETURNING 1)"
    " SELECT 1::BIGINT FROM d UNION ALL"
    " SELECT abacus_version_conflict() WHERE NOT EXISTS (SELECT 1 FROM d)";
constexpr char kDelete[] = "DELETE FROM objects WHERE kind = $1 AND key = $2";
constexpr char kDeleteAt[] = "DELETE FROM objects WHERE kind = $1 AND key = $2 AND version = $3";
constexpr char kVersionOf[] = "SELECT version FROM objects WHERE kind = $1 AND key = $2";
// The counter row's lock orders concurrent writers; its update rolls back with the batch.
constexpr char kAppendEvent[] =
    "WITH next AS (UPDATE seq_counters SET value = value + 1 WHERE name = 'events'"
    " RETURNING value)"
    " INSERT INTO events (seq, object_kind, object_key, time_us, type, json)"
    " SELECT value, $1, $2, $3, $4, $5 FROM next RETURNING seq";
constexpr char kAppendJournal[] =
    "WITH head AS (INSERT INTO journal_heads (stream, last_seq) VALUES ($1, 1)"
    " ON CONFLICT (stream) DO UPDATE SET last_seq = journal_heads.last_seq + 1"
    " RETURNING last_seq)"
    " INSERT INTO journal (stream, seq, time_us, json) SELECT $1, last_seq, $2, $3 FROM head"
    " RETURNING seq";
// kAppendJournal for an entry that must get seq $4: no row otherwise (the batch then fails and
// rolls back the head row's update); the OrFail form raises AB001 instead (pipelined path).
constexpr char kAppendJournalAt[] =
    "WITH head AS (INSERT INTO journal_heads (stream, last_seq) VALUES ($1, 1)"
    " ON CONFLICT (stream) DO UPDATE SET last_seq = journal_heads.last_seq + 1"
    " RETURNING last_seq)"
    " INSERT INTO journal (stream, seq, time_us, json) SELECT $1, last_seq, $2, $3 FROM head"
    " WHERE last_seq = $4 RETURNING seq";
constexpr char kAppendJournalAtOrFail[] =
    "WITH head AS (INSERT INTO journal_heads (stream, last_seq) VALUES ($1, 1)"
    " ON CONFLICT (stream) DO UPDATE SET last_seq = journal_heads.last_seq + 1"
    " RETURNING last_seq)"
    " INSERT INTO journal (stream, seq, time_us, json)"
    " SELECT $1, CASE WHEN last_seq = $4 THEN last_seq ELSE abacus_version_conflict() END, $2, $3 FROM head"
    " RETURNING seq";
constexpr char kPutMeta[] =
    "INSERT INTO meta (key, value) VALUES ($1, $2)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value";

constexpr char kGet[] =
    "SELECT version, json, updated_us FROM objects WHERE kind = $1 AND key = $2";
constexpr char kList[] =
    "SELECT key, version, json, updated_us FROM objects WHERE kind = $1 ORDER BY key";
constexpr char kCount[] = "SELECT COUNT(*) FROM objects WHERE kind = $1";
constexpr char kEvents[] =
    "SELECT seq, time_us, type, json FROM events"
    " WHERE object_kind = $1 AND object_key = $2 AND seq > $3 ORDER BY seq LIMIT $4";
constexpr char kJournal[] =
    "SELECT seq, time_us, json FROM journal WHERE stream = $1 AND seq > $2 ORDER BY seq"
    " LIMIT $3";
constexpr char kGetMeta[] = "SELECT value FROM meta WHERE key = $1";
// A fenced batch's first statement. The fast path raises AB002 on a stale token (the COMMIT
// behind it is skipped); the careful path reads the token and says which one is current.
constexpr char kCheckFenceOrFail[] = "SELECT abacus_check_fence($1, $2)";
constexpr char kLeaseTokenForShare[] = "SELECT token FROM leader_lease WHERE name = $1 FOR SHARE";

constexpr char kKinds[] = "SELECT DISTINCT kind FROM objects ORDER BY kind";
constexpr char kStreams[] = "SELECT DISTINCT stream FROM journal ORDER BY stream";
constexpr char kEventsAfter[] =
    "SELECT seq, object_kind, object_key, time_us, type, json FROM events WHERE seq > $1"
    " ORDER BY seq LIMIT $2";
constexpr char kAllMeta[] = "SELECT key, value FROM meta ORDER BY key";
constexpr char kLoadObject[] =
    "INSERT INTO objects (kind, key, version, json, updated_us) VALUES ($1, $2, $3, $4, $5)";
constexpr char kLoadEvent[] =
    "INSERT INTO events (seq, object_kind, object_key, time_us, type, json)"
    " VALUES ($1, $2, $3, $4, $5, $6)";
constexpr char kLoadJournal[] =
    "INSERT INTO journal (stream, seq, time_us, json) VALUES ($1, $2, $3, $4)";
constexpr char kAdvanceEvents[] =
    "UPDATE seq_counters SET value = GREATEST(value, $1) WHERE name = 'events'";
constexpr char kAdvanceStream[] =
    "INSERT INTO journal_heads (stream, last_seq) VALUES ($1, $2) ON CONFLICT (stream)"
    " DO UPDATE SET last_seq = GREATEST(journal_heads.last_seq, excluded.last_seq)";
constexpr char kErase[] =
    "TRUNCATE objects, events, journal, journal_heads, meta;"
    " UPDATE seq_counters SET value = 0";


// Returns `url` with any password removed, for messages before a connection exists.
std::string Redact(const std::string& url) {
  std::string out = url;
  size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    size_t start = scheme + 3;
    size_t at = out.find('@', start);
    size_t slash = out.find('/', start);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.erase(colon, at - colon);
    }
  }
  if (size_t q = out.find('?'); q != std::string::npos) out.erase(q);  // may hold password=
  return out;
}

}  // namespace

class PostgresStore::Reader {
 public:
  Reader(PostgresStore* store, std::unique_ptr<PgConnection> conn)
      : store_(store), conn_(std::move(conn)) {}
  Reader(Reader&& other) noexcept = default;
  Reader& operator=(Reader&&) = delete;
  ~Reader() {
    if (store_ == nullptr || conn_ == nullptr) return;
    {
      MutexLock lock(store_->read_mu_);
      store_->idle_readers_.push_back(std::move(conn_));
    }
    store_->read_cv_.notify_one();
  }
  PgConnection* operator->() { return conn_.get(); }

 private:
  PostgresStore* store_;
  std::unique_ptr<PgConnection> conn_;
};

PostgresStore::PostgresStore(std::string url, const Clock& clock, int max_readers)
    : url_(std::move(url)), clock_(clock), max_readers_(std::max(1, max_readers)) {}

PostgresStore::~PostgresStore() = default;

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                           const PostgresStoreOptions& options) {
  const Clock& clock = options.clock ? *options.clock : SystemClock::Get();
  std::unique_ptr<PostgresStore> store(new PostgresStore(url, clock, options.max_readers));
  {
    MutexLock lock(store->write_mu_);  // no other thread yet: uncontended
    ABACUS_ASSIGN_OR_RETURN(store->writer_, PgConnection::Open(url, Redact(url)));
    store->describe_ = store->writer_->Describe();
    ABACUS_RETURN_IF_ERROR(
        store->Migrate(options.migrations.empty() ? PostgresMigrations() : options.migrations));
  }
  return store;
}

Result<PostgresStore::Reader> PostgresStore::BorrowReader() {
  BlockingRegion waiting;  // for a free connection
  MutexLock lock(read_mu_);
  lock.Wait(read_cv_, [&]() REQUIRES(read_mu_) { return !idle_readers_.empty() || open_readers_ < max_readers_; });
  if (!idle_readers_.empty()) {
    std::unique_ptr<PgConnection> conn = std::move(idle_readers_.back());
    idle_readers_.pop_back();
    lock.Unlock();
    if (Status s = conn->EnsureConnected(); !s.ok()) {
      // Keep the (broken) connection in the pool: the next borrower retries the reconnect.
      Reader give_back(this, std::move(conn));
      return s;
    }
    return Reader(this, std::move(conn));
  }
  ++open_readers_;
  lock.Unlock();
  auto conn = PgConnection::Open(url_, describe_);
  if (!conn.ok()) {
    {
      MutexLock relock(read_mu_);
      --open_readers_;
    }
    read_cv_.notify_one();
    return conn.status();
  }
  return Reader(this, std::move(conn).value());
}

Result<PgResult> PostgresStore::RunOnReader(const char* sql, const PgParams& params) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  return db->Read(sql, params);
}

Status PostgresStore::Migrate(std::span<const Migration> migrations) {
  ABACUS_RETURN_IF_ERROR(CheckMigrations(migrations));
  PgConnection& db = *writer_;
  ABACUS_RETURN_IF_ERROR(db.Exec(kLock));
  auto migrate = [&]() -> Status {
    ABACUS_RETURN_IF_ERROR(db.Exec(kCreateMigrations));
    const int latest = migrations.empty() ? 0 : migrations.back().version;
    ABACUS_ASSIGN_OR_RETURN(PgResult version, db.Query(kSchemaVersion));
    schema_version_ = static_cast<int>(version.Int(0, 0));
    if (schema_version_ > latest) {
      return FailedPrecondition("PostgreSQL database " + describe_ + " has schema version " +
                                std::to_string(schema_version_) +
                                ", newer than this abacus binary knows (" +
                                std::to_string(latest) +
                                "); run a newer abacus or restore a backup");
    }
    for (const Migration& m : migrations) {
      if (m.version <= schema_version_) continue;
      Status s = db.Exec("BEGIN");
      if (s.ok()) s = db.Exec(m.sql);
      if (s.ok()) {
        s = db.Query(kRecordMigration, PgParams()
                                           .Add(int64_t{m.version})
                                           .Add(m.name)
                                           .Add(ToMicros(clock_.Now())))
                .status();
      }
      if (s.ok()) s = db.Exec("COMMIT");
      if (!s.ok()) {
        if (db.InTransaction()) (void)db.Exec("ROLLBACK");
        return s.WithContext("schema migration " + std::to_string(m.version) + " (" +
                             std::string(m.name) + ")");
      }
      schema_version_ = m.version;
    }
    return Status::OK();
  };
  Status s = migrate();
  Status unlocked = db.Exec(kUnlock);
  return s.ok() ? unlocked : s;
}

Status PostgresStore::Conflict(const std::string& kind, const std::string& key,
                               int64_t expected) {
  ABACUS_ASSIGN_OR_RETURN(PgResult r, writer_->Query(kVersionOf, PgParams().Add(kind).Add(key)));
  std::string msg = kind + "/" + key + ": expected version " + std::to_string(expected) + ", ";
  msg += r.rows() > 0 ? "found version " + std::to_string(r.Int(0, 0)) : std::string("not found");
  return Aborted(std::move(msg));
}

namespace {

// The statement that applies `op`; with `or_fail`, one whose failed version check is an error.
PgQuery OpQuery(const WriteOp& op, int64_t now_us, bool or_fail = false) {
  PgQuery q{nullptr, {}};
  if (const auto* put = std::get_if<PutOp>(&op)) {
    const bool conditional = put->expected_version.has_value();
    const int64_t expected = put->expected_version.value_or(0);
    q.sql = !conditional ? kUpsert : expected == 0 ? kInsertNew : kUpdateAt;
    if (or_fail && q.sql == kInsertNew) q.sql = kInsertNewOrFail;
    if (or_fail && q.sql == kUpdateAt) q.sql = kUpdateAtOrFail;
    if (q.sql == kUpdateAt || q.sql == kUpdateAtOrFail) {
      q.params.Add(put->json).Add(now_us).Add(put->kind).Add(put->key).Add(expected);
    } else {
      q.params.Add(put->kind).Add(put->key).Add(put->json).Add(now_us);
    }
  } else if (const auto* del = std::get_if<DeleteOp>(&op)) {
    q.sql = del->expected_version ? (or_fail ? kDeleteAtOrFail : kDeleteAt) : kDelete;
    q.params.Add(del->kind).Add(del->key);
    if (del->expected_version) q.params.Add(*del->expected_version);
  } else if (const auto* event = std::get_if<EventOp>(&op)) {
    q.sql = kAppendEvent;
    q.params.Add(event->object_kind).Add(event->object_key).Add(event->time_us).Add(event->type);
    q.params.Add(event->json);
  } else if (const auto* entry = std::get_if<JournalOp>(&op)) {
    q.sql = !entry->expected_seq ? kAppendJournal : or_fail ? kAppendJournalAtOrFail : kAppendJournalAt;
    q.params.Add(entry->stream).Add(entry->time_us).Add(entry->json);
    if (entry->expected_seq) q.params.Add(*entry->expected_seq);
  } else if (const auto* meta = std::get_if<MetaOp>(&op)) {
    q.sql = kPutMeta;
    q.params.Add(meta->key).Add(meta->value);
  }
  return q;
}

// Reads what `op`'s statement assigned; false when a condition did not hold (a version
// conflict) or no seq came back.
bool OpApplied(const WriteOp& op, const PgResult& r, int64_t& assigned) {
  if (std::holds_alternative<PutOp>(op) || std::holds_alternative<EventOp>(op) ||
      std::holds_alternative<JournalOp>(op)) {
    if (r.rows() == 0) return false;
    assigned = r.Int(0, 0);
    return true;
  }
  if (const auto* del = std::get_if<DeleteOp>(&op)) {
    return !del->expected_version || r.affected() > 0;
  }
  return true;
}

}  // namespace

Status PostgresStore::ApplyOp(const WriteOp& op, int64_t now_us, int64_t& assigned) {
  PgQuery q = OpQuery(op, now_us);
  if (q.sql == nullptr) return Internal("unknown write op");
  ABACUS_ASSIGN_OR_RETURN(PgResult r, writer_->Query(q.sql, q.params));
  if (OpApplied(op, r, assigned)) return Status::OK();
  if (const auto* put = std::get_if<PutOp>(&op)) {
    return Conflict(put->kind, put->key, put->expected_version.value_or(0));
  }
  if (const auto* del = std::get_if<DeleteOp>(&op)) {
    return Conflict(del->kind, del->key, *del->expected_version);
  }
  if (const auto* entry = std::get_if<JournalOp>(&op); entry != nullptr && entry->expected_seq) {
    return Aborted("journal " + entry->stream + ": entry expected as seq " + std::to_string(*entry->expected_seq) +
                   " cannot get it (the stream was written by someone else)");
  }
  return Internal("appending an event or journal entry returned no seq (is the schema intact?)");
}

PostgresStore::FastPath PostgresStore::TryPipelinedGroup(
    std::span<const WriteBatch* const> batches, const std::vector<size_t>& members,
    int64_t now_us, std::vector<CommitResult>& staged, Status& lost) {
  std::vector<PgQuery> queries;
  queries.push_back(PgQuery{"BEGIN", {}, false});
  for (size_t i : members) {
    if (const auto& fence = batches[i]->fence()) {
      queries.push_back(PgQuery{kCheckFenceOrFail, PgParams().Add(fence->name).Add(fence->token)});
    }
    for (const WriteOp& op : batches[i]->ops()) queries.push_back(OpQuery(op, now_us, true));
  }
  queries.push_back(PgQuery{"COMMIT", {}, false});
  std::vector<PgResult> results;
  Status s = writer_->Pipeline(queries, results);
  if (!s.ok()) {
    // The server refused a statement (a conflict, bad data): everything after it, COMMIT
    // included, was skipped. A lost connection is different: the COMMIT may have run.
    if (s.code() != StatusCode::kUnavailable) return FastPath::kRedo;
    lost = s;
    return FastPath::kUnknown;
  }
  size_t next = 1;  // results[0] is BEGIN's
  for (size_t i : members) {
    if (batches[i]->fence()) ++next;  // the fence check's result
    const auto& ops = batches[i]->ops();
    staged[i].assigned.assign(ops.size(), 0);
    for (size_t k = 0; k < ops.size(); ++k, ++next) {
      if (!OpApplied(ops[k], results[next], staged[i].assigned[k])) {
        lost = Internal("a pipelined statement applied nothing yet raised no error");
        return FastPath::kUnknown;
      }
    }
  }
  return FastPath::kCommitted;
}

Status PostgresStore::CheckBatchFence(const LeaseFence& fence) {
  ABACUS_ASSIGN_OR_RETURN(PgResult r, writer_->Query(kLeaseTokenForShare, PgParams().Add(fence.name)));
  return CheckFence(fence, r.rows() > 0 ? std::optional<int64_t>(r.Int(0, 0)) : std::nullopt);
}

Status PostgresStore::ApplyBatch(const WriteBatch& batch, int64_t now_us, CommitResult& result) {
  if (batch.fence()) ABACUS_RETURN_IF_ERROR(CheckBatchFence(*batch.fence()));
  result.assigned.assign(batch.size(), 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    ABACUS_RETURN_IF_ERROR(ApplyOp(batch.ops()[i], now_us, result.assigned[i]));
  }
  return Status::OK();
}

void PostgresStore::CommitGroup(std::span<const WriteBatch* const> batches,
                                std::span<CommitResult* const> results,
                                std::span<Status> statuses) {
  // 1) Validate outside the lock; only well-formed, non-empty batches enter the transaction.
  std::vector<size_t> members = SelectGroupMembers(batches, results, statuses);
  if (members.empty()) return;

  MutexLock lock(write_mu_);
  PgConnection& db = *writer_;
  const int64_t now_us = ToMicros(clock_.Now());
  GroupTxn txn;
  txn.exec = [&db](TxnStatement st) {
    switch (st) {
      case TxnStatement::kBegin: return db.Exec("BEGIN");
      case TxnStatement::kSavepoint: return db.Exec("SAVEPOINT batch");
      case TxnStatement::kRollbackToSavepoint: return db.Exec("ROLLBACK TO SAVEPOINT batch");
      case TxnStatement::kReleaseSavepoint: return db.Exec("RELEASE SAVEPOINT batch");
      case TxnStatement::kCommit: return db.Exec("COMMIT");
      case TxnStatement::kRollback: break;
    }
    return db.Exec("ROLLBACK");
  };
  txn.in_transaction = [&db] { return db.InTransaction(); };
  txn.apply = [this, now_us](const WriteBatch& b, CommitResult& r) REQUIRES(write_mu_) {
    return ApplyBatch(b, now_us, r);
  };

  if (Status s = db.EnsureConnected(); !s.ok()) return FailGroup(txn, members, statuses, s);

  // 2a) The fast path: BEGIN, every statement of the group and COMMIT, pipelined (one round
  //     trip per 256 statements). If any statement fails — a version conflict, an SQL error —
  //     the server skips the rest, COMMIT included: roll back and take the careful path, which
  //     isolates the failing batches. If the connection was lost, whether COMMIT ran is unknown:
  //     the group fails with Unavailable (never acknowledged, never redone).
  std::vector<CommitResult> staged(batches.size());
  Status lost;
  switch (TryPipelinedGroup(batches, members, now_us, staged, lost)) {
    case FastPath::kCommitted:
      ++pipelined_groups_;
      for (size_t i : members) {
        if (i < results.size() && results[i] != nullptr) *results[i] = std::move(staged[i]);
      }
      return;
    case FastPath::kUnknown:
      return FailGroup(txn, members, statuses, lost);
    case FastPath::kRedo:
      ++redone_groups_;
      break;
  }
  if (db.InTransaction()) (void)db.Exec("ROLLBACK");
  if (Status s = db.EnsureConnected(); !s.ok()) return FailGroup(txn, members, statuses, s);

  // 2b) One statement at a time, one savepoint per batch (with several members) so that a
  //     failing batch (a conflict, or an SQL error that aborts the transaction) rolls back alone.
  RunGroupTransaction(txn, batches, results, statuses, members);
}

Result<std::optional<ObjectRecord>> PostgresStore::Get(std::string_view kind,
                                                       std::string_view key) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kGet, PgParams().Add(kind).Add(key)));
  if (r.rows() == 0) return std::optional<ObjectRecord>();
  return std::optional<ObjectRecord>(ObjectRecord{std::string(kind), std::string(key),
                                                  r.Int(0, 0), r.Text(0, 1), r.Int(0, 2)});
}

Result<std::vector<ObjectRecord>> PostgresStore::List(std::string_view kind) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kList, PgParams().Add(kind)));
  std::vector<ObjectRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(ObjectRecord{std::string(kind), r.Text(i, 0), r.Int(i, 1), r.Text(i, 2),
                               r.Int(i, 3)});
  }
  return out;
}

Result<int64_t> PostgresStore::Count(std::string_view kind) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kCount, PgParams().Add(kind)));
  return r.rows() > 0 ? r.Int(0, 0) : int64_t{0};
}

Result<std::vector<EventRecord>> PostgresStore::Events(std::string_view kind,
                                                       std::string_view key, int64_t after_seq,
                                                       size_t limit) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(
      PgResult r,
      db->Read(kEvents, PgParams().Add(kind).Add(key).Add(after_seq).Add(LimitOrAll(limit))));
  std::vector<EventRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(EventRecord{r.Int(i, 0), std::string(kind), std::string(key), r.Int(i, 1),
                              r.Text(i, 2), r.Text(i, 3)});
  }
  return out;
}

Result<std::vector<JournalRecord>> PostgresStore::Journal(std::string_view stream,
                                                          int64_t after_seq, size_t limit) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(
      PgResult r, db->Read(kJournal, PgParams().Add(stream).Add(after_seq).Add(LimitOrAll(limit))));
  std::vector<JournalRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(JournalRecord{std::string(stream), r.Int(i, 0), r.Int(i, 1), r.Text(i, 2)});
  }
  return out;
}

Result<std::optional<std::string>> PostgresStore::GetMeta(std::string_view key) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kGetMeta, PgParams().Add(key)));
  if (r.rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(r.Text(0, 0));
}

// --- StoreCopyAccess ---

Result<std::vector<std::string>> PostgresStore::ObjectKinds() {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kKinds));
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.Text(i, 0));
  return out;
}

Result<std::vector<std::string>> PostgresStore::JournalStreams() {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kStreams));
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.Text(i, 0));
  return out;
}

Result<std::vector<EventRecord>> PostgresStore::EventsAfter(int64_t after_seq, size_t limit) {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r,
                          db->Read(kEventsAfter, PgParams().Add(after_seq).Add(LimitOrAll(limit))));
  std::vector<EventRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(EventRecord{r.Int(i, 0), r.Text(i, 1), r.Text(i, 2), r.Int(i, 3), r.Text(i, 4),
                              r.Text(i, 5)});
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> PostgresStore::AllMeta() {
  ABACUS_ASSIGN_OR_RETURN(Reader db, BorrowReader());
  ABACUS_ASSIGN_OR_RETURN(PgResult r, db->Read(kAllMeta));
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < r.rows(); ++i) out.emplace_back(r.Text(i, 0), r.Text(i, 1));
  return out;
}

Status PostgresStore::InWriteTransaction(const std::function<Status()>& body) {
  MutexLock lock(write_mu_);
  PgConnection& db = *writer_;
  ABACUS_RETURN_IF_ERROR(db.EnsureConnected());
  ABACUS_RETURN_IF_ERROR(db.Exec("BEGIN"));
  Status s = body();
  if (s.ok()) s = db.Exec("COMMIT");
  if (!s.ok() && db.InTransaction()) (void)db.Exec("ROLLBACK");
  return s;
}

Status PostgresStore::Load(const StoreRecords& records) {
  return InWriteTransaction([&]() REQUIRES(write_mu_) -> Status {
    PgConnection& db = *writer_;
    for (const ObjectRecord& o : records.objects) {
      ABACUS_RETURN_IF_ERROR(db.Query(kLoadObject, PgParams()
                                                       .Add(o.kind)
                                                       .Add(o.key)
                                                       .Add(o.version)
                                                       .Add(o.json)
                                                       .Add(o.updated_us))
                                 .status());
    }
    int64_t last_event = 0;
    for (const EventRecord& e : records.events) {
      ABACUS_RETURN_IF_ERROR(db.Query(kLoadEvent, PgParams()
                                                      .Add(e.seq)
                                                      .Add(e.object_kind)
                                                      .Add(e.object_key)
                                                      .Add(e.time_us)
                                                      .Add(e.type)
                                                      .Add(e.json))
                                 .status());
      last_event = std::max(last_event, e.seq);
    }
    if (last_event > 0) {
      ABACUS_RETURN_IF_ERROR(db.Query(kAdvanceEvents, PgParams().Add(last_event)).status());
    }
    std::map<std::string, int64_t> heads;
    for (const JournalRecord& j : records.journal) {
      ABACUS_RETURN_IF_ERROR(
          db.Query(kLoadJournal, PgParams().Add(j.stream).Add(j.seq).Add(j.time_us).Add(j.json))
              .status());
      int64_t& head = heads[j.stream];
      head = std::max(head, j.seq);
    }
    for (const auto& [stream, seq] : heads) {
      ABACUS_RETURN_IF_ERROR(db.Query(kAdvanceStream, PgParams().Add(stream).Add(seq)).status());
    }
    for (const auto& [key, value] : records.meta) {
      ABACUS_RETURN_IF_ERROR(db.Query(kPutMeta, PgParams().Add(key).Add(value)).status());
    }
    return Status::OK();
  });
}

Status PostgresStore::Erase() {
  return InWriteTransaction([&]() REQUIRES(write_mu_) { return writer_->Exec(kErase); });
}

}  // namespace abacus

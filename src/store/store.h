// Store: the durable home of the ledger. Records are JSON documents owned by the domain code;
// the store knows kinds, keys, versions and sequence numbers, never domain types.
//
// Every write goes through a WriteBatch, applied atomically by Store::Commit (or, grouped with
// other batches into one transaction, by GroupCommitter). Backends: SqliteStore
// ("sqlite://PATH"), PostgresStore ("postgres://..."), InMemoryStore ("memory://", for tests).
// All Store methods are safe to call from several threads.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/lease.h"

namespace abacus {

class StoreCopyAccess;  // store/store_copy.h

// One object: the latest JSON document stored under (kind, key).
struct ObjectRecord {
  std::string kind;        // "workload", "queue", "node", ...
  std::string key;         // unique within the kind
  int64_t version = 0;     // 1 when created, +1 on every put
  std::string json;
  int64_t updated_us = 0;  // store clock at the commit that wrote this version

  bool operator==(const ObjectRecord&) const = default;
};

// One lifecycle event of an object; seq is global, increasing, never reused.
struct EventRecord {
  int64_t seq = 0;
  std::string object_kind;
  std::string object_key;
  int64_t time_us = 0;
  std::string type;  // "Submitted", "Admitted", "Preempted", ...
  std::string json;

  bool operator==(const EventRecord&) const = default;
};

// One entry of an append-only journal stream ("usage", "audit", ...); seq is dense per stream:
// 1, 2, 3, ...
struct JournalRecord {
  std::string stream;
  int64_t seq = 0;
  int64_t time_us = 0;
  std::string json;

  bool operator==(const JournalRecord&) const = default;
};

// The write operations a batch holds, applied in the order they were added.
struct PutOp {
  std::string kind;
  std::string key;
  std::string json;
  // nullopt: unconditional. 0: the object must not exist. n > 0: it must be at version n.
  std::optional<int64_t> expected_version;
  bool json_checked = false;  // written from a JSON value (PutJson): JSON by construction
};
struct DeleteOp {
  std::string kind;
  std::string key;
  // nullopt: unconditional (deleting a missing object is a no-op). n > 0: it must exist at
  // version n.
  std::optional<int64_t> expected_version;
};
struct EventOp {
  std::string object_kind;
  std::string object_key;
  std::string type;
  std::string json;
  int64_t time_us = 0;
  bool json_checked = false;  // written from a JSON value (AppendEventJson)
};
struct JournalOp {
  std::string stream;
  std::string json;
  int64_t time_us = 0;
  bool json_checked = false;  // written from a JSON value (AppendJournalJson)
  // nullopt: the next seq of the stream, whatever it is. n > 0: the entry must get seq n;
  // otherwise the whole batch fails with Aborted (the stream was written by someone else).
  std::optional<int64_t> expected_seq = std::nullopt;
};
struct MetaOp {
  std::string key;
  std::string value;
};
using WriteOp = std::variant<PutOp, DeleteOp, EventOp, JournalOp, MetaOp>;

// A set of writes that commit together or not at all.
// Names one op of a WriteBatch (WriteBatch::LastOp), to read what the batch's commit assigned
// to it (CommitResult::AssignedTo) instead of counting op positions.
struct OpRef {
  size_t index = 0;
};

class WriteBatch {
 public:
  // Sets (kind, key) to `json`; see PutOp for `expected_version`.
  WriteBatch& Put(std::string kind, std::string key, std::string json,
                  std::optional<int64_t> expected_version = std::nullopt);
  // Put, AppendEvent and AppendJournal of a JSON value (serialized here): such documents are
  // JSON by construction, so ValidateBatch does not parse them again on the commit path.
  WriteBatch& PutJson(std::string kind, std::string key, const nlohmann::json& doc,
                      std::optional<int64_t> expected_version = std::nullopt);
  WriteBatch& AppendEventJson(std::string object_kind, std::string object_key, std::string type,
                              const nlohmann::json& doc, Time time);
  WriteBatch& AppendJournalJson(std::string stream, const nlohmann::json& doc, Time time);
  // AppendJournalJson that must be stored as seq `seq` of `stream`, or the whole batch fails
  // with Aborted (see JournalOp::expected_seq).
  WriteBatch& AppendJournalJsonAt(std::string stream, const nlohmann::json& doc, Time time, int64_t seq);
  // AppendJournalJsonAt of a document already written as text by a JSON encoder (JsonWriter):
  // JSON by construction, so ValidateBatch does not parse it again either.
  WriteBatch& AppendJournalTextAt(std::string stream, std::string json, Time time, int64_t seq);
  // Removes (kind, key); see DeleteOp for `expected_version`.
  WriteBatch& Delete(std::string kind, std::string key,
                     std::optional<int64_t> expected_version = std::nullopt);
  // Appends an event about (object_kind, object_key) that happened at `time`.
  WriteBatch& AppendEvent(std::string object_kind, std::string object_key, std::string type,
                          std::string json, Time time);
  // Appends an entry to `stream` recorded at `time`.
  WriteBatch& AppendJournal(std::string stream, std::string json, Time time);
  // Sets a store-level setting (e.g. a fencing token).
  WriteBatch& PutMeta(std::string key, std::string value);
  // Makes the batch conditional on lease `fence.name` still being at `fence.token` when it
  // commits (checked in the committing transaction); otherwise the whole batch fails with
  // FailedPrecondition "fenced: ...". See store/lease.h.
  WriteBatch& Fence(LeaseFence fence);
  // Appends a copy of `other`'s ops after this batch's (and takes its fence, if it has one).
  WriteBatch& Append(const WriteBatch& other);

  // Returns the op added last (the batch must not be empty): hold it to read the version or
  // seq its commit assigned (CommitResult::AssignedTo). It names that op in this batch only.
  OpRef LastOp() const { return OpRef{ops_.size() - 1}; }

  const std::vector<WriteOp>& ops() const { return ops_; }
  const std::optional<LeaseFence>& fence() const { return fence_; }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

 private:
  std::vector<WriteOp> ops_;
  std::optional<LeaseFence> fence_;
};

// What a successful commit assigned, one value per op of the batch, in op order: the new
// version for a PutOp, the seq for an EventOp or JournalOp, 0 for a DeleteOp or MetaOp.
struct CommitResult {
  std::vector<int64_t> assigned;

  // Returns what the commit assigned to `op` of the batch this result answers: the new version
  // of a Put, the seq of an event or journal entry; 0 for a delete or meta op, or when nothing
  // was assigned (the commit failed).
  int64_t AssignedTo(OpRef op) const { return op.index < assigned.size() ? assigned[op.index] : 0; }
};

// Returns the Aborted status a backend answers when journal op `op` (with an expected seq)
// would be stored as seq `assigned`.
Status JournalSeqConflict(const JournalOp& op, int64_t assigned);

// Returns OK when every op of `batch` is well formed: non-empty kind/key/stream/type, and
// documents that are valid JSON. InvalidArgument naming the op otherwise.
Status ValidateBatch(const WriteBatch& batch);

// The durable store; every method is safe to call from several threads. Default arguments
// live here only: call through Store&.
class Store {
 public:
  virtual ~Store() = default;

  // Applies `batch` atomically. Returns Aborted when an expected version does not match (and
  // nothing of the batch is applied), InvalidArgument for a malformed batch, Unavailable or
  // Internal when the backend fails. When OK and `result` is set, fills it (see CommitResult).
  Status Commit(const WriteBatch& batch, CommitResult* result = nullptr);

  // Applies several batches with one durable commit. Each batch is atomic on its own: one that
  // fails (conflict, malformed) leaves the others untouched, and statuses[i] reports batch i.
  // If the shared commit itself fails, every batch reports that error. results may be empty
  // or hold one (possibly null) pointer per batch. Requires statuses.size() == batches.size().
  virtual void CommitGroup(std::span<const WriteBatch* const> batches,
                           std::span<CommitResult* const> results, std::span<Status> statuses) = 0;

  // Returns the object stored under (kind, key), or nullopt.
  virtual Result<std::optional<ObjectRecord>> Get(std::string_view kind,
                                                  std::string_view key) = 0;
  // Returns every object of `kind`, ordered by key.
  virtual Result<std::vector<ObjectRecord>> List(std::string_view kind) = 0;
  // Returns the number of objects of `kind`.
  virtual Result<int64_t> Count(std::string_view kind) = 0;
  // Returns the events of (kind, key) with seq > after_seq, in seq order, at most `limit`
  // of them (0: no limit).
  virtual Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key,
                                                  int64_t after_seq = 0, size_t limit = 0) = 0;
  // Returns the entries of `stream` with seq > after_seq, in seq order, at most `limit` of them
  // (0: no limit).
  virtual Result<std::vector<JournalRecord>> Journal(std::string_view stream,
                                                     int64_t after_seq = 0, size_t limit = 0) = 0;
  // Returns the store-level setting `key`, or nullopt.
  virtual Result<std::optional<std::string>> GetMeta(std::string_view key) = 0;

  // Takes lease `name` for `holder` (advertising `address`) for `ttl` when nobody holds it or
  // it has expired, incrementing its fencing token; renews it (same token) when `holder` holds
  // it; otherwise changes nothing. Returns the lease as it stands after the call. Expiry is
  // judged by the store's time (PostgreSQL: the database server's clock). The default refuses
  // with FailedPrecondition (wrappers and test doubles without a lease).
  virtual Result<LeaseState> TryAcquireLease(std::string_view name, std::string_view holder,
                                             std::string_view address, Duration ttl);
  // Ends `holder`'s hold on lease `name` now, so that another server may take it at once
  // (graceful shutdown). OK when `holder` did not hold it. The default refuses, like
  // TryAcquireLease's.
  virtual Status ReleaseLease(std::string_view name, std::string_view holder);

  // Returns a description for logs, e.g. "sqlite:///var/lib/abacus/abacus.db" (never a
  // password).
  virtual std::string Describe() const = 0;

  // Returns whole-store access for `abacus admin migrate` (store/store_copy.h), or nullptr
  // when this store does not offer it (wrappers, test doubles).
  virtual StoreCopyAccess* copy_access() { return nullptr; }
};

struct StoreOptions {
  // Stamps ObjectRecord::updated_us; SystemClock when null. Must outlive the store.
  const Clock* clock = nullptr;
};

// Opens the store named by `url`:
//   sqlite://PATH             a SQLite database file, created if missing ("sqlite:///abs/x.db"
//                             or "sqlite://relative/x.db"); query options
//                             ?synchronous=full|normal (default full) and &busy_timeout_ms=N
//   sqlite://:memory:         a private SQLite in-memory database (tests)
//   memory://                 an InMemoryStore (tests)
//   postgres://…, postgresql://…  a PostgreSQL database (libpq URI: user, password, host,
//                             port, database and libpq query options such as sslmode or
//                             host=/socket/folder); see docs/store.md
// Applies pending schema migrations. Returns FailedPrecondition when the database was written
// by a newer Abacus, InvalidArgument for a malformed url, Unavailable when it cannot be opened.
Result<std::unique_ptr<Store>> OpenStore(std::string_view url, const StoreOptions& options = {});

}  // namespace abacus

// PostgresStore: the Store on a PostgreSQL database, for deployments that want a database
// server (and, later, several Abacus servers with a lease). One writer connection (commits are
// serialized by a mutex, like SqliteStore) and a small pool of read connections, so reads never
// wait for a commit in progress. Same transactions and guarantees as SQLite: a group is one
// transaction with one savepoint per batch; a commit is durable when COMMIT returns
// (synchronous_commit=on, PostgreSQL's default). Groups are sent pipelined (libpq pipeline
// mode): a few round trips per group, not one per statement.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "store/migration.h"
#include "store/store.h"
#include "store/store_copy.h"

namespace abacus {

class PgConnection;
class PgParams;
class PgResult;

struct PostgresStoreOptions {
  const Clock* clock = nullptr;  // SystemClock when null; must outlive the store
  int max_readers = 4;           // read connections, opened when first needed
  std::span<const Migration> migrations;  // empty: PostgresMigrations(); tests pass their own
};

class PostgresStore final : public Store, public StoreCopyAccess {
 public:
  // Connects to `url` (a libpq URI, "postgres://USER:PASS@HOST:PORT/DB?sslmode=..."), and
  // applies pending migrations under an advisory lock (several servers may start at once).
  // FailedPrecondition when the database holds a newer schema; Unavailable when unreachable.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url,
                                                     const PostgresStoreOptions& options = {});
  ~PostgresStore() override;

  void CommitGroup(std::span<const WriteBatch* const> batches,
                   std::span<CommitResult* const> results, std::span<Status> statuses) override;
  Result<std::optional<ObjectRecord>> Get(std::string_view kind, std::string_view key) override;
  Result<std::vector<ObjectRecord>> List(std::string_view kind) override;
  Result<int64_t> Count(std::string_view kind) override;
  Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key,
                                          int64_t after_seq, size_t limit) override;
  Result<std::vector<JournalRecord>> Journal(std::string_view stream, int64_t after_seq,
                                             size_t limit) override;
  Result<std::optional<std::string>> GetMeta(std::string_view key) override;
  // The lease lives in `leader_lease`; expiry follows the database server's clock
  // (postgres_lease.cc). Runs on a read connection: each call is one idempotent statement.
  Result<LeaseState> TryAcquireLease(std::string_view name, std::string_view holder, std::string_view address,
                                     Duration ttl) override;
  Status ReleaseLease(std::string_view name, std::string_view holder) override;
  std::string Describe() const override { return describe_; }
  StoreCopyAccess* copy_access() override { return this; }

  // StoreCopyAccess
  Result<std::vector<std::string>> ObjectKinds() override;
  Result<std::vector<std::string>> JournalStreams() override;
  Result<std::vector<EventRecord>> EventsAfter(int64_t after_seq, size_t limit) override;
  Result<std::vector<std::pair<std::string, std::string>>> AllMeta() override;
  Status Load(const StoreRecords& records) override;
  Status Erase() override;

  // Returns the schema version of the database (the last migration applied).
  int schema_version() const { return schema_version_; }
  // Returns how many groups committed on the pipelined fast path, and how many were redone
  // statement by statement (a batch failed).
  int64_t pipelined_groups() const { return pipelined_groups_.load(); }
  int64_t redone_groups() const { return redone_groups_.load(); }

 private:
  PostgresStore(std::string url, const Clock& clock, int max_readers);

  // A read connection borrowed from the pool; returned on destruction.
  class Reader;
  Result<Reader> BorrowReader();
  // Runs one statement on a borrowed read connection (PgConnection::Read).
  Result<PgResult> RunOnReader(const char* sql, const PgParams& params);

  Status Migrate(std::span<const Migration> migrations) REQUIRES(write_mu_);
  Status ApplyBatch(const WriteBatch& batch, int64_t now_us, CommitResult& result) REQUIRES(write_mu_);
  Status ApplyOp(const WriteOp& op, int64_t now_us, int64_t& assigned) REQUIRES(write_mu_);
  enum class FastPath {
    kCommitted,  // every batch applied and the transaction committed
    kRedo,       // a statement failed: nothing committed; the transaction may be left aborted
    kUnknown,    // the connection was lost: the COMMIT may or may not have run (`lost` says)
  };
  // Sends BEGIN, the group's batches and COMMIT pipelined, filling `staged`.
  FastPath TryPipelinedGroup(std::span<const WriteBatch* const> batches,
                             const std::vector<size_t>& members, int64_t now_us,
                             std::vector<CommitResult>& staged, Status& lost) REQUIRES(write_mu_);
  Status Conflict(const std::string& kind, const std::string& key, int64_t expected) REQUIRES(write_mu_);
  // On the writer inside the transaction: locks the lease row FOR SHARE and checks `fence`.
  Status CheckBatchFence(const LeaseFence& fence) REQUIRES(write_mu_);
  // Runs `body` in one transaction on the writer connection.
  Status InWriteTransaction(const std::function<Status()>& body);

  std::string url_;
  std::string describe_;
  const Clock& clock_;
  int schema_version_ = 0;

  Mutex write_mu_;
  std::unique_ptr<PgConnection> writer_ GUARDED_BY(write_mu_);

  Mutex read_mu_;
  std::condition_variable read_cv_;
  std::vector<std::unique_ptr<PgConnection>> idle_readers_ GUARDED_BY(read_mu_);
  int open_readers_ GUARDED_BY(read_mu_) = 0;
  const int max_readers_;
  std::atomic<int64_t> pipelined_groups_{0};
  std::atomic<int64_t> redone_groups_{0};
};

// Returns the migrations of the PostgreSQL backend, in version order.
std::span<const Migration> PostgresMigrations();

}  // namespace abacus

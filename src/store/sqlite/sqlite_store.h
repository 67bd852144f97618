// SqliteStore: the Store on one SQLite database file, for `abacus up` and single-server
// deployments. WAL mode; one writer connection (every commit goes through it, serialized by a
// mutex) and one read connection, so reads never wait for a commit in progress.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "store/migration.h"
#include "store/store.h"
#include "store/store_copy.h"

namespace abacus {

class SqliteConnection;

// When a commit reaches the disk; see docs/store.md.
enum class SqliteSynchronous {
  kNormal,  // WAL synced at checkpoints only: survives a process crash, not a power loss
  kFull,    // WAL synced at every commit: survives a power loss too
};

struct SqliteStoreOptions {
  const Clock* clock = nullptr;  // SystemClock when null; must outlive the store
  SqliteSynchronous synchronous = SqliteSynchronous::kFull;
  int busy_timeout_ms = 5000;  // how long to wait for another process holding the lock
  // A cap on the database's size in pages (PRAGMA max_page_count; pages are 4 KiB): past it a
  // write fails as on a full disk (StorageFullError). 0: no cap but the disk's.
  int64_t max_pages = 0;
  std::span<const Migration> migrations;  // empty: SqliteMigrations(); tests pass their own
};

class SqliteStore final : public Store, public StoreCopyAccess {
 public:
  // Opens (creating if needed) the database at `path`, or a private in-memory one for
  // ":memory:", and applies pending migrations. FailedPrecondition when the file holds a
  // schema newer than `options.migrations`; Unavailable naming the path when it cannot open.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   const SqliteStoreOptions& options = {});
  ~SqliteStore() override;

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
  Result<LeaseState> TryAcquireLease(std::string_view name, std::string_view holder, std::string_view address,
                                     Duration ttl) override;
  Status ReleaseLease(std::string_view name, std::string_view holder) override;
  std::string Describe() const override { return "sqlite://" + path_; }
  StoreCopyAccess* copy_access() override { return this; }

  // StoreCopyAccess
  Result<std::vector<std::string>> ObjectKinds() override;
  Result<std::vector<std::string>> JournalStreams() override;
  Result<std::vector<EventRecord>> EventsAfter(int64_t after_seq, size_t limit) override;
  Result<std::vector<std::pair<std::string, std::string>>> AllMeta() override;
  Status Load(const StoreRecords& records) override;
  Status Erase() override;

  // Returns the schema version of the open database (the last migration applied).
  int schema_version() const { return schema_version_; }

 private:
  SqliteStore(std::string path, const Clock& clock);

  // Applies the migrations newer than the database's schema, each in its own transaction.
  Status Migrate(std::span<const Migration> migrations) REQUIRES(write_mu_);
  // Applies one batch inside the open transaction. Returns the first failing op's status.
  Status ApplyBatch(const WriteBatch& batch, int64_t now_us, CommitResult& result) REQUIRES(write_mu_);
  Status ApplyOp(const WriteOp& op, int64_t now_us, int64_t& assigned) REQUIRES(write_mu_);
  // Runs `body` in one IMMEDIATE transaction on the writer connection.
  Status InWriteTransaction(const std::function<Status()>& body);
  // Runs a cached statement that returns no rows on the writer connection.
  Status RunWriter(const char* sql) REQUIRES(write_mu_);
  // Explains a failed conditional put/delete: Aborted with the version found.
  Status Conflict(const std::string& kind, const std::string& key, int64_t expected) REQUIRES(write_mu_);
  // Returns the stored version of kind/key, or nullopt when there is none.
  Result<std::optional<int64_t>> VersionOf(const std::string& kind, const std::string& key) REQUIRES(write_mu_);
  // sqlite_lease.cc, on the writer inside a transaction: the stored lease row `name`, writing
  // one, and checking a batch's fence.
  Result<std::optional<LeaseRow>> ReadLease(std::string_view name) REQUIRES(write_mu_);
  Status WriteLease(std::string_view name, const LeaseRow& row) REQUIRES(write_mu_);
  Status CheckBatchFence(const LeaseFence& fence) REQUIRES(write_mu_);

  std::string path_;
  const Clock& clock_;
  int schema_version_ = 0;

  Mutex write_mu_;
  std::unique_ptr<SqliteConnection> writer_ GUARDED_BY(write_mu_);
  // Reads use their own connection on a file; an in-memory database has only the writer.
  Mutex own_read_mu_;
  std::unique_ptr<SqliteConnection> own_reader_ PT_GUARDED_BY(own_read_mu_);
  Mutex* read_mu_ = nullptr;
  SqliteConnection* reader_ PT_GUARDED_BY(*read_mu_) = nullptr;  // set by Open

  // Checkpoints run on a thread of their own (a file only), so that no commit waits while the
  // WAL is copied into the database and the file synced: the writer's commits tell it how long
  // the WAL has grown (on_wal_commit_), and it checkpoints every kCheckpointFrames frames.
  void Checkpointer();
  static constexpr int kCheckpointFrames = 1000;  // SQLite's own automatic threshold
  std::function<void(int)> on_wal_commit_;
  std::unique_ptr<SqliteConnection> checkpoint_conn_;  // used by the checkpointer only
  Mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_due_ GUARDED_BY(checkpoint_mu_) = false;
  bool checkpoint_stop_ GUARDED_BY(checkpoint_mu_) = false;
  std::thread checkpointer_;
};

}  // namespace abacus

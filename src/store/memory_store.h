// InMemoryStore: a Store held in maps, with the same semantics as SqliteStore (versions,
// conflicts, seq numbering, atomic batches). For unit tests of other modules; nothing survives
// the process.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "store/store.h"
#include "store/store_copy.h"

namespace abacus {

class InMemoryStore final : public Store, public StoreCopyAccess {
 public:
  // `clock` stamps updated_us and must outlive the store.
  explicit InMemoryStore(const Clock& clock);

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
  std::string Describe() const override { return "memory://"; }
  StoreCopyAccess* copy_access() override { return this; }

  // StoreCopyAccess
  Result<std::vector<std::string>> ObjectKinds() override;
  Result<std::vector<std::string>> JournalStreams() override;
  Result<std::vector<EventRecord>> EventsAfter(int64_t after_seq, size_t limit) override;
  Result<std::vector<std::pair<std::string, std::string>>> AllMeta() override;
  Status Load(const StoreRecords& records) override;
  Status Erase() override;

 private:
  using ObjectKey = std::pair<std::string, std::string>;  // (kind, key)

  // One step to take back if a later op of the same batch fails.
  struct Undo {
    enum class Kind { kObject, kEvent, kJournal, kMeta } kind;
    ObjectKey object;                      // kObject
    std::optional<ObjectRecord> previous;  // kObject: the record before the op
    std::string name;                      // kJournal: stream; kMeta: key
    std::optional<std::string> previous_meta;
  };

  // Applies one batch; on failure undoes what it applied and returns the error.
  Status ApplyBatch(const WriteBatch& batch, int64_t now_us, CommitResult& result) REQUIRES(mu_);
  Status ApplyOp(const WriteOp& op, int64_t now_us, int64_t& assigned, std::vector<Undo>& undo) REQUIRES(mu_);
  void Rollback(std::vector<Undo>& undo) REQUIRES(mu_);

  const Clock& clock_;
  mutable Mutex mu_;
  std::map<ObjectKey, ObjectRecord, std::less<>> objects_ GUARDED_BY(mu_);
  std::vector<EventRecord> events_ GUARDED_BY(mu_);  // seq order
  int64_t last_event_seq_ GUARDED_BY(mu_) = 0;
  std::map<std::string, std::vector<JournalRecord>, std::less<>> journal_ GUARDED_BY(mu_);
  std::map<std::string, std::string, std::less<>> meta_ GUARDED_BY(mu_);
  std::map<std::string, LeaseRow, std::less<>> leases_ GUARDED_BY(mu_);
};

}  // namespace abacus

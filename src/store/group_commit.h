// GroupCommitter: many threads submit write batches; one committer thread applies whatever is
// queued (up to max_group batches) with a single Store::CommitGroup call — one transaction,
// one fsync — and wakes every submitter with its own batch's status once that commit returns.
//
//   GroupCommitter committer(store);
//   Status s = committer.Submit(WriteBatch().Put("workload", id, json, 0));  // blocks
//
// A batch that fails on its own (version conflict, malformed) fails alone; its group-mates
// still commit. Submit is safe from any number of threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "common/mutex.h"
#include "store/store.h"

namespace abacus {

struct GroupCommitOptions {
  size_t max_group = 512;  // most batches in one transaction
};

struct GroupCommitStats {
  int64_t groups = 0;     // transactions committed (or attempted)
  int64_t batches = 0;    // batches that went through a group, failed ones included
  int64_t max_group = 0;  // largest group so far
};

class GroupCommitter {
 public:
  // Starts the committer thread. `store` must outlive this object.
  explicit GroupCommitter(Store& store, GroupCommitOptions options = {});
  // Shuts down (see Shutdown).
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `batch` and blocks until the transaction holding it has committed or failed.
  // Returns the batch's status as Store::Commit would; Unavailable after Shutdown. When OK and
  // `result` is set, fills it.
  Status Submit(const WriteBatch& batch, CommitResult* result = nullptr);

  // Stops accepting batches, commits everything already queued, and joins the committer
  // thread. Idempotent.
  void Shutdown();

  // Returns false once Shutdown has begun.
  bool accepting() const;
  // Returns how many batches wait for the committer (not counting the group in flight).
  size_t queued() const;
  GroupCommitStats stats() const;

 private:
  // One Submit call waiting for its result, on the submitter's stack. The committer sets
  // `status`, then wakes the submitter's WakeSlot.
  struct Pending;

  void Run();

  Store& store_;
  const GroupCommitOptions options_;
  mutable Mutex mu_;
  std::condition_variable work_cv_;
  std::deque<Pending*> queue_ GUARDED_BY(mu_);
  std::atomic<size_t> queued_{0};  // queue_.size(), read without the lock
  bool stopping_ GUARDED_BY(mu_) = false;
  GroupCommitStats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace abacus

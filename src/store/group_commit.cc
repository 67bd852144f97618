#include "store/group_commit.h"

#include <algorithm>
#include <vector>

#include "common/mutex.h"
#include "common/thread_name.h"
#include "common/wake_slot.h"

namespace abacus {

struct GroupCommitter::Pending {
  const WriteBatch* batch = nullptr;
  CommitResult* result = nullptr;
  Status status;
  WakeSlot& slot = WakeSlot::ForThisThread();
};

GroupCommitter::GroupCommitter(Store& store, GroupCommitOptions options)
    : store_(store), options_(options) {
  thread_ = std::thread([this] {
    NameThisThread("abacus-commit");
    Run();
  });
}

GroupCommitter::~GroupCommitter() { Shutdown(); }

Status GroupCommitter::Submit(const WriteBatch& batch, CommitResult* result) {
  // On the submitter's stack: the committer is done with it once it wakes the slot (only the
  // slot, which is the thread's own, may still see the committer's futex call).
  Pending pending;
  pending.batch = &batch;
  pending.result = result;
  pending.slot.Arm();
  {
    MutexLock lock(mu_);
    if (stopping_) return Unavailable("store " + store_.Describe() + " is shutting down");
    queue_.push_back(&pending);
    queued_.store(queue_.size(), std::memory_order_relaxed);
  }
  work_cv_.notify_one();
  pending.slot.Wait();
  return pending.status;
}

void GroupCommitter::Shutdown() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

bool GroupCommitter::accepting() const {
  MutexLock lock(mu_);
  return !stopping_;
}

size_t GroupCommitter::queued() const { return queued_.load(std::memory_order_relaxed); }

GroupCommitStats GroupCommitter::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

void GroupCommitter::Run() {
  std::vector<Pending*> group;
  std::vector<const WriteBatch*> batches;
  std::vector<CommitResult*> results;
  std::vector<Status> statuses;
  const size_t max_group = std::max<size_t>(options_.max_group, 1);
  while (true) {
    // 1) Take whatever is queued, up to max_group; exit once stopping and drained.
    {
      MutexLock lock(mu_);
      lock.Wait(work_cv_, [&]() REQUIRES(mu_) { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      size_t n = std::min(queue_.size(), max_group);
      group.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queued_.store(queue_.size(), std::memory_order_relaxed);
      stats_.groups += 1;
      stats_.batches += static_cast<int64_t>(n);
      stats_.max_group = std::max(stats_.max_group, static_cast<int64_t>(n));
    }
    // 2) One transaction for the whole group.
    batches.clear();
    results.clear();
    for (Pending* p : group) {
      batches.push_back(p->batch);
      results.push_back(p->result);
    }
    statuses.assign(group.size(), Status::OK());
    store_.CommitGroup(batches, results, statuses);
    // 3) Wake each submitter with its own status.
    for (size_t i = 0; i < group.size(); ++i) {
      Pending* p = group[i];
      p->status = std::move(statuses[i]);
      p->slot.Wake();
    }
  }
}

}  // namespace abacus

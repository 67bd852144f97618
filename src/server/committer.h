// Committer: the server's one writer to its store (issue 22.3). Every write — a request's change,
// the loop's decisions, governance's users and tokens — is a batch queued here; one thread takes
// what is queued (up to max_group) and commits it as one transaction (one fsync), with the audit
// records that ride with each batch sealed onto the chain in the same transaction, in commit
// order. A batch that fails on its own (version conflict, malformed) fails alone: the group is
// then committed item by item, so that no entry of a failed batch is written and the chain has
// no gap.
//
//   Committer committer(audit_log, {});
//   Status s = committer.Commit(batch, {entry}, &result);  // blocks until committed or failed
//   uint64_t t = committer.Enqueue({decision});           // never blocks; Wait(t) if needed
//   auto a = committer.Start(std::move(batch), {}, wake);  // never blocks; a->ready() later
//
// Writes a hook makes on the committer's own thread (OnCommitterThread) must go straight to the
// store: server/store_via_committer.h does that for governance's store.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "govern/audit.h"
#include "store/store.h"

namespace abacus::server {

struct CommitterOptions {
  size_t max_group = 512;  // items per transaction at most
  // Run on the committer's thread: after each group, and every `housekeeping_every` while idle
  // (and once more at shutdown, with final = true). Either may be empty.
  std::function<void()> after_group;
  std::function<void(bool final)> housekeeping;
  std::chrono::milliseconds housekeeping_every{std::chrono::seconds(10)};
};

struct CommitterStats {
  int64_t groups = 0;     // transactions attempted (a group retried item by item counts once)
  int64_t items = 0;      // items that went through a group
  int64_t max_group = 0;  // largest group so far
};

class Committer {
 public:
  // Starts the committer thread; `audit` (and its store) must outlive this object.
  Committer(govern::AuditLog& audit, CommitterOptions options);
  // Shuts down (see Shutdown).
  ~Committer();
  Committer(const Committer&) = delete;
  Committer& operator=(const Committer&) = delete;

  // Commits `batch` with `records` sealed after the chain's head, in order, in one transaction:
  // all of them or none. Blocks until done; returns the batch's status as Store::Commit would
  // (Unavailable after Shutdown) and, when OK, fills `result` with the batch's own ops.
  Status Commit(const WriteBatch& batch, std::vector<govern::AuditRecord> records, CommitResult* result = nullptr);

  // A commit whose caller goes on (Start): `done` turns true once `status` (and, when OK,
  // `result`) is set, and never changes again.
  struct Async {
    WriteBatch batch;
    Status status;
    CommitResult result;
    std::atomic<bool> done{false};
    // True once the commit is done (committed or failed).
    bool ready() const { return done.load(std::memory_order_acquire); }
    // Blocks until the commit is done.
    void Wait() const { done.wait(false, std::memory_order_acquire); }
  };
  // Queues `batch` with `records` as Commit does, without waiting: the answer is done once the
  // group holding it committed or failed, and `on_done` (may be empty) then runs on the
  // committer's thread. After Shutdown it is done at once with Unavailable (on_done not run).
  std::shared_ptr<const Async> Start(WriteBatch batch, std::vector<govern::AuditRecord> records,
                                     std::function<void()> on_done);
  // Queues `records` alone (no batch); returns a ticket for Wait, 0 when shut down. Never blocks.
  uint64_t Enqueue(std::vector<govern::AuditRecord> records);
  // Waits up to `limit` for `ticket`'s entries: OK, their failure, or DeadlineExceeded.
  Status Wait(uint64_t ticket, std::chrono::microseconds limit);
  // Blocks until everything queued so far is committed or failed.
  void Flush();
  // Stops taking work, commits what is queued, runs housekeeping(final) and joins. Idempotent.
  void Shutdown();

  // Holds off commits while the caller reads the chain with the head it has (audit Verify).
  std::unique_lock<std::mutex> HoldCommits() const { return std::unique_lock<std::mutex>(io_mu_); }
  // True on the committer's own thread (its hooks and the commits it makes).
  bool OnCommitterThread() const { return std::this_thread::get_id() == thread_id_.load(std::memory_order_relaxed); }
  // Items waiting for the committer (not counting the group in flight).
  size_t queued() const { return queued_.load(std::memory_order_relaxed); }
  // Entries queued without a waiter (Enqueue) that could not be written.
  int64_t failures() const;
  CommitterStats stats() const;

 private:
  struct Waiter;
  struct Item {
    std::vector<govern::AuditRecord> records;  // sealed in this order after the chain's head
    const WriteBatch* batch = nullptr;          // Commit's, owned by the caller
    CommitResult* result = nullptr;
    Waiter* waiter = nullptr;  // Commit's caller; null: a ticket (Wait) or an Async
    std::shared_ptr<Async> async;  // Start's: owns the batch and takes the outcome
    std::function<void()> on_done;  // Start's: run after `async` is done
  };
  uint64_t Push(Item item);
  void Run();
  // Commits `items` as one transaction, or one by one when a batch of theirs is refused; returns
  // a status per item.
  std::vector<Status> CommitItems(std::vector<Item>& items);

  govern::AuditLog& audit_;
  const CommitterOptions options_;
  // Held while a group commits. A plain std::mutex: it guards no member (it orders commits against
  // audit reads) and HoldCommits hands the lock to the caller, which the analysis cannot follow.
  mutable std::mutex io_mu_;
  mutable Mutex mu_;
  std::condition_variable work_cv_;  // the committer waits for work
  std::condition_variable done_cv_;  // Wait and Flush wait for tickets
  std::deque<Item> queue_ GUARDED_BY(mu_);
  std::atomic<size_t> queued_{0};            // queue_.size(), read without the lock
  uint64_t enqueued_ GUARDED_BY(mu_) = 0;  // tickets handed out
  uint64_t done_ GUARDED_BY(mu_) = 0;  // tickets finished
  std::map<uint64_t, Status> errors_ GUARDED_BY(mu_);  // failed tickets (recent)
  int64_t failures_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  CommitterStats stats_ GUARDED_BY(mu_);
  std::thread thread_;
  std::atomic<std::thread::id> thread_id_{};  // set by the thread itself before it takes work
  std::once_flag shutdown_once_;
};

}  // namespace abacus::server

// FairQueue: the front's hand-off of complete requests to the worker pool, served in turns by
// client (source address): a client with 200 requests queued gets one worker turn, then every
// other client with a request waiting gets one, so a flood from one address cannot push a health
// probe or a well-behaved client to the back of a long line.
//
// It also bounds how many tasks start running at once (`max_running`, a few per core): a task
// holds its place until it ends or first waits in a BlockingRegion (for its commit, the loop, a
// long poll, a slow socket); what it does after that wait (write its answer, mostly) runs
// without a place. So the pool can hold many waiting requests while only a few compete for the
// CPU. Without the bound, 96 workers busy with a flood of cheap requests (issue 21) were all
// runnable at once, and the kernel's turn through them delayed a health probe's worker by up to
// 100 ms on 2 cores.
//
//   FairQueue q(8);
//   q.Push("10.0.0.7", [] { ... });        // front thread
//   std::function<void()> task;
//   BlockingRegion::Join(&q);             // each worker, once
//   for (bool ended = false; q.Next(task, ended); ended = true) task();
//   q.Close();                             // workers' Next returns false once the queue is empty
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/blocking_region.h"
#include "common/mutex.h"

namespace abacus::net {

class FairQueue : public BlockingRegion::Pool {
 public:
  // At most `max_running` tasks run at once outside a BlockingRegion (0: no bound).
  explicit FairQueue(size_t max_running = 0) : max_running_(max_running) {}
  // Queues `task` behind `client`'s earlier tasks.
  void Push(const std::string& client, std::function<void()> task);
  // The calling worker's task (taken by an earlier Next) has ended when `ended`; waits for the
  // next task in client turn order and for a running place; false once closed and empty (the
  // ended task's place is given back either way). The task holds its place until the worker's
  // next call or its first BlockingRegion.
  bool Next(std::function<void()>& task, bool ended);
  // BlockingRegion::Pool: a task waits (its place goes to a queued task), or goes on (without
  // a place).
  void Blocked() override;
  void Unblocked() override;
  // Wakes every Next; tasks still queued are handed out first.
  void Close();
  // Whether a task waits for a worker now (a hint: no lock taken).
  bool Waiting() const { return queued_count_.load(std::memory_order_relaxed) > 0; }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, std::deque<std::function<void()>>> queued_ GUARDED_BY(mu_);  // by client
  std::deque<std::string> turns_ GUARDED_BY(mu_);  // clients with queued tasks, next turn first
  bool closed_ GUARDED_BY(mu_) = false;
  bool HasPlaceLocked() const REQUIRES(mu_);
  const size_t max_running_;
  size_t running_ GUARDED_BY(mu_) = 0;  // tasks holding a place
  std::atomic<size_t> queued_count_{0};
};

}  // namespace abacus::net

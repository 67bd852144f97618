// FairQueue: the front's hand-off of complete requests to the worker pool, served in turns by
// client (source address): a client with 200 requests queued gets one worker turn, then every
// other client with a request waiting gets one, so a flood from one address cannot push a health
// probe or a well-behaved client to the back of a long line.
//
//   FairQueue q;
//   q.Push("10.0.0.7", [] { ... });        // front thread
//   std::function<void()> task;
//   while (q.Pop(task)) task();           // each worker
//   q.Close();                             // workers' Pop returns false once the queue is empty
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/mutex.h"

namespace abacus::net {

class FairQueue {
 public:
  // Queues `task` behind `client`'s earlier tasks.
  void Push(const std::string& client, std::function<void()> task);
  // Waits for the next task in client turn order; false once closed and empty.
  bool Pop(std::function<void()>& task);
  // Wakes every Pop; tasks still queued are handed out first.
  void Close();
  // Whether a task waits for a worker now (a hint: no lock taken).
  bool Waiting() const { return queued_count_.load(std::memory_order_relaxed) > 0; }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, std::deque<std::function<void()>>> queued_ GUARDED_BY(mu_);  // by client
  std::deque<std::string> turns_ GUARDED_BY(mu_);  // clients with queued tasks, next turn first
  bool closed_ GUARDED_BY(mu_) = false;
  std::atomic<size_t> queued_count_{0};
};

}  // namespace abacus::net

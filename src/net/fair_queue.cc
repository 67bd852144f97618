#include "net/fair_queue.h"

#include "common/mutex.h"

namespace abacus::net {
namespace {

// Whether the calling worker's task holds a running place: from Next until the task first waits
// in a BlockingRegion or ends.
thread_local bool t_holds_place = false;

}  // namespace

void FairQueue::Push(const std::string& client, std::function<void()> task) {
  bool wake = false;
  {
    MutexLock lock(mu_);
    auto& q = queued_[client];
    if (q.empty()) turns_.push_back(client);
    q.push_back(std::move(task));
    queued_count_.fetch_add(1, std::memory_order_relaxed);
    wake = HasPlaceLocked();  // else the next place that frees up takes it
  }
  if (wake) cv_.notify_one();
}

bool FairQueue::Next(std::function<void()>& task, bool ended) {
  bool wake = false;
  {
    MutexLock lock(mu_);
    if (ended && t_holds_place) --running_;
    t_holds_place = false;
    lock.Wait(cv_, [&]() REQUIRES(mu_) { return (closed_ && turns_.empty()) || (!turns_.empty() && HasPlaceLocked()); });
    if (turns_.empty()) return false;
    ++running_;
    t_holds_place = true;
    std::string client = std::move(turns_.front());
    turns_.pop_front();
    auto it = queued_.find(client);
    task = std::move(it->second.front());
    it->second.pop_front();
    queued_count_.fetch_sub(1, std::memory_order_relaxed);
    if (it->second.empty()) {
      queued_.erase(it);
    } else {
      turns_.push_back(std::move(client));  // its next task waits for everyone else's turn
    }
    // One wake-up per task that can start: a worker woken for nothing costs two context switches.
    wake = !turns_.empty() && HasPlaceLocked();
  }
  if (wake) cv_.notify_one();
  return true;
}

bool FairQueue::HasPlaceLocked() const { return max_running_ == 0 || running_ < max_running_; }

void FairQueue::Blocked() {
  if (!t_holds_place) return;  // waited before, or not one of this queue's tasks
  t_holds_place = false;
  bool wake = false;
  {
    MutexLock lock(mu_);
    --running_;
    wake = !turns_.empty();
  }
  if (wake) cv_.notify_one();  // a queued task takes the place
}

// What a task does after its first wait (write its answer, mostly) is short: it runs without a
// place, so that a group commit's thirty answers do not hold back the next thirty requests.
void FairQueue::Unblocked() {}

void FairQueue::Close() {
  {
    MutexLock lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace abacus::net

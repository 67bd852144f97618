#include "net/fair_queue.h"

#include "common/mutex.h"

namespace abacus::net {

void FairQueue::Push(const std::string& client, std::function<void()> task) {
  {
    MutexLock lock(mu_);
    auto& q = queued_[client];
    if (q.empty()) turns_.push_back(client);
    q.push_back(std::move(task));
    queued_count_.fetch_add(1, std::memory_order_relaxed);
  }
  cv_.notify_one();
}

bool FairQueue::Pop(std::function<void()>& task) {
  MutexLock lock(mu_);
  lock.Wait(cv_, [&]() REQUIRES(mu_) { return closed_ || !turns_.empty(); });
  if (turns_.empty()) return false;
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
  return true;
}

void FairQueue::Close() {
  {
    MutexLock lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace abacus::net

#include "server/committer.h"

#include <algorithm>

#include "common/blocking_region.h"
#include "common/duration_parse.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "common/wake_slot.h"
#include "workload/utf8.h"

namespace abacus::server {
namespace {

// Replaces each byte that is not part of well-formed UTF-8 with '?': entries are stored and
// exported as JSON, which cannot carry them (a token id or path from a request may hold any
// byte; found by http_request_fuzz).
void MakeUtf8(std::string& s) {
  size_t from = 0;
  while (auto bad = FindInvalidUtf8(std::string_view(s).substr(from))) {
    s[from + *bad] = '?';
    from += *bad + 1;
  }
}

// Sets a started commit's outcome and marks it done (once), waking whoever waits for it.
void Finish(Committer::Async& async, Status st) {
  async.status = std::move(st);
  async.done.store(true, std::memory_order_release);
  async.done.notify_all();
}

}  // namespace

// A Commit caller waiting on its own stack. The committer sets `status`, then wakes the slot
// (the caller thread's own: it outlives the wait, so a wake landing after the caller returned is
// harmless) and touches the waiter no more.
//
// Not std::binary_semaphore or std::atomic::wait (C++20): libstdc++ 12 spins with sched_yield
// before it sleeps, which on this 2-core machine took 6.7 context switches per submission at 64
// clients against 4.0 with the slot (perf stat, abacus_api_bench; docs/store.md).
struct Committer::Waiter {
  WakeSlot& slot = WakeSlot::ForThisThread();
  Status status;
};

Committer::Committer(govern::AuditLog& audit, CommitterOptions options)
    : audit_(audit), options_(std::move(options)) {
  thread_ = std::thread([this] {
    thread_id_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    NameThisThread("abacus-commit");
    Run();
  });
}

Committer::~Committer() { Shutdown(); }

void Committer::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      MutexLock lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  });
}

uint64_t Committer::Push(Item item) {
  for (govern::AuditRecord& record : item.records) {
    for (std::string* f : {&record.actor, &record.action, &record.object_kind, &record.object_name, &record.tenant,
                           &record.before, &record.after, &record.result, &record.request_id}) {
      MakeUtf8(*f);
    }
  }
  uint64_t ticket = 0;
  {
    MutexLock lock(mu_);
    if (stopping_) {
      if (item.waiter == nullptr && item.async == nullptr) {
        const govern::AuditRecord none;
        const govern::AuditRecord& r = item.records.empty() ? none : item.records.front();
        ABACUS_LOG_ERROR("committer closed: dropped audit entry {} {} {}", r.actor, r.action, r.object_name);
        ++failures_;
      }
      return 0;
    }
    queue_.push_back(std::move(item));
    queued_.store(queue_.size(), std::memory_order_relaxed);
    ticket = ++enqueued_;
  }
  work_cv_.notify_one();
  return ticket;
}

Status Committer::Commit(const WriteBatch& batch, std::vector<govern::AuditRecord> records, CommitResult* result) {
  if (OnCommitterThread()) {
    // A hook's own write: it cannot wait for the thread it runs on.
    std::vector<Item> one(1);
    one[0].records = std::move(records);
    one[0].batch = &batch;
    one[0].result = result;
    return CommitItems(one)[0];
  }
  Waiter waiter;
  waiter.slot.Arm();
  if (Push(Item{std::move(records), &batch, result, &waiter, nullptr, {}}) == 0) {
    return Unavailable("the server is shutting down: nothing more is committed");
  }
  waiter.slot.Wait();
  return waiter.status;
}

std::shared_ptr<const Committer::Async> Committer::Start(WriteBatch batch, std::vector<govern::AuditRecord> records,
                                                         std::function<void()> on_done) {
  auto async = std::make_shared<Async>();
  async->batch = std::move(batch);
  if (OnCommitterThread()) {
    std::vector<Item> one(1);
    one[0].records = std::move(records);
    one[0].batch = &async->batch;
    one[0].result = &async->result;
    Finish(*async, CommitItems(one)[0]);
    if (on_done) on_done();
    return async;
  }
  Item item;
  item.records = std::move(records);
  item.batch = &async->batch;
  item.result = &async->result;
  item.async = async;
  item.on_done = std::move(on_done);
  if (Push(std::move(item)) == 0) Finish(*async, Unavailable("the server is shutting down: nothing more is committed"));
  return async;
}

uint64_t Committer::Enqueue(std::vector<govern::AuditRecord> records) {
  Item item;
  item.records = std::move(records);
  return Push(std::move(item));
}

Status Committer::Wait(uint64_t ticket, std::chrono::microseconds limit) {
  if (ticket == 0) return Unavailable("audit log closed");
  BlockingRegion waiting;
  MutexLock lock(mu_);
  if (!lock.WaitFor(done_cv_, limit, [&]() REQUIRES(mu_) { return done_ >= ticket; })) {
    return DeadlineExceeded("audit entry not committed within " + FormatDurationSpec(limit));
  }
  if (auto it = errors_.find(ticket); it != errors_.end()) return it->second;
  return Status::OK();
}

void Committer::Flush() {
  BlockingRegion waiting;
  MutexLock lock(mu_);
  const uint64_t target = enqueued_;
  lock.Wait(done_cv_, [&]() REQUIRES(mu_) { return done_ >= target; });
}

int64_t Committer::failures() const {
  MutexLock lock(mu_);
  return failures_;
}

CommitterStats Committer::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

std::vector<Status> Committer::CommitItems(std::vector<Item>& items) {
  // One commit for everything: the batches in order, then every entry (sealed in the same
  // order). A batch that fails fails this commit: then each item goes alone, so that only that
  // batch (and its entries) fails.
  std::lock_guard io(io_mu_);
  WriteBatch all;
  std::vector<size_t> offsets(items.size(), 0);
  std::vector<govern::AuditRecord> records;
  size_t with_batch = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    offsets[i] = all.size();
    if (items[i].batch != nullptr) {
      all.Append(*items[i].batch);
      ++with_batch;
    }
    records.insert(records.end(), items[i].records.begin(), items[i].records.end());
  }
  CommitResult result;
  auto committed = audit_.CommitMany(std::move(all), std::move(records), &result);
  const StatusCode code = committed.ok() ? StatusCode::kOk : committed.status().code();
  const bool batch_error = code == StatusCode::kAborted || code == StatusCode::kInvalidArgument;
  if (committed.ok() || !batch_error || with_batch == 0 || items.size() == 1) {
    std::vector<Status> statuses(items.size(), committed.ok() ? Status::OK() : committed.status());
    if (committed.ok()) {
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].result == nullptr || items[i].batch == nullptr) continue;
        auto from = result.assigned.begin() + static_cast<std::ptrdiff_t>(offsets[i]);
        items[i].result->assigned.assign(from, from + static_cast<std::ptrdiff_t>(items[i].batch->size()));
      }
    }
    return statuses;
  }
  std::vector<Status> statuses;
  statuses.reserve(items.size());
  for (auto& item : items) {
    CommitResult own;
    auto alone = audit_.CommitMany(item.batch != nullptr ? *item.batch : WriteBatch(), item.records, &own);
    statuses.push_back(alone.ok() ? Status::OK() : alone.status());
    if (alone.ok() && item.result != nullptr) *item.result = std::move(own);
  }
  return statuses;
}

void Committer::Run() {
  const size_t max_group = std::max<size_t>(options_.max_group, 1);
  auto next_housekeeping = std::chrono::steady_clock::now() + options_.housekeeping_every;
  MutexLock lock(mu_);
  while (true) {
    lock.WaitUntil(work_cv_, next_housekeeping, [&]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
    if (!queue_.empty()) {
      std::vector<Item> items;
      const size_t n = std::min(queue_.size(), max_group);
      items.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        items.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      queued_.store(queue_.size(), std::memory_order_relaxed);
      stats_.groups += 1;
      stats_.items += static_cast<int64_t>(n);
      stats_.max_group = std::max(stats_.max_group, static_cast<int64_t>(n));
      const uint64_t first = done_ + 1;
      lock.Unlock();
      std::vector<Status> statuses = CommitItems(items);
      // Callers of Commit learn their own outcome (a refused batch is the caller's answer, not a
      // lost entry); a ticket's failure is kept for Wait and counted.
      int64_t lost = 0;
      for (size_t i = 0; i < items.size(); ++i) {
        if (Waiter* w = items[i].waiter) {
          w->status = statuses[i];
          w->slot.Wake();
        } else if (const std::shared_ptr<Async>& a = items[i].async) {
          Finish(*a, statuses[i]);
          if (items[i].on_done) items[i].on_done();
        } else if (!statuses[i].ok()) {
          ++lost;
          for (const govern::AuditRecord& r : items[i].records) {
            ABACUS_LOG_ERROR("audit: entry {} {} {} not written: {}", r.actor, r.action, r.object_name,
                             statuses[i].ToString());
          }
        }
      }
      lock.Lock();
      failures_ += lost;
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].waiter == nullptr && items[i].async == nullptr && !statuses[i].ok()) errors_[first + i] = statuses[i];
      }
      while (errors_.size() > 4096) errors_.erase(errors_.begin());
      done_ += items.size();
      done_cv_.notify_all();
      lock.Unlock();
      if (options_.after_group) options_.after_group();
      lock.Lock();
      continue;
    }
    if (stopping_ || std::chrono::steady_clock::now() >= next_housekeeping) {
      const bool final = stopping_;
      lock.Unlock();
      if (options_.housekeeping) options_.housekeeping(final);
      lock.Lock();
      next_housekeeping = std::chrono::steady_clock::now() + options_.housekeeping_every;
      if (stopping_ && queue_.empty()) break;
    }
  }
}

}  // namespace abacus::server

#include "server/loop_inbox.h"

#include <algorithm>

#include "common/blocking_region.h"

namespace abacus::server {

void LoopInbox::Submit(std::vector<WorkloadRecord> records) {
  {
    MutexLock lock(mu_);
    for (auto& r : records) submitted_.push_back(std::move(r));
    ++sent_seq_;
  }
  wake_.notify_one();
}

void LoopInbox::Report(std::vector<TaskReport> reports) {
  if (reports.empty()) return;
  {
    MutexLock lock(mu_);
    for (auto& r : reports) reports_.push_back(std::move(r));
  }
  wake_.notify_one();
}

Status LoopInbox::Run(Command command) {
  {
    MutexLock lock(mu_);
    if (closed_) return Unavailable("server is shutting down");
    commands_.push_back(std::move(command));
    ++sent_seq_;
  }
  wake_.notify_one();
  return Status::OK();
}

void LoopInbox::WaitForCycle() {
  BlockingRegion waiting;
  MutexLock lock(mu_);
  const uint64_t target = ++sent_seq_;
  wake_.notify_one();
  lock.Wait(cycled_, [&]() REQUIRES(mu_) { return cycled_seq_ >= target || closed_; });
}

void LoopInbox::Close() {
  {
    MutexLock lock(mu_);
    closed_ = true;
  }
  wake_.notify_all();
  cycled_.notify_all();  // WaitForCycle returns even when the loop is gone
}

std::vector<WorkloadRecord> LoopInbox::Matching(const std::string& id_or_name) const {
  std::vector<WorkloadRecord> out;
  MutexLock lock(mu_);
  for (const auto& r : submitted_) {
    if (r.id == id_or_name || r.spec.name == id_or_name) out.push_back(r);
  }
  return out;
}

std::optional<WorkloadRecord> LoopInbox::FindSubmitted(const std::string& id_or_name) const {
  std::vector<WorkloadRecord> found = Matching(id_or_name);
  for (auto& r : found) {
    if (r.id == id_or_name) return std::move(r);
  }
  if (found.empty()) return std::nullopt;
  return std::move(found.back());
}

std::vector<WorkloadRecord> LoopInbox::Submitted() const {
  MutexLock lock(mu_);
  return submitted_;
}

bool LoopInbox::HasWorkLocked() const {
  return closed_ || nudged_ || !submitted_.empty() || !commands_.empty() || !reports_.empty() ||
         sent_seq_ > std::max(cycled_seq_, cycling_seq_);
}

size_t LoopInbox::commands_waiting() const {
  MutexLock lock(mu_);
  return commands_.size();
}

LoopInbox::Turn LoopInbox::Take(Duration wait) {
  Turn turn;
  MutexLock lock(mu_);
  lock.WaitFor(wake_, wait, [&]() REQUIRES(mu_) { return HasWorkLocked(); });
  turn.submitted = !submitted_.empty();
  turn.reports.swap(reports_);
  turn.commands.swap(commands_);
  turn.seen_seq = sent_seq_;
  turn.stop = closed_;
  nudged_ = false;
  return turn;
}

std::vector<WorkloadRecord> LoopInbox::TakeSubmitted() {
  std::vector<WorkloadRecord> out;
  MutexLock lock(mu_);
  out.swap(submitted_);
  return out;
}

bool LoopInbox::CycleOwed(uint64_t seen_seq) const {
  MutexLock lock(mu_);
  return std::max(cycled_seq_, cycling_seq_) < seen_seq;
}

void LoopInbox::Cycling(uint64_t seen_seq) {
  MutexLock lock(mu_);
  cycling_seq_ = std::max(cycling_seq_, seen_seq);
}

void LoopInbox::Nudge() {
  {
    MutexLock lock(mu_);
    nudged_ = true;
  }
  wake_.notify_one();
}

void LoopInbox::Cycled(uint64_t seen_seq) {
  {
    MutexLock lock(mu_);
    cycled_seq_ = std::max(cycled_seq_, seen_seq);
  }
  cycled_.notify_all();
}

std::deque<LoopInbox::Command> LoopInbox::TakeLast() {
  std::deque<Command> rest;
  {
    MutexLock lock(mu_);
    rest.swap(commands_);
    cycled_seq_ = sent_seq_;
  }
  cycled_.notify_all();
  return rest;
}

}  // namespace abacus::server

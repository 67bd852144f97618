#include "agent/loop/task_table.h"

#include <signal.h>

#include <set>

#include "common/mutex.h"

namespace abacus::agent {

namespace {

// Phases only move forward: a late "Running" never overwrites an "Exited" seen first.
int Rank(ReportedPhase p) {
  switch (p) {
    case ReportedPhase::kRunning: return 0;
    case ReportedPhase::kStopping: return 1;
    case ReportedPhase::kExited:
    case ReportedPhase::kLost: return 2;
  }
  return 2;
}

constexpr Time kLive = Time::max();

// `status` with the probe fields of `probes`: ready/live while it runs or stops (ready false
// once it stops), the message in every phase.
TaskStatus WithProbes(TaskStatus status, const ProbeOutcome& probes) {
  status.ready.reset();
  status.live.reset();
  status.readiness_run.reset();
  status.liveness_run.reset();
  if (!status.final()) {
    if (probes.ready) status.ready = *probes.ready && status.phase == ReportedPhase::kRunning;
    status.live = probes.live;
    status.readiness_run = probes.readiness_run;
    status.liveness_run = probes.liveness_run;
  }
  status.probe_message = probes.message;
  return status;
}

// Two statuses that differ at most in their probe message: one report stands for the other.
bool SameReport(TaskStatus a, TaskStatus b) {
  a.probe_message.clear();
  b.probe_message.clear();
  return a == b;
}

}  // namespace

std::optional<StopOrder> TaskTable::OrderStopLocked(const std::string& id, Entry& e, int signal, Duration grace) {
  if (e.stop_ordered || (e.status && e.status->final())) return std::nullopt;
  e.stop_ordered = true;
  return StopOrder{id, signal, grace};
}

ReconcilePlan TaskTable::Reconcile(const Assignment& assignment, Duration vanished_grace) {
  MutexLock lock(mu_);
  ReconcilePlan plan;
  std::set<std::string> listed;
  for (const AssignedTask& t : assignment.tasks) {
    listed.insert(t.task_id);
    auto it = entries_.find(t.task_id);
    bool started = started_.count(t.task_id) > 0;
    if (it != entries_.end()) it->second.assigned = true;
    if (t.action == TaskAction::kRun) {
      if (started) continue;
      started_[t.task_id] = kLive;
      Entry& e = entries_[t.task_id];
      e.assigned = true;
      e.stop_signal = t.stop_signal;
      e.grace = t.grace;
      e.fencing_signal = t.fencing_signal;
      e.fencing_grace = t.fencing_grace;
      plan.start.push_back(t);
      continue;
    }
    // action: stop
    if (!started) {
      started_[t.task_id] = kLive;
      Entry& e = entries_[t.task_id];
      e.assigned = true;
      e.stop_ordered = true;
      TaskStatus s;
      s.task_id = t.task_id;
      s.phase = ReportedPhase::kExited;
      s.finished_at = clock_.Now();
      s.exit_code = 0;
      s.stopped = true;
      s.message = "stopped before it started";
      e.status = s;
      e.sent = false;
      continue;
    }
    if (it == entries_.end()) continue;  // ran here, ended and forgotten
    if (auto order = OrderStopLocked(t.task_id, it->second, t.stop_signal, t.grace)) plan.stop.push_back(*order);
  }
  for (auto& [id, e] : entries_) {
    if (listed.count(id) > 0) continue;
    e.assigned = false;
    if (!e.status) continue;
    if (auto order = OrderStopLocked(id, e, SIGTERM, vanished_grace)) plan.stop.push_back(*order);
  }
  return plan;
}

void TaskTable::Update(const TaskStatus& reported) {
  MutexLock lock(mu_);
  started_.try_emplace(reported.task_id, kLive);
  Entry& e = entries_[reported.task_id];
  TaskStatus status = WithProbes(reported, e.probes);
  if (status.address.empty()) status.address = e.address;
  if (!e.fenced.empty() && status.phase == ReportedPhase::kExited) {
    status.phase = ReportedPhase::kLost;  // it ended because it was fenced, not by itself
    status.lost_reason = "NodeLost";
    status.message = e.fenced;
  }
  if (e.status) {
    if (*e.status == status) return;
    if (e.status->final() || Rank(status.phase) < Rank(e.status->phase)) return;
  }
  e.status = status;
  e.sent = false;
}

void TaskTable::SetAddress(const std::string& task_id, const std::string& address) {
  MutexLock lock(mu_);
  Entry& e = entries_[task_id];
  e.address = address;
  if (e.status && !e.status->final() && e.status->address != address) {
    e.status->address = address;
    e.sent = false;
  }
}

void TaskTable::SetProbes(const std::string& task_id, const ProbeOutcome& outcome) {
  MutexLock lock(mu_);
  auto it = entries_.find(task_id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.status && e.status->final()) return;
  e.probes = outcome;
  if (!e.status) return;
  TaskStatus status = WithProbes(*e.status, outcome);
  if (status == *e.status) return;
  if (!SameReport(status, *e.status)) e.sent = false;
  e.status = status;
}

std::vector<TaskStatus> TaskTable::TakeUnsent() {
  MutexLock lock(mu_);
  std::vector<TaskStatus> out;
  for (auto& [id, e] : entries_) {
    if (!e.status || e.sent) continue;
    out.push_back(*e.status);
    e.sent = true;
  }
  return out;
}

void TaskTable::MarkUnsent(const std::vector<TaskStatus>& statuses) { SetSent(statuses, false); }

void TaskTable::MarkSent(const std::vector<TaskStatus>& statuses) { SetSent(statuses, true); }

void TaskTable::SetSent(const std::vector<TaskStatus>& statuses, bool sent) {
  MutexLock lock(mu_);
  for (const auto& s : statuses) {
    auto it = entries_.find(s.task_id);
    if (it != entries_.end() && it->second.status && SameReport(*it->second.status, s)) it->second.sent = sent;
  }
}

bool TaskTable::HasUnsent() const {
  MutexLock lock(mu_);
  for (const auto& [id, e] : entries_) {
    if (e.status && !e.sent) return true;
  }
  return false;
}

std::vector<TaskStatus> TaskTable::All() const {
  MutexLock lock(mu_);
  std::vector<TaskStatus> out;
  for (const auto& [id, e] : entries_) {
    if (e.status) out.push_back(*e.status);
  }
  return out;
}

std::vector<StopOrder> TaskTable::StopAll() {
  MutexLock lock(mu_);
  std::vector<StopOrder> out;
  for (auto& [id, e] : entries_) {
    if (!e.status) continue;
    if (auto order = OrderStopLocked(id, e, e.stop_signal, e.grace)) out.push_back(*order);
  }
  return out;
}

std::vector<StopOrder> TaskTable::FenceAll(const std::string& why) {
  MutexLock lock(mu_);
  std::vector<StopOrder> out;
  for (auto& [id, e] : entries_) {
    if (!e.status) continue;
    if (auto order = OrderStopLocked(id, e, e.fencing_signal, e.fencing_grace)) {
      e.fenced = why;
      out.push_back(*order);
    }
  }
  return out;
}

std::vector<std::string> TaskTable::TakeDone() {
  MutexLock lock(mu_);
  Time now = clock_.Now();
  std::vector<std::string> done;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = it->second;
    if (e.status && e.status->final() && e.sent && !e.assigned) {
      done.push_back(it->first);
      started_[it->first] = now;
      forgotten_.emplace_back(now, it->first);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  while (!forgotten_.empty() && now - forgotten_.front().first > remember_started_) {
    auto it = started_.find(forgotten_.front().second);
    if (it != started_.end() && it->second == forgotten_.front().first) started_.erase(it);
    forgotten_.pop_front();
  }
  return done;
}

bool TaskTable::Started(const std::string& task_id) const {
  MutexLock lock(mu_);
  return started_.count(task_id) > 0;
}

bool TaskTable::Idle() const {
  MutexLock lock(mu_);
  for (const auto& [id, e] : entries_) {
    if (!e.status || !e.status->final()) return false;
  }
  return true;
}

}  // namespace abacus::agent

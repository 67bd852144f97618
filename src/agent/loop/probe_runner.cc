#include "agent/loop/probe_runner.h"

#include <algorithm>

#include "common/mutex.h"

namespace abacus::agent {

namespace {

// How often an idle worker looks at the clock again while tasks are probed (the clock may be a
// manual one that nothing signals).
constexpr std::chrono::milliseconds kSlice{5};

}  // namespace

ProbeRunner::ProbeRunner(const Clock& clock, Report report, int workers, AttemptFn attempt)
    : clock_(clock), report_(std::move(report)), workers_(std::max(workers, 1)), attempt_(std::move(attempt)) {}

ProbeRunner::~ProbeRunner() { Stop(); }

void ProbeRunner::Add(const std::string& task_id, const std::optional<AssignedProbe>& readiness,
                      const std::optional<AssignedProbe>& liveness, Time started_at) {
  if (!readiness && !liveness) return;
  MutexLock lock(mu_);
  if (stopping_ || tasks_.count(task_id) > 0) return;
  Entry& e = tasks_[task_id];
  if (readiness) e.readiness = Slot{ProbeTracker(readiness->spec, started_at), readiness->invalid};
  if (liveness) e.liveness = Slot{ProbeTracker(liveness->spec, started_at), liveness->invalid};
  e.reported = OutcomeOf(e);
  report_(task_id, e.reported);
  if (threads_.empty()) {
    for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { Work(); });
  }
  cv_.notify_all();
}

void ProbeRunner::Remove(const std::string& task_id) {
  MutexLock lock(mu_);
  tasks_.erase(task_id);
}

void ProbeRunner::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    tasks_.clear();
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

int ProbeRunner::attempts() const {
  MutexLock lock(mu_);
  return attempts_;
}

bool ProbeRunner::Probing(const std::string& task_id) const {
  MutexLock lock(mu_);
  return tasks_.count(task_id) > 0;
}

namespace {

// The tracker's trailing run of equal results, capped at the larger threshold; none before the
// first attempt.
std::optional<ProbeRun> RunOf(const ProbeTracker& t) {
  int32_t cap = std::max(t.spec().success_threshold, t.spec().failure_threshold);
  if (t.consecutive_failures() > 0) return ProbeRun{false, std::min(t.consecutive_failures(), cap)};
  if (t.consecutive_successes() > 0) return ProbeRun{true, std::min(t.consecutive_successes(), cap)};
  return std::nullopt;
}

}  // namespace

ProbeOutcome ProbeRunner::OutcomeOf(const Entry& e) {
  ProbeOutcome o;
  bool passing = true;  // ready (when probed) and no probe's latest attempt failed
  if (e.readiness) {
    const ProbeTracker& t = e.readiness->tracker;
    o.ready = t.state() == ProbeState::kHealthy;
    o.readiness_run = RunOf(t);
    passing = passing && *o.ready && t.consecutive_failures() == 0;
  }
  if (e.liveness) {
    const ProbeTracker& t = e.liveness->tracker;
    o.live = t.state() != ProbeState::kUnhealthy;
    o.liveness_run = RunOf(t);
    passing = passing && *o.live && t.consecutive_failures() == 0;
  }
  if (!passing) o.message = e.last_failure;
  return o;
}

void ProbeRunner::Work() {
  MutexLock lock(mu_);
  while (!stopping_) {
    // The due probe that has waited longest, not already being attempted by another worker.
    Time now = clock_.Now();
    std::string task;
    bool readiness = false;
    Slot* due = nullptr;
    for (auto& [id, e] : tasks_) {
      for (bool is_readiness : {true, false}) {
        std::optional<Slot>& slot = is_readiness ? e.readiness : e.liveness;
        if (!slot || slot->in_flight || !slot->tracker.Due(now)) continue;
        if (due == nullptr || slot->tracker.next_due() < due->tracker.next_due()) {
          due = &*slot;
          task = id;
          readiness = is_readiness;
        }
      }
    }
    if (due == nullptr) {
      if (tasks_.empty()) lock.Wait(cv_);
      else lock.WaitFor(cv_, kSlice);
      continue;
    }
    due->in_flight = true;
    ProbeSpec spec = due->tracker.spec();
    std::string invalid = due->invalid;
    lock.Unlock();
    ProbeResult result = invalid.empty() ? attempt_(spec) : ProbeResult{false, invalid};
    lock.Lock();
    auto it = tasks_.find(task);
    if (it == tasks_.end()) continue;  // removed meanwhile: the task stops or ended
    Entry& e = it->second;
    Slot& slot = readiness ? *e.readiness : *e.liveness;
    slot.in_flight = false;
    slot.tracker.Record(result, clock_.Now());
    ++attempts_;
    if (!result.ok) e.last_failure = (readiness ? "readiness: " : "liveness: ") + result.message;
    ProbeOutcome outcome = OutcomeOf(e);
    if (outcome != e.reported) {
      e.reported = outcome;
      report_(task, outcome);
    }
  }
}

}  // namespace abacus::agent

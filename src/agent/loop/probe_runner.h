// ProbeRunner: the readiness and liveness probes of the tasks the agent runs (docs/agent.md,
// "Probes"), on a few worker threads of its own, so a slow probe never holds up the status or
// control threads, nor the other tasks' probes.
//
// Each probe keeps a ProbeTracker: its attempts are due on the injected clock (the first at the
// task's start + initial delay, then one period after the previous attempt); an attempt itself
// (HTTP GET, TCP connect, a child process) is bounded by the probe's timeout in real time.
// After each attempt the task's ProbeOutcome is worked out again and, when it changed, handed
// to the report callback:
//
//   ready    the readiness probe's state is Healthy (false while Unknown or Unhealthy)
//   live     the liveness probe's state is not Unhealthy (true while Unknown)
//   message  the last failed attempt of either probe ("readiness: GET …: HTTP 503"), cleared
//            once every probe is Healthy and its last attempt passed
//
// The runner only reports: what to do about a failing liveness probe is the server's call.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/loop/protocol.h"
#include "agent/probe/probe.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace abacus::agent {

class ProbeRunner {
 public:
  // Called with the runner's lock held, in the order the outcomes arose: it must not call back
  // into the runner.
  using Report = std::function<void(const std::string& task_id, const ProbeOutcome& outcome)>;
  using AttemptFn = std::function<ProbeResult(const ProbeSpec&)>;

  ProbeRunner(const Clock& clock, Report report, int workers = 4, AttemptFn attempt = RunProbe);
  // Stops.
  ~ProbeRunner();
  ProbeRunner(const ProbeRunner&) = delete;
  ProbeRunner& operator=(const ProbeRunner&) = delete;

  // Starts probing `task_id`, started at `started_at`, and reports its first outcome (ready
  // false, live true) before any attempt. Nothing when it has neither probe, after Stop, or
  // when the task is already probed. The worker threads start with the first task.
  void Add(const std::string& task_id, const std::optional<AssignedProbe>& readiness,
           const std::optional<AssignedProbe>& liveness, Time started_at);
  // Stops probing `task_id` (it stops, or ended); an attempt in flight is not reported.
  void Remove(const std::string& task_id);
  // Stops probing everything and joins the workers (an attempt in flight ends within its
  // timeout). Idempotent.
  void Stop();

  // Attempts recorded so far (tests wait on it before moving the clock).
  int attempts() const;
  bool Probing(const std::string& task_id) const;

 private:
  struct Slot {
    ProbeTracker tracker;
    std::string invalid;
    bool in_flight = false;
  };
  struct Entry {
    std::optional<Slot> readiness, liveness;
    std::string last_failure;
    ProbeOutcome reported;
  };

  void Work();
  static ProbeOutcome OutcomeOf(const Entry& e);

  const Clock& clock_;
  Report report_;
  int workers_;
  AttemptFn attempt_;

  mutable Mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> tasks_ GUARDED_BY(mu_);
  int attempts_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);  // until Stop
};

}  // namespace abacus::agent

// Health probes for inference replicas: HTTP GET, TCP connect and exec, each attempt bounded
// by a timeout; a ProbeTracker turns attempts into a state with Kubernetes-style thresholds
// (success_threshold consecutive successes → Healthy, failure_threshold consecutive failures
// → Unhealthy) and schedules attempts every `period` on the injected clock.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/task_user.h"
#include "common/clock.h"
#include "common/status.h"

namespace abacus::agent {

enum class ProbeKind { kHttp, kTcp, kExec };

struct ProbeSpec {
  ProbeKind kind = ProbeKind::kHttp;
  std::string host = "127.0.0.1";  // http, tcp
  int port = 0;                    // http, tcp
  std::string path = "/";          // http
  std::vector<std::string> command;  // exec: healthy when it exits 0
  std::optional<TaskUser> user = std::nullopt;  // exec: run as the task's own user (nullopt: the agent's)
  Duration initial_delay{0};
  Duration period = std::chrono::seconds(10);
  Duration timeout = std::chrono::seconds(1);
  int success_threshold = 1;
  int failure_threshold = 3;

  // InvalidArgument naming the bad field (port range, empty command, thresholds < 1, timeout
  // <= 0, period < timeout is allowed but period must be > 0).
  Status Validate() const;
  // "http://127.0.0.1:8000/healthz", "tcp 127.0.0.1:6379", "exec cat /tmp/ready".
  std::string Describe() const;
};

struct ProbeResult {
  bool ok = false;
  // Success: "HTTP 200", "connected", "exited 0". Failure: what was probed and why, e.g.
  // "GET http://127.0.0.1:8000/health: connection refused", "GET …: HTTP 503",
  // "tcp 127.0.0.1:6379: timed out after 1s", "exec cat /tmp/ready: exited 1: …".
  std::string message;
};

// Runs one attempt of `spec`, never longer than about spec.timeout. HTTP: 200–399 is healthy.
ProbeResult RunProbe(const ProbeSpec& spec);

enum class ProbeState { kUnknown, kHealthy, kUnhealthy };
// Returns "Unknown", "Healthy" or "Unhealthy".
std::string_view ProbeStateName(ProbeState state);

class ProbeTracker {
 public:
  // The first attempt is due at `started_at` + initial_delay.
  ProbeTracker(ProbeSpec spec, Time started_at);

  // Returns true when an attempt is due at `now`.
  bool Due(Time now) const { return now >= next_due_; }
  // Records an attempt made at `now` and schedules the next one period later. Returns true when
  // the state changed.
  bool Record(const ProbeResult& result, Time now);

  ProbeState state() const { return state_; }
  int consecutive_successes() const { return successes_; }
  int consecutive_failures() const { return failures_; }
  const std::string& last_message() const { return last_message_; }
  Time next_due() const { return next_due_; }
  const ProbeSpec& spec() const { return spec_; }

 private:
  ProbeSpec spec_;
  Time next_due_;
  ProbeState state_ = ProbeState::kUnknown;
  int successes_ = 0, failures_ = 0;
  std::string last_message_;
};

// A tracker plus the clock and the attempt function (RunProbe unless a test injects one).
class Prober {
 public:
  using AttemptFn = std::function<ProbeResult(const ProbeSpec&)>;
  Prober(ProbeSpec spec, const Clock& clock, AttemptFn attempt = RunProbe)
      : clock_(clock), attempt_(std::move(attempt)), tracker_(std::move(spec), clock.Now()) {}
  // Runs an attempt when one is due; returns true when the state changed.
  bool Tick();
  const ProbeTracker& tracker() const { return tracker_; }

 private:
  const Clock& clock_;
  AttemptFn attempt_;
  ProbeTracker tracker_;
};

}  // namespace abacus::agent

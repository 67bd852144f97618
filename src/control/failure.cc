#include "control/failure.h"

#include <array>

namespace abacus::control {
namespace {

constexpr std::array<std::string_view, 8> kNames = {"",         "ExitCode",    "OOMKilled",    "Signal",
                                                     "NodeLost", "DeviceError", "AgentRestart", "Interrupted"};

}  // namespace

std::string_view FailureClassName(FailureClass c) { return kNames[static_cast<size_t>(c)]; }

FailureClass ClassifyFailure(const TaskView& t) {
  if (!t.ended() || t.stop_requested) return FailureClass::kNone;
  if (t.phase == TaskPhase::kLost) {
    switch (t.lost_reason) {
      case LostReason::kDeviceError: return FailureClass::kDeviceError;
      case LostReason::kAgentRestart: return FailureClass::kAgentRestart;
      case LostReason::kNone:
      case LostReason::kNodeLost: return FailureClass::kNodeLost;
    }
  }
  if (t.oom_killed) return FailureClass::kOOMKilled;
  if (t.stopped) return FailureClass::kInterrupted;
  if (t.signal != 0) return FailureClass::kSignal;
  if (t.exit_code != 0) return FailureClass::kExitCode;
  return FailureClass::kNone;
}

bool ConsumesRetry(FailureClass c) {
  return c == FailureClass::kExitCode || c == FailureClass::kOOMKilled || c == FailureClass::kSignal;
}

Duration RetryBackoff(const RestartPolicy& p, int32_t retry, Duration cap) {
  Duration d = std::chrono::seconds(std::max(p.backoff_seconds, 0));
  for (int32_t i = 1; i < retry && d < cap; ++i) d *= 2;
  return d < cap ? d : cap;
}

const TaskView* FirstFailure(const std::vector<TaskView>& tasks) {
  const TaskView* first = nullptr;
  for (const TaskView& t : tasks) {
    if (ClassifyFailure(t) == FailureClass::kNone) continue;
    if (first == nullptr || t.finished_at < first->finished_at ||
        (t.finished_at == first->finished_at && t.ref() < first->ref())) {
      first = &t;
    }
  }
  return first;
}

}  // namespace abacus::control

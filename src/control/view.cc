#include "control/view.h"

#include <array>

#include "control/names.h"
#include "wire/task_phase.h"

namespace abacus::control {
namespace {

// A reported phase is the protocol's (wire/task_phase.h, its one name table) one step up: kPending
// ("", not reported yet) comes first.
static_assert(static_cast<int>(TaskPhase::kRunning) == static_cast<int>(wire::TaskPhase::kRunning) + 1 &&
              static_cast<int>(TaskPhase::kStopping) == static_cast<int>(wire::TaskPhase::kStopping) + 1 &&
              static_cast<int>(TaskPhase::kExited) == static_cast<int>(wire::TaskPhase::kExited) + 1 &&
              static_cast<int>(TaskPhase::kLost) == static_cast<int>(wire::TaskPhase::kLost) + 1);
constexpr std::array<std::string_view, 4> kLostNames = {"", "NodeLost", "DeviceError", "AgentRestart"};

}  // namespace

std::string_view TaskPhaseName(TaskPhase p) {
  if (p == TaskPhase::kPending) return "";
  return wire::TaskPhaseName(static_cast<wire::TaskPhase>(static_cast<int>(p) - 1));
}

Result<TaskPhase> ParseTaskPhase(std::string_view text) {
  if (text.empty()) return TaskPhase::kPending;
  if (auto p = wire::ParseTaskPhase(text)) return static_cast<TaskPhase>(static_cast<int>(*p) + 1);
  return InvalidArgument("unknown task phase \"" + std::string(text) + "\" (want \"\", Running, Stopping, Exited, Lost)");
}

std::string_view LostReasonName(LostReason r) { return kLostNames[static_cast<size_t>(r)]; }

Result<LostReason> ParseLostReason(std::string_view text) {
  return ParseName<LostReason>(kLostNames, text, "lost reason");
}

Time FirstStart(const std::vector<TaskView>& tasks) {
  Time first{};
  for (const TaskView& t : tasks) {
    if (IsSet(t.started_at) && (!IsSet(first) || t.started_at < first)) first = t.started_at;
  }
  return first;
}

bool TaskView::succeeded() const {
  return phase == TaskPhase::kExited && !stopped && exit_code == 0 && signal == 0 && !oom_killed;
}

}  // namespace abacus::control

#include "control/view.h"

#include <array>

#include "control/names.h"

namespace abacus::control {
namespace {

constexpr std::array<std::string_view, 5> kPhaseNames = {"", "Running", "Stopping", "Exited", "Lost"};
constexpr std::array<std::string_view, 4> kLostNames = {"", "NodeLost", "DeviceError", "AgentRestart"};

}  // namespace

std::string_view TaskPhaseName(TaskPhase p) { return kPhaseNames[static_cast<size_t>(p)]; }

Result<TaskPhase> ParseTaskPhase(std::string_view text) {
  return ParseName<TaskPhase>(kPhaseNames, text, "task phase");
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

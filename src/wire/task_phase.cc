#include "wire/task_phase.h"

#include <array>
#include <utility>

namespace abacus::wire {
namespace {

constexpr std::array<std::pair<TaskPhase, std::string_view>, 4> kNames = {{
    {TaskPhase::kRunning, "Running"},
    {TaskPhase::kStopping, "Stopping"},
    {TaskPhase::kExited, "Exited"},
    {TaskPhase::kLost, "Lost"},
}};

}  // namespace

std::string_view TaskPhaseName(TaskPhase phase) {
  for (const auto& [p, name] : kNames) {
    if (p == phase) return name;
  }
  return "Lost";
}

std::optional<TaskPhase> ParseTaskPhase(std::string_view name) {
  for (const auto& [p, n] : kNames) {
    if (n == name) return p;
  }
  return std::nullopt;
}

}  // namespace abacus::wire

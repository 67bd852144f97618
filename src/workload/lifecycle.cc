#include "workload/lifecycle.h"

#include <array>
#include <initializer_list>
#include <string>

namespace abacus {
namespace {

using W = WorkloadState;
using T = TaskState;

constexpr std::array<std::string_view, kWorkloadStateCount> kWorkloadNames = {
    "Pending", "Admitted", "Running", "Preempting", "Requeued", "Succeeded", "Failed", "Cancelled"};
constexpr std::array<std::string_view, kTaskStateCount> kTaskNames = {
    "Pending", "Assigned", "Starting", "Running", "Terminating", "Succeeded", "Failed", "Killed", "Lost"};

// Legal moves as bit sets over the target state, indexed by the source state.
constexpr uint32_t Bits(std::initializer_list<int> states) {
  uint32_t b = 0;
  for (int s : states) b |= 1u << s;
  return b;
}
#define S(x) static_cast<int>(x)

constexpr std::array<uint32_t, kWorkloadStateCount> kWorkloadMoves = {
    /*Pending*/ Bits({S(W::kAdmitted), S(W::kFailed), S(W::kCancelled)}),
    /*Admitted*/
    Bits({S(W::kRunning), S(W::kPending), S(W::kPreempting), S(W::kFailed), S(W::kCancelled)}),
    /*Running*/
    Bits({S(W::kSucceeded), S(W::kFailed), S(W::kPreempting), S(W::kRequeued), S(W::kCancelled)}),
    /*Preempting*/ Bits({S(W::kRequeued), S(W::kSucceeded), S(W::kFailed), S(W::kCancelled)}),
    /*Requeued*/ Bits({S(W::kAdmitted), S(W::kFailed), S(W::kCancelled)}),
    0, 0, 0};

constexpr std::array<uint32_t, kTaskStateCount> kTaskMoves = {
    /*Pending*/ Bits({S(T::kAssigned), S(T::kKilled)}),
    /*Assigned*/
    Bits({S(T::kStarting), S(T::kFailed), S(T::kTerminating), S(T::kKilled), S(T::kLost)}),
    /*Starting*/ Bits({S(T::kRunning), S(T::kFailed), S(T::kTerminating), S(T::kLost)}),
    /*Running*/ Bits({S(T::kSucceeded), S(T::kFailed), S(T::kTerminating), S(T::kLost)}),
    /*Terminating*/ Bits({S(T::kKilled), S(T::kSucceeded), S(T::kFailed), S(T::kLost)}),
    0, 0, 0, 0};
#undef S

template <typename E, size_t N>
Result<E> ParseName(std::string_view text, const std::array<std::string_view, N>& names,
                    std::string_view what) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  return InvalidArgument("unknown " + std::string(what) + " state '" + std::string(text) + "'");
}

template <typename E, size_t N>
std::vector<E> Next(E from, const std::array<uint32_t, N>& moves) {
  std::vector<E> out;
  for (size_t i = 0; i < N; ++i) {
    if (moves[static_cast<size_t>(from)] & (1u << i)) out.push_back(static_cast<E>(i));
  }
  return out;
}

}  // namespace

std::string_view WorkloadStateName(WorkloadState s) { return kWorkloadNames[static_cast<size_t>(s)]; }
Result<WorkloadState> ParseWorkloadState(std::string_view text) {
  return ParseName<WorkloadState>(text, kWorkloadNames, "workload");
}
bool IsTerminal(WorkloadState s) { return kWorkloadMoves[static_cast<size_t>(s)] == 0; }
bool CanTransition(WorkloadState from, WorkloadState to) {
  return (kWorkloadMoves[static_cast<size_t>(from)] & (1u << static_cast<int>(to))) != 0;
}
std::vector<WorkloadState> NextStates(WorkloadState from) { return Next(from, kWorkloadMoves); }

Status Transition(WorkloadState& state, WorkloadState to) {
  if (!CanTransition(state, to)) {
    std::string msg = "illegal workload transition " + std::string(WorkloadStateName(state)) +
                      " -> " + std::string(WorkloadStateName(to));
    if (IsTerminal(state)) msg += " (" + std::string(WorkloadStateName(state)) + " is final)";
    return FailedPrecondition(std::move(msg));
  }
  state = to;
  return Status::OK();
}

std::string_view TaskStateName(TaskState s) { return kTaskNames[static_cast<size_t>(s)]; }
Result<TaskState> ParseTaskState(std::string_view text) {
  return ParseName<TaskState>(text, kTaskNames, "task");
}
bool IsTerminal(TaskState s) { return kTaskMoves[static_cast<size_t>(s)] == 0; }
bool CanTransition(TaskState from, TaskState to) {
  return (kTaskMoves[static_cast<size_t>(from)] & (1u << static_cast<int>(to))) != 0;
}
std::vector<TaskState> NextStates(TaskState from) { return Next(from, kTaskMoves); }

Status Transition(TaskState& state, TaskState to) {
  if (!CanTransition(state, to)) {
    std::string msg = "illegal task transition " + std::string(TaskStateName(state)) + " -> " +
                      std::string(TaskStateName(to));
    if (IsTerminal(state)) msg += " (" + std::string(TaskStateName(state)) + " is final)";
    return FailedPrecondition(std::move(msg));
  }
  state = to;
  return Status::OK();
}

}  // namespace abacus

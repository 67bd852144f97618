#include "server/requeue_reason.h"

#include <array>
#include <utility>

namespace abacus::server {
namespace {

// The one table between the enum and its stored names.
constexpr std::array<std::pair<RequeueReason, std::string_view>, 11> kNames{{
    {RequeueReason::kNone, ""},
    {RequeueReason::kPreempted, "Preempted"},
    {RequeueReason::kRetry, "Retry"},
    {RequeueReason::kDrained, "Drained"},
    {RequeueReason::kRequeued, "Requeued"},
    {RequeueReason::kSuspended, "Suspended"},
    {RequeueReason::kNodeLost, "NodeLost"},
    {RequeueReason::kAgentRestart, "AgentRestart"},
    {RequeueReason::kDeviceError, "DeviceError"},
    {RequeueReason::kInterrupted, "Interrupted"},
    {RequeueReason::kOther, "Other"},
}};

}  // namespace

std::string_view RequeueReasonName(RequeueReason r) {
  for (const auto& [reason, name] : kNames) {
    if (reason == r) return name;
  }
  return "Other";
}

RequeueReason ParseRequeueReason(std::string_view name) {
  for (const auto& [reason, n] : kNames) {
    if (n == name) return reason;
  }
  return RequeueReason::kOther;
}

}  // namespace abacus::server

// Why a workload last went back to wait (WorkloadRecord::requeue_reason) and why an operator
// stopped it (WorkloadRecord::evict_reason): one enum and one name table. The stored and served
// form is the name ("Preempted", "Drained", …), as it was when the field was a string.
#pragma once

#include <cstdint>
#include <string_view>

namespace abacus::server {

enum class RequeueReason : uint8_t {
  kNone,          // "": not requeued (or admitted since) / not stopped by an operator
  kPreempted,     // the scheduler preempted it
  kRetry,         // a user failure that used one of restartPolicy.maxRetries
  kDrained,       // abacus drain (fleet.h)
  kRequeued,      // abacus requeue
  kSuspended,     // abacus suspend
  kNodeLost,      // infrastructure failures (control/failure.h), requeued without using a retry
  kAgentRestart,
  kDeviceError,
  kInterrupted,
  kOther,         // any other name read back (not written by this version): an infrastructure failure
};

// Returns the stored name of `r` ("" for kNone, "Other" for kOther).
std::string_view RequeueReasonName(RequeueReason r);
// Returns the reason named `name`: kNone for "", kOther for a name this version does not know.
RequeueReason ParseRequeueReason(std::string_view name);

}  // namespace abacus::server

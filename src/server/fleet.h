// Operator control of the fleet (issue 23): cordon, uncordon and drain of nodes; hold, release,
// suspend, resume, requeue and priority of workloads; suspend and resume of queues. The
// ControlPlane runs them (fleet.cc, routes in fleet_api.cc); this header holds their vocabulary.
//
// Draining is one mechanism, reusable by any rule that wants a node emptied (health-driven
// draining, issue 26): DrainNode with a DrainOrder; ProgressDrains moves every Draining node on.
// Work leaves a node through the preemption path (Preempting: checkpoint signal, grace, stop),
// except a service's replica or a batch's slot, which leaves alone (SettleUnits: stopped, removed,
// placed again elsewhere) while the rest of the workload runs on. Whole workloads are requeued
// with a typed reason ("Drained", "Requeued", "Suspended") so that metering ends
// its usage under that reason and no retry is used.
#pragma once

#include <chrono>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace abacus::server {

struct WorkloadRecord;
struct NodeRecord;
class Ledger;

// A drain: how long non-preemptible work may run on before it is requeued, or all at once.
struct DrainOrder {
  Duration grace = std::chrono::minutes(10);
  bool requeue_all = false;  // --requeue: requeue every workload there now (checkpoint signal first)
  std::string by;            // the user (or rule) that drains
  std::string reason;
};

// True when a drain of node `n` stops `w`'s work there now: `n` is Draining and the work is
// preemptible, or the drain requeues all, or its grace is over.
bool DrainStopsNow(const Ledger& ledger, const WorkloadRecord& w, const NodeRecord& n, Time now);

// What an operator does to one workload.
enum class WorkloadControl : uint8_t {
  kHold,     // pending work: kept out of scheduling
  kRelease,  // ends a hold
  kSuspend,  // running work is stopped and requeued; then (and pending work) kept out
  kResume,   // ends a suspension
  kRequeue,  // running work back to wait (checkpoint signal first; no retry used)
};
// Returns "hold", "release", "suspend", "resume" or "requeue".
std::string_view WorkloadControlName(WorkloadControl c);

// The pending reason code of a workload an operator keeps waiting: "Held", "Suspended" or
// "QueueSuspended" (its queue is suspended).
std::string HoldCode(const WorkloadRecord& r);

}  // namespace abacus::server

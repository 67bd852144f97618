// Pending reasons: for every workload left pending, the real bottleneck with numbers.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sched/quota.h"
#include "sched/types.h"

namespace abacus::sched {

// Why a node was passed over for a task.
enum class FilterReason : uint8_t {
  kNotReady,      // node not Ready (NotReady, Cordoned, Draining)
  kPool,          // node pool not open to the queue's tenant
  kReservedPool,  // outside the service's reservation pool (its overflow is Deny)
  kCluster,       // node's cluster not among the queue's clusters
  kSelector,      // labels do not match the node selector
  kTaint,         // an untolerated taint
  kRuntime,       // driver/runtime version constraint not met
  kCpu,           // not enough free CPU
  kMemory,        // not enough free memory
  kExtended,      // not enough of an extended resource ("rdma/hca") free, or none at all
  kNoDevice,      // no device of the assigned flavor at all
  kDevices,       // not enough free devices / share of the flavor
  kDeviceMemory,  // devices free but with too little device memory
  kTopology,      // enough devices, but not inside one interconnect domain / NUMA node
  kReserved,      // held for a blocked gang workload ahead in order
  kWindowReserved,// a time-window reservation (kind Reservation) holds it for someone else
  kMaxPerNode,    // room, but the group's maxPerNode tasks are there already
  kSpread,        // room, but one more task would break the group's spread (maxSkew) or the node lacks its label
  kAntiAffinity,  // room, but it runs a service that anti-affinity keeps apart from this one
  kCount,
};
// Returns a short phrase: "not ready", "pool", "node selector", …
std::string_view FilterReasonName(FilterReason r);

struct PlacementDetail {
  int32_t group = 0;
  FlavorId flavor = kCpuFlavorId;
  int32_t nodes_total = 0;
  int32_t nodes_feasible = 0;  // nodes that pass every filter for one task
  std::array<int32_t, static_cast<size_t>(FilterReason::kCount)> filtered{};
  std::string best_node;       // the candidate closest to fitting
  std::string best_lacks;      // what it lacks: "6 of 8 free in one NVLink domain"
  int32_t tasks_needed = 0;    // tasks of the group
  int32_t tasks_placeable = 0; // how many could be placed now
  std::string runtime_needed;  // the runtime constraints, when nodes were ruled out by them
  std::string selector_needed; // the node selector, when nodes were ruled out by it
  std::string rule_example;    // the first node a placement rule ruled out, with numbers
  int32_t max_per_node = 0;    // the group's maxPerNode (0: none)
  int32_t rule_room = 0;       // with maxPerNode: tasks the nodes that fit one could still take
  std::string reservation_note;// the first time-window reservation that ruled out a node, why
};

enum class PendingCode : uint8_t {
  kQuota,               // quota exhausted and nothing can be borrowed or reclaimed
  kNoFlavor,            // the queue lists no flavor the workload accepts
  kPlacement,           // quota allows it, no node can host it
  kWaitingForPreemption,// victims were preempted; waiting for them to stop
  kBlockedByStrictFifo, // a StrictFIFO queue's head is stuck
  kReservedForGang,     // capacity held for a gang workload ahead
  kInvalid,             // the request can never fit (bigger than any node)
  kHeldForPreemptor,    // it was preempted to reclaim capacity; that capacity waits for its preemptor
};
inline constexpr PendingCode kLastPendingCode = PendingCode::kHeldForPreemptor;
std::string_view PendingCodeName(PendingCode c);

struct PendingReason {
  std::string workload_id;
  PendingCode code = PendingCode::kQuota;
  std::string message;                     // one line, with numbers
  std::optional<QuotaDetail> quota;
  std::optional<PlacementDetail> placement;
  std::string preemption;                  // why preemption did not help (empty if not tried)
  // Fair share on and its queue's head would borrow: how the decayed usage ordered its queue
  // against a cohort sibling ("queue team-a decayed usage 412 GPU-h vs team-b 37 GPU-h: team-b first …").
  std::string fair_share;
  int32_t position = 0;                    // 1-based position in its queue
  int32_t ahead = 0;                       // workloads ahead of it in its queue
  std::vector<std::string> ahead_ids;      // the first few of them
  int32_t base_priority = 0;
  int32_t effective_priority = 0;
  Duration waited{0};
  Duration overrun{0};                     // time past maxQueueWait (0 if none declared)
};

// Renders a QuotaDetail as "needs 8 gpu/nvidia/A100-80G; queue nlp-train uses 14 of nominal
// 16 (borrowing limit 4); cohort can lend 0; borrowed by vision-train 6".
std::string DescribeQuota(const QuotaDetail& d, const std::string& queue);
// Renders a PlacementDetail as "0 of 120 nodes fit …; best: node-a12 (6 of 8 free in one
// NVLink domain); filtered: 100 by free devices, 20 by node selector".
std::string DescribePlacement(const PlacementDetail& d);
// Renders the whole reason for people, several lines.
std::string DescribePending(const PendingReason& r);

}  // namespace abacus::sched

// Event mode: a trace replayed on virtual time through sched::Schedule, the way the server runs
// it (docs/simulator.md §5).
//
//   1. Workloads arrive at their submit time and wait in their queue (pending).
//   2. At every instant where something happens (arrivals, completions, preempted workloads
//      that finished their grace period, an aging step that matters) the driver runs the
//      server's cycle kinds over an incrementally kept Snapshot (admitted workloads) plus the
//      pending workloads that cycle retries: only the fresh arrivals when nothing was freed, the
//      first `bounded_per_queue` of each queue when capacity was freed, all of them after a
//      requeue, an aging step or on the virtual timer.
//   3. Admissions start at once and finish after their (remaining) duration; victims keep their
//      capacity for their grace period, then stop and requeue with their original submit time
//      and the run time they had left (they checkpointed). The capacity of a preemptor's victims
//      is held for it until the last one stopped; it is then offered to the preemptor first.
//   4. Device faults (optional, EventSimOptions::faults): each fault, recovery and uncordon goes
//      through the server's health rule (sched/health_rule.h) at its time; a device out of
//      service takes no work, the workloads with a task on a faulted device lose their attempt
//      and requeue (original submit time, the run time they had left when the attempt started:
//      the fault gave them no grace to checkpoint), a node with enough faults is cordoned, and
//      the driver wakes at the rule's next settle time to end probations and the cordon.
//   5. Metrics: per queue and tenant — completion time, queueing delay (submit → first start),
//      preemptions, borrowing and reclaim; GPU/NPU/CPU allocation and queue length over time;
//      every workload still pending at the end with its reason (sched::DescribePending).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sched/health_rule.h"
#include "sched/scheduler.h"
#include "sim/events_rules.h"
#include "sim/fault_schedule.h"
#include "sim/generic_trace.h"
#include "sim/openb_trace.h"
#include "tenancy/tenancy_config.h"

namespace abacus::sim {

// One workload of the trace in scheduler form.
struct EventJob {
  sched::WorkloadInfo workload;          // pending form: id, name, queue, priority, groups
  int64_t submit_s = 0;                  // seconds from trace start
  std::optional<int64_t> duration_s;     // absent: runs until the simulation ends
};

struct EventInput {
  sched::Snapshot cluster;               // nodes, queues, cohorts, flavor weights, pool tenants
  std::vector<EventJob> jobs;            // by submit time, then trace order
  std::vector<std::string> warnings;
};

struct EventInputOptions {
  std::string trace;        // generic .yaml, folder with nodes.csv + workloads.csv, or openb pod .csv
  std::string config;       // `abacus apply` YAML; empty: one unlimited queue per trace queue
  std::string nodes;        // openb node list (default: the GPU node list next to the pod list)
  std::string openb_queue = "default";
  bool skip_bad_rows = false;
};

// Loads the trace and config named by `options`.
Result<EventInput> LoadEventInput(const EventInputOptions& options);

// Builds the scheduler's view of a generic trace. With `config`, queues, cohorts, priority
// classes, flavor weights and pools come from it (every queue of the trace must exist there);
// without, each trace queue gets a quota equal to the whole cluster (quotas never bind).
Result<EventInput> BuildEventInput(const GenericTrace& trace, const TenancyConfig* config);

// Builds the scheduler's view of an openb cluster and pod list: every pod one workload in
// `queue`, QoS → priority class (OpenbPriorityClass), duration = deletion − creation; pods
// without a creation time are left out (counted in warnings).
Result<EventInput> BuildOpenbEventInput(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                                        const TenancyConfig* config, const std::string& queue);

// Converts tenancy objects to the scheduler's queues and cohorts (quantities in ledger units).
// Fills snapshot->queues, cohorts, flavor_weight_milli and pool_tenants.
Status TenancyToSnapshot(const TenancyConfig& config, sched::Snapshot* snapshot);

struct EventSimOptions {
  sched::SchedulerConfig config;
  std::function<void(const std::string&)> progress;  // called about twice per second of wall time
  int64_t timeline_points = 1000;                     // the timeline is thinned to about this many
  // The server's incremental cycles (ControlPlaneOptions): waiting workloads per queue retried
  // when capacity frees, and the (virtual) timer that retries all of them after a bounded cycle
  // left some out.
  size_t bounded_per_queue = 256;
  int64_t full_cycle_interval_s = 1;
  // Hold the capacity of a preemptor's victims for it until they all stopped, then offer it to
  // the preemptor first (false: like the server today, whoever comes first in the next cycle).
  bool preemptor_claims = true;
  // false: one full cycle over every waiting workload at each instant (the reference the
  // incremental cycles are checked against; slow on big traces).
  bool incremental = true;
  // Rounds of events and cycles at one virtual instant after which its preemptions are no longer
  // applied (a warning says so): with grace 0, two workloads that each outrank the other while
  // waiting (aged priority) and not while running (base priority) would evict each other forever.
  int64_t max_rounds_per_instant = 1000;
  // The horizon (seconds from trace start): events after it are not replayed, and what runs
  // then is counted up to it. nullopt: the last arrival or departure in the trace
  // (TraceHorizon), so runs of one trace compare across policies.
  std::optional<int64_t> until_s;
  // Honour the workloads' placement rules (maxPerNode, spread, antiAffinity) and extended
  // resource requests. false: schedule as if they had none and only count the violations (what a
  // scheduler that cannot express them does).
  bool placement_rules = true;
  // Device faults to replay (fault_schedule.h), in time order, and the health rule's thresholds
  // (the server's defaults unless set). Empty: no device ever fails.
  std::vector<FaultEvent> faults;
  sched::HealthPolicy health;
};

// Returns the last arrival or departure (submit + duration) of `input`'s workloads, in seconds
// from trace start; 0 for an empty trace.
int64_t TraceHorizon(const EventInput& input);

// How many cycles of each kind ran (docs/simulator.md §5).
struct CycleCounts {
  int64_t fresh = 0;       // only the arrivals since the last cycle (nothing was freed)
  int64_t bounded = 0;     // capacity was freed: the first bounded_per_queue of each queue
  int64_t full = 0;        // every pending workload (after a requeue, an aging step, the timer)
  int64_t nominated = 0;   // a preemptor alone, on the capacity its victims gave back
  int64_t aging_steps = 0; // aging steps that could change a decision (each asks for a full cycle)
};

// Order statistics of a set of durations, in seconds.
struct DurationStats {
  int64_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};

// One queue's (or tenant's) numbers.
struct GroupReport {
  std::string name;
  std::string tenant;  // for a queue: its tenant
  int64_t submitted = 0;
  int64_t completed = 0;
  int64_t running_at_end = 0;
  int64_t pending_at_end = 0;
  DurationStats queueing;      // submit → first start
  DurationStats completion;    // submit → finish (completed workloads only)
  int64_t preempted = 0;       // times its workloads were chosen as victims
  int64_t reclaimed = 0;       // of which to give back borrowed quota (reason reclaim-quota)
  int64_t borrowing_admissions = 0;   // admissions that ran partly on borrowed quota
  double borrowed_device_hours = 0;   // device-hours run by borrowing admissions (accelerators)
  double device_hours = 0;            // device-hours run (accelerators)
  std::vector<double> device_hours_by_day;  // the same per day of the run (day 0 first)
  int64_t fault_requeued = 0;         // attempts lost to a device fault (the workload requeued)
  double fault_lost_device_hours = 0; // device-hours those attempts had run (thrown away)
};

struct UtilizationSample {
  int64_t t = 0;             // seconds from trace start
  double gpu_pct = 0, npu_pct = 0, cpu_pct = 0;  // allocated / capacity
  int32_t pending = 0, running = 0;
};

// One pool's capacity and time-weighted allocation over [start_s, end_s].
struct PoolUtilization {
  std::string pool;
  int32_t nodes = 0;
  int64_t device_milli = 0, cpu_milli = 0;  // capacity (accelerators: GPU and NPU together)
  double mean_device_pct = 0, mean_cpu_pct = 0;
  double device_hours = 0;                  // accelerator device-hours allocated
};

struct UnplacedWorkload {
  std::string workload;
  std::string queue;
  std::string code;     // sched::PendingCodeName
  std::string reason;   // sched::DescribePending
};

// What happened to one workload (tests compare placements with a direct Schedule() run).
struct JobOutcome {
  std::string id;
  std::optional<int64_t> first_start_s;
  std::optional<int64_t> finish_s;
  int32_t preemptions = 0;
  int32_t fault_requeues = 0;            // attempts lost to device faults
  std::vector<std::string> first_nodes;  // node of each task at its first start
  std::vector<int32_t> first_devices;    // devices of each task at its first start
};

// One change the health rule made (or an operator's uncordon), for the report.
struct HealthChange {
  enum class Kind : uint8_t { kFault, kRecovering, kRecovered, kCordoned, kUncordoned, kOperatorUncordon };
  int64_t t_s = 0;
  std::string node;
  Kind kind = Kind::kFault;
  int32_t device = -1;  // kFault, kRecovering, kRecovered
  std::string detail;   // kFault: the reason; kCordoned: the rule's reason
};

// Returns "fault", "recovering", "recovered", "cordoned", "uncordoned" or "operator-uncordon".
const char* HealthChangeName(HealthChange::Kind kind);

// What the device faults did over the run (all zero without EventSimOptions::faults).
struct FaultReport {
  int64_t events = 0;             // schedule events replayed (up to the horizon)
  int64_t device_faults = 0;      // faults the rule recorded (a device in service reported unhealthy)
  int64_t requeued = 0;           // workload attempts lost to a fault (requeued)
  int64_t cordons = 0;            // nodes cordoned by abacus/health
  int64_t uncordons = 0;          // health cordons the clean window ended
  int64_t operator_uncordons = 0; // `uncordon` events
  double lost_device_hours = 0;   // device-hours the lost attempts had run (thrown away)
  double unhealthy_device_hours = 0;  // device-hours out of service (unhealthy or on probation) in [start, end]
  std::vector<HealthChange> log;  // in time order
};

struct EventSimResult {
  int64_t start_s = 0, end_s = 0;   // first event time and the horizon (EventSimOptions::until_s)
  int64_t cycles = 0;               // scheduling cycles run (sched::Schedule calls)
  CycleCounts cycle_kinds;
  double seconds = 0;               // wall time
  double mean_gpu_pct = 0, mean_npu_pct = 0, mean_cpu_pct = 0;  // time-weighted over [start, end]
  int64_t gpu_milli = 0, npu_milli = 0, cpu_milli = 0;          // capacity
  GroupReport total;
  std::vector<GroupReport> queues;   // in config/trace order
  std::vector<GroupReport> tenants;  // by name
  std::vector<UtilizationSample> timeline;
  std::vector<PoolUtilization> pools;  // by pool name
  std::vector<UnplacedWorkload> unplaced;
  std::vector<JobOutcome> jobs;      // in input order
  std::vector<std::string> warnings; // e.g. preemptions left out to end a same-instant loop
  // What the starts broke of the trace's maxPerNode, spread, antiAffinity and extended capacity,
  // checked from the replay's own placements (ReplayRuleTally). Zero whenever placement_rules is on.
  ReplayViolations violations;
  FaultReport faults;
};

// Replays `input` and returns its metrics. Deterministic: no wall clock enters a decision.
EventSimResult RunEventSim(const EventInput& input, const EventSimOptions& options);

}  // namespace abacus::sim

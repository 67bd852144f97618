// Ledger records as the server keeps and stores them: a submitted workload with its lifecycle
// state and placements, and a node. Each has a JSON form (the store document and the REST body).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "model/node.h"
#include "sched/health_rule.h"
#include "server/requeue_reason.h"
#include "workload/lifecycle.h"
#include "workload/workload.h"

namespace abacus::server {

// Store kinds.
inline constexpr char kWorkloadKind[] = "workload";
inline constexpr char kNodeKind[] = "node";

// One device (or share of one) held by a placed task.
struct DeviceGrantRecord {
  int index = 0;  // Device::index on the node
  int32_t milli = 0;
  int64_t memory = 0;
  bool operator==(const DeviceGrantRecord&) const = default;
};

// Where one task of a workload was placed, and how its run on that node went (agents report
// it; phase stays empty on simulated nodes).
struct PlacementRecord {
  int32_t group = 0;
  int32_t replica = 0;
  std::string node;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<DeviceGrantRecord> devices;
  std::string phase;  // "", Running, Stopping, Exited, Lost
  bool stop_requested = false;  // the server told the agent to stop it (a controller decision)
  std::string stop_signal;      // with stop_requested: the signal, then SIGKILL after stop_grace
  int32_t stop_grace = 0;
  // InferenceService: the server decided to stop it and publishes it as draining until this
  // time (spec drainSeconds), then sets stop_requested with stop_signal/stop_grace. Epoch: not
  // draining.
  Time drain_until{};
  std::string lost_reason;      // with phase Lost: NodeLost, DeviceError, AgentRestart
  std::optional<bool> ready;    // readiness probe, as its agent last reported it
  std::optional<bool> live;     // liveness probe
  // The probes' latest runs of equal attempts as the agent counted them (capped at the larger
  // threshold): n > 0 that many successes in a row, n < 0 that many failures, 0 none reported.
  int32_t readiness_run = 0;
  int32_t liveness_run = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool oom_killed = false;
  bool stopped = false;  // it ended because it was told to stop
  std::string message;   // "exited 3", "OOM-killed", …
  Time started_at{};
  Time finished_at{};
  // The run of this slot within the attempt: 0 first, +1 each time the slot runs again (a
  // replica restart, a new version, the next array task in a batch slot). Part of the task id.
  int32_t run = 0;
  int32_t index = -1;       // BatchJob: the array task the slot runs (-1: none yet)
  std::string version;      // InferenceService: the version the replica runs (ABACUS_VERSION)
  bool routed = false;      // InferenceService: traffic goes to it (the controller's SetReady)
  std::string address;      // InferenceService: "host:port" the replica listens on, as its agent reported it
  Time restart_at{};        // set with stop_requested by a RestartReplica/SetVersion: run again
                            // once the task ended, not before this time
  bool restart = false;
  // Once it exited: the results file the task wrote, as its agent uploaded it (an Evaluation's
  // metrics, evaluation_archive.h), or why the agent did not take it.
  std::optional<std::string> results;
  std::string results_error;
  bool operator==(const PlacementRecord&) const = default;
};

// Temporary quota granted to one workload alone (an Experiment's approved spec.temporaryQuota):
// admission counts it on top of the queue's quota; `until` epoch: not admitted yet (the expiry
// counts from admission).
struct QuotaGrantRecord {
  QuotaResource resource;
  Quantity amount;
  Time until{};
  bool operator==(const QuotaGrantRecord&) const = default;
};

// A tenant admin's answer to a workload's temporary quota request.
struct QuotaDecisionRecord {
  bool approved = false;
  std::string by;
  Time at{};
  bool operator==(const QuotaDecisionRecord&) const = default;
};

// One revision of a workload's mutable fields (an update, server/workload_update.h): the
// template its tasks run — for a service, the tasks of replicas on `version`.
struct RevisionRecord {
  int32_t revision = 1;
  std::string version;  // InferenceService: the version this template belongs to
  std::string image;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  Time at{};
  std::string by;       // the user who made it ("" for the submission)
  nlohmann::json diff;  // [{path, from, to}] against the revision before
  bool operator==(const RevisionRecord&) const = default;
};

struct WorkloadRecord {
  std::string id;
  Workload spec;
  WorkloadState state = WorkloadState::kPending;
  Time submitted{};
  // The authenticated user who submitted it ("" for in-process submissions and for records
  // stored before it was kept); never changes.
  std::string submitted_by;
  Time admitted_at{};   // epoch when never admitted
  Time preempted_at{};  // epoch unless Preempting
  Time finished_at{};   // epoch unless terminal
  std::string message;  // the last notable reason (preemption, cancellation)
  std::vector<std::string> group_flavors;  // accelerator flavor per task group ("cpu": none)
  std::vector<PlacementRecord> placements;
  int32_t requeues = 0;  // re-admissions so far; a task's attempt is requeues + 1
  int32_t failures = 0;  // user retries consumed by failed attempts (restartPolicy.maxRetries)
  std::string failure_reason;  // when Failed: ExitCode, OOMKilled, Signal, NodeLost, …
  // Why it last went back to wait (a Requeue decision): kPreempted, kRetry (a failure that used a
  // retry), an operator's stop (kDrained, …) or the infrastructure failure's class (kNodeLost,
  // kAgentRestart, kDeviceError, …); kNone again at admission. Metering ends the allocations'
  // usage by it (usage_sync.cc). Stored by name (requeue_reason.h).
  RequeueReason requeue_reason = RequeueReason::kNone;
  Time started_at{};           // the first time any task ran, over all attempts
  int64_t prior_runtime_us = 0;  // running time of earlier attempts (maxRuntime counts all)
  Time not_before{};           // a requeued workload is not admitted before (retry backoff)
  int32_t infra_requeues = 0;  // requeues after infrastructure failures (no retry used)
  std::map<std::string, std::string> next_env;  // env of the current attempt's tasks (ABACUS_RESUME, …)
  nlohmann::json controller_state;  // src/control's state for this workload (null: none)
  Time first_admitted_at{};    // the first admission (queue wait), kept across requeues
  // Preemptor claim (sched/claims.h): the workload this one was last preempted for, until that
  // preemptor is admitted; and how many times in a row it was preempted for it.
  std::string yields_to;
  int32_t yield_count = 0;
  std::vector<QuotaGrantRecord> quota_grants;         // GrantQuota decisions in force
  std::optional<QuotaDecisionRecord> quota_decision;  // POST …/quota, once answered
  std::vector<RevisionRecord> revisions;  // empty until the first update; then every revision, oldest first
  // Operator control (server/fleet.h). `hold`: "" none, "Held" (abacus hold: kept out of
  // scheduling while it waits) or "Suspended" (abacus suspend: stopped, then kept out), by whom.
  std::string hold;
  std::string hold_by;
  // Why it is Preempting when an operator (not the scheduler) stopped it: kDrained, kRequeued or
  // kSuspended; its Requeue decision then carries it as the typed reason. kNone again at admission.
  RequeueReason evict_reason = RequeueReason::kNone;
  std::optional<int32_t> priority;  // abacus set-priority N: replaces its priority class's value
  // Elastic workloads: the run a slot ("GROUP.REPLICA") placed again after a scale-down starts
  // at, so its task gets an id its agent never ran (agents start an id at most once).
  std::map<std::string, int32_t> next_runs;
  int64_t version = 0;  // store version; not part of the document

  int32_t attempt() const { return requeues + 1; }

  // True while the workload holds quota (Admitted, Running, Preempting).
  bool holds_quota() const {
    return state == WorkloadState::kAdmitted || state == WorkloadState::kRunning ||
           state == WorkloadState::kPreempting;
  }
  // True while it waits for admission (Pending, Requeued).
  bool waiting() const { return state == WorkloadState::kPending || state == WorkloadState::kRequeued; }
};

// The details of a workload event: `details` plus "state" and, when not empty, "message".
nlohmann::json EventJson(WorkloadState state, const std::string& message,
                         nlohmann::json details = nlohmann::json::object());

// The store document / REST body of a workload record.
nlohmann::json ToJson(const WorkloadRecord& r);
// The same without "spec" (the workload lists, which do not show it).
nlohmann::json ToJsonWithoutSpec(const WorkloadRecord& r);
// Reads a record written by ToJson; InvalidArgument naming the problem.
Result<WorkloadRecord> WorkloadRecordFromJson(const nlohmann::json& j);

// An operator's cordon or drain of a node (abacus cordon/drain, server/fleet.h): kept apart from
// Node::state, which an agent's heartbeats own (Ready, NotReady).
struct NodeCordonRecord {
  NodeState state = NodeState::kReady;  // kReady: not cordoned; kCordoned, kDraining, kDrained
  Time since{};         // when the cordon (or drain) began
  Time deadline{};      // Draining: when work still there is requeued (the grace's end)
  bool requeue_all = false;  // drain --requeue: every workload there is requeued at once
  std::string by;       // the user (or rule) that asked
  std::string reason;
  bool operator==(const NodeCordonRecord&) const = default;
};

// A device fault the agent reported, and a node's device health history (recent faults, devices
// on probation): the shared rule's types (sched/health_rule.h, applied by server/device_health.h).
using DeviceFaultRecord = sched::DeviceFault;
using NodeHealthRecord = sched::HealthHistory;

// A node as the ledger holds it: the model Node plus whether it is simulated (no agent) or
// run by an agent, whose credential the server knows only as a SHA-256.
struct NodeRecord {
  Node node;
  NodeCordonRecord cordon;
  NodeHealthRecord health;
  bool simulated = false;
  bool agent = false;
  std::string credential_sha256;  // agent nodes
  std::string agent_version;
  Time not_ready_since{};  // when the server found the agent silent; zero while Ready
  int64_t version = 0;

  // The state the scheduler and the views see: NotReady while the agent is silent, else the
  // cordon's state when cordoned, else the node's own.
  NodeState EffectiveState() const {
    if (node.state == NodeState::kReady && cordon.state != NodeState::kReady) return cordon.state;
    return node.state;
  }
};

// One device as a node's store document and REST body hold it.
nlohmann::json DeviceJson(const Device& d);
// The store document / REST body of a node (devices included).
nlohmann::json ToJson(const NodeRecord& n);
// Reads a node: name required; cpu/memory as quantities ("64", "512Gi") or integers
// (cpuMilli, memoryBytes); devices [{index, flavor, memory, uuid, interconnectDomain, numa,
// driverVersion, runtimeVersions, health}]; extended {"rdma/hca": 4, "ephemeral-storage": "500Gi"}.
// InvalidArgument listing every problem.
Result<NodeRecord> NodeRecordFromJson(const nlohmann::json& j);

// Returns the extended resources placement `p` of `r` holds: its group's request by name (a task
// takes exactly what it asks); empty when it asks none.
const std::map<std::string, int64_t>& ExtendedHeld(const WorkloadRecord& r, const PlacementRecord& p);

}  // namespace abacus::server

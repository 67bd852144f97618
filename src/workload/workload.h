// Workload: a submitted unit of one of five kinds (TrainingJob, InferenceService, Experiment,
// Evaluation, BatchJob), made of task groups. Plain data; the YAML/JSON forms are in
// workload_codec.h and docs/specs.md, the lifecycle in lifecycle.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "model/flavor.h"
#include "model/node.h"
#include "model/quantity.h"
#include "model/version.h"
#include "tenancy/queue.h"
#include "workload/admission_outcome.h"

namespace abacus {

enum class WorkloadKind : uint8_t { kTrainingJob, kInferenceService, kExperiment, kEvaluation, kBatchJob };
// Returns "TrainingJob", "InferenceService", "Experiment", "Evaluation" or "BatchJob".
std::string_view WorkloadKindName(WorkloadKind k);
// Parses a kind name; InvalidArgument listing the five kinds otherwise.
Result<WorkloadKind> ParseWorkloadKind(std::string_view text);
// False only when YAML or JSON `text` cannot hold a workload document: no kind name occurs in it
// and no escape (a backslash) could spell one. A cheap test that spares a full parse.
bool TextMayNameWorkloadKind(std::string_view text);
// The priority class a kind gets when none is given: training, production, experiment,
// evaluation, experiment.
std::string_view DefaultPriorityClassFor(WorkloadKind k);
// Whether a kind is gang-scheduled unless told otherwise (TrainingJob only).
bool DefaultGangFor(WorkloadKind k);

// Accelerators for one task: `count` whole devices of a flavor matching `flavor`, or — with
// count 1 — a fraction `share` of one device (milli-device, 1..1000) and/or `memory` of device
// memory per device.
struct AcceleratorRequest {
  FlavorPattern flavor;
  int32_t count = 1;
  std::optional<int32_t> share;   // milli-device; only with count 1
  std::optional<Quantity> memory;  // device memory per device
  bool operator==(const AcceleratorRequest& o) const {
    return flavor.text() == o.flavor.text() && count == o.count && share == o.share &&
           memory == o.memory;
  }
};

// What one task (one replica of a group) needs.
struct ResourceRequest {
  Quantity cpu;     // cores ("16", "500m")
  Quantity memory;  // bytes ("64Gi")
  std::optional<AcceleratorRequest> accelerators;
  // Extended resources per task by name, in whole units (bytes for storage):
  // `extended: {rdma/hca: 1, ephemeral-storage: 100Gi}` (model/extended_resource.h).
  std::map<std::string, int64_t> extended;
  bool operator==(const ResourceRequest&) const = default;
};

enum class TopologyPolicy : uint8_t {
  kNone,              // anywhere
  kSameInterconnect,  // all devices of a task in one NVLink/HCCS domain
  kSameNuma,          // all devices of a task on one NUMA node
};
// Returns "none", "same-interconnect" or "same-numa".
std::string_view TopologyPolicyName(TopologyPolicy t);
Result<TopologyPolicy> ParseTopologyPolicy(std::string_view text);

// `replicas` identical tasks.
// One spread rule of a task group: its tasks over the values of node label `topology_key`
// ("node": every node its own domain), at most `max_skew` more on one than on the least loaded.
struct SpreadConstraint {
  std::string topology_key;
  int32_t max_skew = 1;
  bool operator==(const SpreadConstraint&) const = default;
};

// A task group's placement rules (docs/specs.md "placement"): maxPerNode, spread, antiAffinity.
struct PlacementSpec {
  int32_t max_per_node = 0;                  // 0: no limit
  std::vector<SpreadConstraint> spread;
  std::vector<std::string> anti_affinity;    // services (workload names) it never shares a node with
  bool empty() const { return max_per_node == 0 && spread.empty() && anti_affinity.empty(); }
  bool operator==(const PlacementSpec&) const = default;
};

struct TaskGroup {
  std::string name;
  int32_t replicas = 1;
  ResourceRequest resources;
  TopologyPolicy topology = TopologyPolicy::kNone;
  std::map<std::string, std::string> node_selector;  // node labels that must match
  std::vector<Toleration> tolerations;
  std::vector<VersionConstraint> runtime;  // e.g. cuda>=12.2, driver>=535
  PlacementSpec placement;
  bool operator==(const TaskGroup&) const = default;
};

// Restarts after a failure: up to max_retries, waiting backoff_seconds (doubling) between.
struct RestartPolicy {
  int32_t max_retries = 0;
  int32_t backoff_seconds = 10;
  bool operator==(const RestartPolicy&) const = default;
};

// Signal sent on preemption, then grace_seconds to write a checkpoint before the kill.
struct CheckpointPolicy {
  std::string signal = "SIGTERM";
  int32_t grace_seconds = 30;
  bool operator==(const CheckpointPolicy&) const = default;
};

struct TrainingSpec {
  std::optional<CheckpointPolicy> checkpoint;
  RestartPolicy restart_policy;
  std::optional<Duration> max_runtime;
  bool operator==(const TrainingSpec&) const = default;
};

// One health check: exactly one of http / tcp / exec.
struct Probe {
  enum class Type : uint8_t { kHttp, kTcp, kExec };
  Type type = Type::kHttp;
  std::string path = "/";             // http
  int32_t port = 0;                   // http, tcp
  std::vector<std::string> command;   // exec
  int32_t initial_delay_seconds = 0;
  int32_t period_seconds = 10;
  int32_t timeout_seconds = 1;
  int32_t failure_threshold = 3;
  int32_t success_threshold = 1;
  bool operator==(const Probe&) const = default;
};

struct Probes {
  std::optional<Probe> readiness;
  std::optional<Probe> liveness;
  bool operator==(const Probes&) const = default;
};

// The metrics `abacus gateway` observes and posts per replica (YAML `target: {requestsPerSecond:
// 50}` or `target: {p99LatencyMs: 200}`): requests per second are summed over the replicas and
// divided by the target; a latency is averaged and scales the current replicas by average/target.
inline constexpr char kRequestsPerSecond[] = "requestsPerSecond";
inline constexpr char kP99LatencyMs[] = "p99LatencyMs";

// Scale between minReplicas and maxReplicas to keep `metric` (reported per replica) near
// `target`.
struct Autoscaling {
  std::string metric;  // e.g. "qps", "gpu_utilization", "queue_depth"
  Quantity target;
  int32_t stabilization_seconds = 60;
  int32_t cooldown_seconds = 300;
  bool operator==(const Autoscaling&) const = default;
};

// Capacity held for the service that training cannot take: `reserved` holds capacity for
// minReplicas; `pool` confines (and reserves in) one pool.
struct Reservation {
  bool reserved = false;
  std::string pool;
  // With a pool: may replicas the pool cannot take run on other nodes? YAML overflow: Deny
  // (default: they wait, as a shortage) | Allow (placed elsewhere, pool first, each one an event).
  bool overflow = false;
  bool operator==(const Reservation&) const = default;
};

// A canary rollout to `version`: canary_percent of replicas (or canary_replicas) first,
// promoted after promote_after_seconds of health; automatic rollback on failed probes.
struct Rollout {
  std::string version;
  std::optional<int32_t> canary_percent;   // 1..100
  std::optional<int32_t> canary_replicas;  // >= 1; at most one of the two
  int32_t promote_after_seconds = 300;
  bool automatic_rollback = true;  // YAML: rollback: automatic | manual
  bool operator==(const Rollout&) const = default;
};

// A service replica is one instance of all its task groups.
struct InferenceSpec {
  int32_t replicas = 1;
  int32_t min_replicas = 1;
  int32_t max_replicas = 1;
  std::optional<Reservation> reservation;
  Probes probes;
  std::optional<Autoscaling> autoscaling;
  std::optional<Rollout> rollout;
  // A replica the server stops (scale-down, new version, restart, node drain) is first
  // published as draining for this long — gateways send it no new requests — then stopped.
  int32_t drain_seconds = 5;
  bool operator==(const InferenceSpec&) const = default;
};

// Reclaim when every device of the experiment stays below utilization_below_percent for
// window_seconds, after notice_seconds of notice.
struct IdlePolicy {
  int32_t utilization_below_percent = 5;
  int32_t window_seconds = 1800;
  int32_t notice_seconds = 600;
  bool operator==(const IdlePolicy&) const = default;
};

// Extra quota for this experiment only, for `expires` after admission.
struct TemporaryQuota {
  QuotaResource resource;
  Quantity amount;
  Duration expires{};
  bool operator==(const TemporaryQuota&) const = default;
};

struct ExperimentSpec {
  std::optional<Duration> ttl;
  std::optional<IdlePolicy> idle;
  std::optional<TemporaryQuota> temporary_quota;
  bool operator==(const ExperimentSpec&) const = default;
};

struct EvaluationSpec {
  std::string model;
  std::string model_version;
  std::string dataset;
  std::string results_path;
  bool archive = true;            // keep results in the ledger for comparison
  std::string baseline_version;   // optional: compare against this model version
  bool operator==(const EvaluationSpec&) const = default;
};

// An array of `tasks` independent instances of the single task group, at most `parallelism`
// at once; restart_policy applies per task.
struct BatchSpec {
  int32_t tasks = 1;
  int32_t parallelism = 1;
  RestartPolicy restart_policy;
  bool operator==(const BatchSpec&) const = default;
};

// A host data path made visible to the workload's tasks: `path` on the node at `mount_path`
// inside the task (the same path when empty), read-only unless read_only is false. Admission
// policies decide which paths a tenant may mount and how.
struct DataMount {
  std::string path;        // absolute, normalized: no "." or ".." segments, no trailing "/"
  std::string mount_path;  // absolute; empty: same as path
  bool read_only = true;
  bool operator==(const DataMount&) const = default;
};
// Returns OK when `path` is absolute and normalized ("/data/nlp"): no empty, "." or ".."
// segments and no trailing "/" ("/" itself is allowed); InvalidArgument saying why otherwise.
Status CheckMountPath(std::string_view path);
// Returns true when normalized `path` is `prefix` or lies below it, segment-wise:
// "/data/nlp/x" is within "/data/nlp", "/data/nlp2" is not; everything is within "/".
bool PathWithin(std::string_view path, std::string_view prefix);

// An environment variable whose value is one key of a Secret of the workload's project (or of
// its tenant): `env: [{name: X, secretRef: {secret: S, key: K}}]`.
struct SecretEnvVar {
  std::string name;    // the variable
  std::string secret;  // the Secret's name, looked up in the workload's project, then its tenant
  std::string key;
  bool operator==(const SecretEnvVar&) const = default;
};
// A Secret's keys as files: $ABACUS_WORK_DIR/secrets/<path>/<key>, mode 0400 (directory 0500).
struct SecretMount {
  std::string secret;
  std::string path;  // relative, normalized: no "." or ".." segments
  bool operator==(const SecretMount&) const = default;
};

// Fields every kind has under `spec:`.
struct WorkloadSpec {
  std::string image;  // empty: the command runs as a plain process
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::vector<TaskGroup> task_groups;
  bool gang = false;                       // start all tasks or none
  std::optional<Duration> max_queue_wait;  // overrides the priority class's aging period
  std::vector<DataMount> mounts;
  bool read_only_root = false;             // readOnlyRootFilesystem: an image runs with a read-only root
  // Secrets (issue 24): values the server decrypts only into the agent's assignment.
  std::vector<SecretEnvVar> secret_env;     // env list entries with secretRef
  std::vector<std::string> env_from;        // envFrom: [{secret: S}]: every key as a variable
  std::vector<SecretMount> secret_mounts;   // secretMounts: [{secret: S, path: P}]
  // The names of the Secrets the spec references, sorted, once each.
  std::vector<std::string> SecretNames() const;
  bool operator==(const WorkloadSpec&) const = default;
};

using KindSpec = std::variant<TrainingSpec, InferenceSpec, ExperimentSpec, EvaluationSpec, BatchSpec>;

struct Workload {
  std::string name;
  std::string project;         // "tenant/project"
  std::string queue;
  std::string priority_class;  // resolved: the kind's default when not given
  std::map<std::string, std::string> labels;  // "model" names the model for reports
  // What the server's admission policies decided (never the submitter's to set); the labels
  // kNetworkLabel and kAllowedPoolsLabel show it (admission_outcome.h).
  AdmissionOutcome admission;
  WorkloadSpec spec;
  KindSpec details;            // the alternative matches kind()

  WorkloadKind kind() const { return static_cast<WorkloadKind>(details.index()); }
  const TrainingSpec* training() const { return std::get_if<TrainingSpec>(&details); }
  const InferenceSpec* inference() const { return std::get_if<InferenceSpec>(&details); }
  const ExperimentSpec* experiment() const { return std::get_if<ExperimentSpec>(&details); }
  const EvaluationSpec* evaluation() const { return std::get_if<EvaluationSpec>(&details); }
  const BatchSpec* batch() const { return std::get_if<BatchSpec>(&details); }
  // Returns the "tenant" part of project.
  std::string tenant() const;
  // Returns the number of tasks that run at once at full size: Σ replicas over task groups,
  // times replicas for InferenceService and parallelism for BatchJob.
  int64_t TaskCount() const;
  bool operator==(const Workload&) const = default;
};

}  // namespace abacus

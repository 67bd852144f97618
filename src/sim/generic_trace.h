// The generic trace format: a user's own cluster (nodes) and workload history (workloads) for the
// simulator, as YAML (one file) or CSV (nodes.csv + workloads.csv in one folder). docs/simulator.md
// is the reference; examples/traces/ holds the same small trace in both forms.
//
// Problems are collected, not stopped at: a read fails with InvalidArgument listing every
// "FILE:LINE: field: message".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/flavor.h"
#include "model/quantity.h"
#include "workload/workload.h"

namespace abacus::sim {

// A group of identical accelerators on a node: "KIND:VENDOR:MODEL:COUNT[:MEMORY]".
struct GenericDevices {
  Flavor flavor;                  // gpu or npu
  int32_t count = 0;              // >= 1
  std::optional<Quantity> memory; // per device, bytes
  bool operator==(const GenericDevices&) const = default;
};

// Parses "gpu:nvidia:A100-80G:8:80Gi" (memory optional); InvalidArgument naming the bad part.
Result<GenericDevices> ParseDeviceSpec(std::string_view text);

struct GenericTraceNode {
  std::string name;
  std::string cluster = "default";
  std::string pool = "default";
  std::map<std::string, std::string> labels;
  Quantity cpu;     // cores; milli() is millicores
  Quantity memory;  // bytes
  std::vector<GenericDevices> devices;
  // Extended resources the node has, by name, in whole units (bytes for storage): `extended:
  // {rdma/hca: 4}`, CSV `rdma/hca=4;ephemeral-storage=2Ti` (model/extended_resource.h).
  std::map<std::string, int64_t> extended;
  int line = 0;  // where the node was defined
  bool operator==(const GenericTraceNode& o) const {
    return name == o.name && cluster == o.cluster && pool == o.pool && labels == o.labels && cpu == o.cpu &&
           memory == o.memory && devices == o.devices && extended == o.extended;  // line is where, not what
  }
};

enum class GenericWorkloadKind : uint8_t { kTrainingJob, kInferenceService, kExperiment, kEvaluation, kBatchJob };

// Returns "TrainingJob", "InferenceService", "Experiment", "Evaluation" or "BatchJob".
std::string_view GenericWorkloadKindName(GenericWorkloadKind kind);

struct GenericTraceWorkload {
  std::string name;
  GenericWorkloadKind kind = GenericWorkloadKind::kBatchJob;
  std::string tenant = "default";
  std::string queue = "default";
  std::string priority_class;      // empty = the queue's default
  int64_t submit_s = 0;            // seconds from trace start
  std::optional<int64_t> duration_s;  // run time once started; absent = runs until the end
  int32_t replicas = 1;
  Quantity cpu;     // per replica, cores
  Quantity memory;  // per replica, bytes
  // Accelerators per replica; absent for CPU-only work.
  std::optional<FlavorPattern> accelerator;
  int32_t accelerator_count = 0;        // devices per replica (1 when only a share)
  int32_t share_milli = 1000;           // milli-device per device; < 1000 = a share of one device
  std::optional<Quantity> device_memory;  // per device, bytes
  bool gang = false;                    // all replicas start together or none
  int32_t max_per_node = 0;             // replicas per node at most (maxPerNode); 0: no limit
  // Replicas spread over the values of node labels (or "node"), at most max_skew apart:
  // YAML `spread: [{topologyKey: zone, maxSkew: 1}]`, CSV `zone:1;rack:2`.
  std::vector<SpreadConstraint> spread;
  // Workloads of the trace whose replicas this one never shares a node with: `antiAffinity: [a, b]`, CSV `a;b`.
  std::vector<std::string> anti_affinity;
  // Extended resources per replica, by name: `extended: {rdma/hca: 1}`, CSV `rdma/hca=1;ephemeral-storage=100Gi`.
  std::map<std::string, int64_t> extended;
  int line = 0;
  bool operator==(const GenericTraceWorkload& o) const {
    auto pattern = [](const std::optional<FlavorPattern>& p) { return p ? p->text() : std::string("-"); };
    return name == o.name && kind == o.kind && tenant == o.tenant && queue == o.queue &&
           priority_class == o.priority_class && submit_s == o.submit_s && duration_s == o.duration_s &&
           replicas == o.replicas && cpu == o.cpu && memory == o.memory && pattern(accelerator) == pattern(o.accelerator) &&
           accelerator_count == o.accelerator_count && share_milli == o.share_milli &&
           device_memory == o.device_memory && gang == o.gang && max_per_node == o.max_per_node &&
           spread == o.spread && anti_affinity == o.anti_affinity && extended == o.extended;
  }
};

struct GenericTrace {
  std::vector<GenericTraceNode> nodes;
  std::vector<GenericTraceWorkload> workloads;  // in file order (not sorted by submit time)
};

// Parses the YAML form held in memory; `file` names it in diagnostics.
Result<GenericTrace> ParseGenericTraceYaml(std::string_view text, std::string_view file);

// Parses the CSV form held in memory: the node table and the workload table.
Result<GenericTrace> ParseGenericTraceCsv(std::string_view nodes_csv, std::string_view nodes_file,
                                          std::string_view workloads_csv, std::string_view workloads_file);

// Loads a trace from `path`: a .yaml/.yml file, or a folder holding nodes.csv and workloads.csv.
Result<GenericTrace> LoadGenericTrace(const std::string& path);

}  // namespace abacus::sim

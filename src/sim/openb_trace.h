// Readers for the openb trace (Alibaba GPU cluster trace 2023, the FGD paper's data set; see
// shared/traces/openb/README.md) and its mapping to Abacus vocabulary.
//
// Parsing is strict: a malformed row stops the read with "FILE:LINE: column: message", unless
// TraceReadOptions::skip_bad_rows is set, in which case the row is left out and counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "model/flavor.h"

namespace abacus::sim {

// One machine of a node list (columns sn,cpu_milli,memory_mib,gpu,model).
struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;  // empty on CPU-only nodes
  bool operator==(const TraceNode&) const = default;
};

// The pod's Kubernetes QoS class as the trace writes it.
enum class TraceQos : uint8_t { kLS, kGuaranteed, kBurstable, kBE };

// Returns "LS", "Guaranteed", "Burstable" or "BE".
std::string_view TraceQosName(TraceQos qos);

// One pod (task) of a pod list.
struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;  // per GPU; 1000 = a whole GPU, < 1000 only with num_gpu = 1
  std::vector<std::string> gpu_spec;  // allowed GPU models, duplicates dropped; empty = any
  TraceQos qos = TraceQos::kLS;       // kLS in the five-column layout, which has no qos column
  std::string phase;                  // pod_phase ("Running", "Pending", …); empty in the 5-column layout
  std::optional<int64_t> creation_time;   // seconds from trace start
  std::optional<int64_t> deletion_time;
  std::optional<int64_t> scheduled_time;  // absent for pods that never ran

  // Returns deletion_time − creation_time when both are known.
  std::optional<int64_t> duration() const;
  // Returns true when the pod asks for a fraction of one GPU.
  bool shares_gpu() const { return num_gpu == 1 && gpu_milli > 0 && gpu_milli < 1000; }
  bool operator==(const TracePod&) const = default;
};

struct TraceReadOptions {
  bool skip_bad_rows = false;   // leave malformed rows out (counted) instead of failing
  size_t max_diagnostics = 10;  // how many skipped-row diagnostics to keep
};

// The rows of a node list, or of a pod list, and what was left out.
template <typename Row>
struct TraceTable {
  std::vector<Row> rows;
  size_t skipped_rows = 0;
  std::vector<Diagnostic> diagnostics;  // the first max_diagnostics skipped rows, why
};

// Which pod-list layout the header announced.
enum class PodLayout : uint8_t {
  kFull,      // the 11 columns name … scheduled_time
  kResource,  // the 5 columns name,cpu_milli,memory_mib,num_gpu,gpu_milli (multigpuNN files)
};

struct TracePodTable : TraceTable<TracePod> {
  PodLayout layout = PodLayout::kFull;
};

// Parses a node list held in memory; `file` names it in diagnostics.
Result<TraceTable<TraceNode>> ParseOpenbNodes(std::string_view text, std::string_view file,
                                              const TraceReadOptions& options = {});
// Reads a node list file (openb_node_list_*.csv).
Result<TraceTable<TraceNode>> ReadOpenbNodes(const std::string& path, const TraceReadOptions& options = {});

// Parses a pod list held in memory; the header row picks the layout.
Result<TracePodTable> ParseOpenbPods(std::string_view text, std::string_view file,
                                     const TraceReadOptions& options = {});
// Reads a pod list file (openb_pod_list_*.csv).
Result<TracePodTable> ReadOpenbPods(const std::string& path, const TraceReadOptions& options = {});

// Returns the Abacus flavor of a trace GPU model: T4, P100, V100M16, V100M32 and A10 are NVIDIA
// ("gpu/nvidia/T4"); G1, G2 and G3 are Alibaba's undisclosed internal models ("gpu/alibaba/G2").
// InvalidArgument for any other model.
Result<Flavor> OpenbModelFlavor(std::string_view model);

// Returns the priority class for a trace QoS: LS → production, Guaranteed → high,
// Burstable → training, BE → best-effort (docs/simulator.md explains the choice).
std::string_view OpenbPriorityClass(TraceQos qos);

}  // namespace abacus::sim

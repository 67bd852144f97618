// Synthetic heterogeneous clusters and workloads for scale benchmarks and tests.
#pragma once

#include <cstdint>

#include "sched/scheduler.h"

namespace abacus::sim {

struct SyntheticSpec {
  int32_t nodes = 1000;
  int32_t queues = 10;
  int32_t workloads = 10000;
  int32_t gang = 0;          // >0: workloads are gangs of `gang` tasks × 8 devices
  int32_t devices_per_node = 8;
  int32_t clusters = 1;      // nodes spread round-robin over clusters cluster-0, cluster-1, …
  uint64_t seed = 42;
};

// Builds a cluster with the mix: 35% gpu/nvidia/A100-80G, 20% gpu/nvidia/H100-80G,
// 10% gpu/nvidia/T4, 20% npu/huawei/Ascend910B (8 devices each, NVLink/HCCS domains of 8),
// 15% CPU-only; queues in cohorts of 10 whose nominal quotas split each flavor's capacity
// evenly; pending single-device (or gang) workloads over random queues, flavors (exact or
// wildcard) and priorities.
sched::Snapshot MakeSyntheticSnapshot(const SyntheticSpec& spec);

}  // namespace abacus::sim

#include "sim/synthetic.h"

#include <random>

namespace abacus::sim {

using namespace abacus::sched;

Snapshot MakeSyntheticSnapshot(const SyntheticSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  const FlavorId a100 = Flavor::Parse("gpu/nvidia/A100-80G")->Intern();
  const FlavorId h100 = Flavor::Parse("gpu/nvidia/H100-80G")->Intern();
  const FlavorId t4 = Flavor::Parse("gpu/nvidia/T4")->Intern();
  const FlavorId ascend = Flavor::Parse("npu/huawei/Ascend910B")->Intern();
  const FlavorId accel[] = {a100, h100, t4, ascend};
  constexpr int64_t kGi = 1024LL * 1024 * 1024;

  Snapshot s;
  s.now = FromMicros(1'767'225'600'000'000);
  s.flavor_weight_milli = {{a100, 2000}, {h100, 4000}, {t4, 500}, {ascend, 2000}};
  std::map<FlavorId, int64_t> capacity;
  s.nodes.reserve(spec.nodes);
  for (int32_t i = 0; i < spec.nodes; ++i) {
    NodeInfo n;
    n.name = "node-" + std::to_string(i);
    if (spec.clusters > 1) n.cluster = "cluster-" + std::to_string(i % spec.clusters);
    n.cpu_milli = 128'000;
    n.memory_bytes = 1024 * kGi;
    int bucket = i % 20;  // deterministic mix
    FlavorId f = bucket < 7 ? a100 : bucket < 11 ? h100 : bucket < 13 ? t4 : bucket < 17 ? ascend : kCpuFlavorId;
    n.pool = f == kCpuFlavorId ? "cpu" : "accel";
    if (f != kCpuFlavorId) {
      for (int d = 0; d < spec.devices_per_node; ++d) {
        DeviceInfo dev;
        dev.index = d;
        dev.flavor = f;
        dev.memory_bytes = (f == t4 ? 16 : f == ascend ? 64 : 80) * kGi;
        dev.domain = 0;
        dev.numa = d < spec.devices_per_node / 2 ? 0 : 1;
        n.devices.push_back(dev);
      }
      capacity[f] += int64_t{spec.devices_per_node} * 1000;
      if (f == ascend) {
        n.runtime_versions["cann"] = {8, 0};
      } else {
        n.runtime_versions["cuda"] = {12, 4};
      }
    }
    s.nodes.push_back(std::move(n));
  }
  int32_t cohorts = (spec.queues + 9) / 10;
  for (int32_t c = 0; c < cohorts; ++c) s.cohorts.push_back({"cohort-" + std::to_string(c), kNone, {}});
  for (int32_t q = 0; q < spec.queues; ++q) {
    QueueInfo qi;
    qi.name = "queue-" + std::to_string(q);
    qi.tenant = "tenant-" + std::to_string(q % 10);
    qi.cohort = q / 10;
    for (FlavorId f : accel) {
      int64_t share = capacity[f] / spec.queues / 1000 * 1000;
      qi.quotas.push_back({ResourceKey::Devices(f), share, std::nullopt, std::nullopt});
    }
    s.queues.push_back(std::move(qi));
  }
  s.workloads.reserve(spec.workloads);
  const std::vector<std::vector<FlavorId>> accepts = {{a100}, {h100}, {t4}, {ascend}, {a100, h100, t4}};
  const char* patterns[] = {"gpu/nvidia/A100-80G", "gpu/nvidia/H100-80G", "gpu/nvidia/T4", "npu/huawei/Ascend910B", "gpu/nvidia/*"};
  for (int32_t i = 0; i < spec.workloads; ++i) {
    WorkloadInfo w;
    w.id = "wl-" + std::to_string(i);
    w.name = w.id;
    w.queue = static_cast<QueueIndex>(rng() % static_cast<uint64_t>(spec.queues));
    w.priority = 300 + 100 * static_cast<int32_t>(rng() % 3);
    w.submitted = s.now - std::chrono::seconds(spec.workloads - i);
    TaskGroupRequest g;
    g.name = "main";
    int pick = static_cast<int>(rng() % accepts.size());
    g.task.flavors = accepts[pick];
    g.task.flavor_pattern = patterns[pick];
    g.task.cpu_milli = 4000;
    g.task.memory_bytes = 32 * kGi;
    if (spec.gang > 0) {
      g.replicas = spec.gang;
      g.task.device_count = spec.devices_per_node;
      g.task.cpu_milli = 32'000;
      g.task.memory_bytes = 256 * kGi;
      w.gang = true;
    } else {
      g.task.device_count = 1;
    }
    w.groups.push_back(std::move(g));
    s.workloads.push_back(std::move(w));
  }
  return s;
}

}  // namespace abacus::sim

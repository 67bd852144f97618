// Fluent builders for scheduler inputs, used by tests, property tests and benchmarks:
//   MakeWorkload("w").Queue(0).Gpus(gpu, 8).Priority(500).Build()
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sched/scheduler.h"
#include "sched/types.h"

namespace abacus::sched {

inline constexpr int64_t kGiB = 1024LL * 1024 * 1024;

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) { n_.name = std::move(name); n_.cpu_milli = 64'000; n_.memory_bytes = 512 * kGiB; }
  NodeBuilder& Cpu(int64_t milli) { n_.cpu_milli = milli; return *this; }
  NodeBuilder& Memory(int64_t bytes) { n_.memory_bytes = bytes; return *this; }
  NodeBuilder& Pool(std::string p) { n_.pool = std::move(p); return *this; }
  NodeBuilder& Cluster(std::string c) { n_.cluster = std::move(c); return *this; }
  NodeBuilder& Label(std::string k, std::string v) { n_.labels[std::move(k)] = std::move(v); return *this; }
  NodeBuilder& State(NodeState s) { n_.state = s; return *this; }
  // Adds `count` devices of `flavor`, `per_domain` of them per interconnect domain (0: none).
  NodeBuilder& Devices(FlavorId flavor, int count, int64_t memory = 80 * kGiB, int per_domain = 0) {
    int base = static_cast<int>(n_.devices.size());
    for (int i = 0; i < count; ++i) {
      DeviceInfo d;
      d.index = base + i;
      d.flavor = flavor;
      d.memory_bytes = memory;
      d.domain = per_domain > 0 ? i / per_domain : -1;
      d.numa = i < count / 2 ? 0 : 1;
      n_.devices.push_back(d);
    }
    return *this;
  }
  NodeBuilder& Runtime(std::string name, std::vector<int64_t> version) {
    n_.runtime_versions[std::move(name)] = std::move(version);
    return *this;
  }
  NodeInfo Build() const { return n_; }

 private:
  NodeInfo n_;
};

class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(std::string id) {
    w_.id = id;
    w_.name = std::move(id);
    w_.groups.push_back({"main", 1, {}, {}});
    w_.groups[0].task.cpu_milli = 1000;
    w_.groups[0].task.memory_bytes = kGiB;
  }
  WorkloadBuilder& Queue(QueueIndex q) { w_.queue = q; return *this; }
  WorkloadBuilder& Priority(int32_t p) { w_.priority = p; return *this; }
  WorkloadBuilder& Submitted(Time t) { w_.submitted = t; return *this; }
  WorkloadBuilder& Replicas(int32_t r) { w_.groups[0].replicas = r; return *this; }
  WorkloadBuilder& Gang(bool g = true) { w_.gang = g; return *this; }
  WorkloadBuilder& Cpu(int64_t milli) { w_.groups[0].task.cpu_milli = milli; return *this; }
  WorkloadBuilder& Memory(int64_t bytes) { w_.groups[0].task.memory_bytes = bytes; return *this; }
  WorkloadBuilder& Gpus(std::vector<FlavorId> flavors, int32_t count) {
    auto& t = w_.groups[0].task;
    t.flavors = std::move(flavors);
    t.device_count = count;
    return *this;
  }
  WorkloadBuilder& Share(int32_t milli, int64_t device_memory = 0) {
    auto& t = w_.groups[0].task;
    t.device_count = 1;
    t.share_milli = milli;
    t.device_memory = device_memory;
    return *this;
  }
  WorkloadBuilder& Topology(TopologyRequirement r) { w_.groups[0].task.topology = r; return *this; }
  WorkloadBuilder& Preemptible(bool p) { w_.preemptible = p; return *this; }
  WorkloadBuilder& BorrowedOnly(bool b = true) { w_.borrowed_only = b; return *this; }
  WorkloadBuilder& QuotaGrant(ResourceKey r, int64_t amount) { w_.quota_grant.Add(r, amount); return *this; }
  WorkloadBuilder& Name(std::string name) { w_.name = std::move(name); return *this; }
  WorkloadBuilder& Selector(std::string k, std::string v) { w_.groups[0].task.node_selector[std::move(k)] = std::move(v); return *this; }
  WorkloadBuilder& MaxPerNode(int32_t n) { w_.groups[0].rules.max_per_node = n; return *this; }
  WorkloadBuilder& Spread(std::string topology_key, int32_t max_skew) {
    w_.groups[0].rules.spread.push_back({std::move(topology_key), max_skew});
    return *this;
  }
  WorkloadBuilder& AntiAffinity(std::string service) { w_.groups[0].rules.anti_affinity.push_back(std::move(service)); return *this; }
  WorkloadBuilder& DataLabel(std::string k, std::string v) { w_.data_labels[std::move(k)] = std::move(v); return *this; }
  WorkloadInfo Build() const { return w_; }

 private:
  WorkloadInfo w_;
};

inline NodeBuilder MakeNode(std::string name) { return NodeBuilder(std::move(name)); }
inline WorkloadBuilder MakeWorkload(std::string id) { return WorkloadBuilder(std::move(id)); }

// A queue with nominal quota of `milli` milli-devices of each flavor, in order.
inline QueueInfo MakeQueue(std::string name, std::vector<std::pair<FlavorId, int64_t>> quotas,
                           CohortIndex cohort = kNone) {
  QueueInfo q;
  q.name = std::move(name);
  q.tenant = q.name;
  q.cohort = cohort;
  for (auto [f, milli] : quotas) q.quotas.push_back({ResourceKey::Devices(f), milli, std::nullopt, std::nullopt});
  return q;
}

// The borrowing test's cluster: one node of 8 `flavor` devices, queues "owner" (0) and
// "borrower" (1) of one cohort with 4 devices of quota each, and 8 one-device workloads of the
// borrower waiting (b0…b7, priority 500, submitted at 0…7 µs): a first cycle admits them all,
// half on the owner's idle quota.
inline Snapshot BorrowerFillsTheOwnersIdleQuota(FlavorId flavor) {
  Snapshot s;
  s.nodes.push_back(MakeNode("a1").Devices(flavor, 8).Build());
  s.cohorts.push_back({"research", kNone, {}});
  s.queues.push_back(MakeQueue("owner", {{flavor, 4000}}, 0));
  s.queues.push_back(MakeQueue("borrower", {{flavor, 4000}}, 0));
  for (int i = 0; i < 8; ++i) {
    s.workloads.push_back(MakeWorkload("b" + std::to_string(i)).Queue(1).Gpus({flavor}, 1).Priority(500)
                              .Submitted(FromMicros(i)).Build());
  }
  return s;
}

}  // namespace abacus::sched

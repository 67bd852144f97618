#include "sched/cluster_state.h"

#include <algorithm>
#include <map>

#include "common/check.h"

namespace abacus::sched {
namespace {
constexpr int32_t kMaxCpuBucket = 4096;  // cores; larger nodes share the top bucket

// The largest CPU key any of `nodes` can reach (whole free cores, at most kMaxCpuBucket): the
// CPU indexes hold one bucket per key, built every cycle, so they are sized to the cluster.
int32_t MaxCpuKey(const std::vector<NodeInfo>& nodes) {
  int64_t most = 0;
  for (const NodeInfo& node : nodes) most = std::max(most, node.cpu_milli / 1000);
  return static_cast<int32_t>(std::min<int64_t>(most, kMaxCpuBucket));
}
}

ClusterState::ClusterState(const std::vector<NodeInfo>& nodes)
    : nodes_(nodes),
      cpu_only_(MaxCpuKey(nodes), static_cast<int32_t>(nodes.size())),
      cpu_accel_(MaxCpuKey(nodes), static_cast<int32_t>(nodes.size())) {
  const size_t n = nodes_.size();
  cpu_free_.resize(n);
  mem_free_.resize(n);
  dev_base_.resize(n + 1);
  if (std::any_of(nodes_.begin(), nodes_.end(), [](const NodeInfo& x) { return !x.extended.empty(); })) {
    ext_free_.resize(n);
    for (size_t i = 0; i < n; ++i) ext_free_[i] = nodes_[i].extended;
  }
  // 1. Number the devices and collect flavors.
  int32_t devices = 0;
  int32_t max_per_node = 0;
  for (size_t i = 0; i < n; ++i) {
    dev_base_[i] = devices;
    devices += static_cast<int32_t>(nodes_[i].devices.size());
    max_per_node = std::max<int32_t>(max_per_node, static_cast<int32_t>(nodes_[i].devices.size()));
    for (const auto& d : nodes_[i].devices) {
      if (d.flavor >= flavor_index_.size()) flavor_index_.resize(d.flavor + 1, -1);
      if (flavor_index_[d.flavor] < 0) {
        flavor_index_[d.flavor] = static_cast<int32_t>(indexes_.size());
        indexes_.push_back(FlavorIndex{Buckets(0, 0), Buckets(0, 0)});
      }
    }
  }
  dev_base_[n] = devices;
  {
    std::map<std::string, int32_t> ids;
    for (const auto& node : nodes_) ids.emplace(node.cluster, 0);
    for (auto& [name, id] : ids) {
      id = static_cast<int32_t>(cluster_names_.size());
      cluster_names_.push_back(name);
    }
    node_cluster_.reserve(n);
    for (const auto& node : nodes_) node_cluster_.push_back(ids[node.cluster]);
    cluster_cpu_free_.assign(cluster_names_.size(), 0);
    cluster_free_milli_.assign(cluster_names_.size() * indexes_.size(), 0);
    cluster_total_milli_.assign(cluster_names_.size() * indexes_.size(), 0);
  }
  for (auto& fi : indexes_) {
    fi.whole = Buckets(max_per_node, static_cast<int32_t>(n));
    fi.share = Buckets(1000, devices);
  }
  dev_node_.resize(devices);
  dev_free_milli_.resize(devices);
  dev_free_mem_.resize(devices);
  dev_usable_.resize(devices);
  whole_free_.assign(n * indexes_.size(), 0);
  dev_count_.assign(n * indexes_.size(), 0);
  // 2. Everything starts free.
  for (size_t i = 0; i < n; ++i) {
    const NodeInfo& node = nodes_[i];
    cpu_free_[i] = node.cpu_milli;
    mem_free_[i] = node.memory_bytes;
    bool ready = node.state == NodeState::kReady;
    if (ready) {
      total_cpu_ += node.cpu_milli;
      total_mem_ += node.memory_bytes;
      cluster_cpu_free_[node_cluster_[i]] += node.cpu_milli;
    }
    for (size_t d = 0; d < node.devices.size(); ++d) {
      int32_t g = dev_base_[i] + static_cast<int32_t>(d);
      dev_node_[g] = static_cast<NodeIndex>(i);
      dev_free_milli_[g] = 1000;
      dev_free_mem_[g] = node.devices[d].memory_bytes;
      dev_usable_[g] = ready && node.devices[d].healthy;
      if (dev_usable_[g]) {
        int32_t fx = flavor_index_[node.devices[d].flavor];
        dev_count_[i * indexes_.size() + fx] += 1;
        indexes_[fx].total_milli += 1000;
        indexes_[fx].free_milli += 1000;
        cluster_total_milli_[node_cluster_[i] * indexes_.size() + fx] += 1000;
        cluster_free_milli_[node_cluster_[i] * indexes_.size() + fx] += 1000;
      }
    }
    for (size_t d = 0; d < node.devices.size(); ++d) Reindex(static_cast<NodeIndex>(i), dev_base_[i] + static_cast<int32_t>(d));
    ReindexCpu(static_cast<NodeIndex>(i));
  }
}

bool ClusterState::device_usable(NodeIndex n, int32_t d) const { return dev_usable_[dev_base_[n] + d]; }

int32_t ClusterState::whole_free(NodeIndex n, FlavorId flavor) const {
  if (flavor >= flavor_index_.size() || flavor_index_[flavor] < 0) return 0;
  return whole_free_[n * indexes_.size() + flavor_index_[flavor]];
}

int32_t ClusterState::device_count(NodeIndex n, FlavorId flavor) const {
  if (flavor >= flavor_index_.size() || flavor_index_[flavor] < 0) return 0;
  return dev_count_[n * indexes_.size() + flavor_index_[flavor]];
}

int64_t ClusterState::total_milli(FlavorId flavor) const {
  const FlavorIndex* fi = Index(flavor);
  return fi ? fi->total_milli : 0;
}

int64_t ClusterState::free_milli(FlavorId flavor) const {
  const FlavorIndex* fi = Index(flavor);
  return fi ? fi->free_milli : 0;
}

int64_t ClusterState::cluster_free_milli(int32_t c, FlavorId flavor) const {
  if (flavor >= flavor_index_.size() || flavor_index_[flavor] < 0) return 0;
  return cluster_free_milli_[c * indexes_.size() + flavor_index_[flavor]];
}

int64_t ClusterState::cluster_total_milli(int32_t c, FlavorId flavor) const {
  if (flavor >= flavor_index_.size() || flavor_index_[flavor] < 0) return 0;
  return cluster_total_milli_[c * indexes_.size() + flavor_index_[flavor]];
}

void ClusterState::Reindex(NodeIndex n, int32_t g) {
  const DeviceInfo& dev = nodes_[n].devices[g - dev_base_[n]];
  int32_t fx = flavor_index_[dev.flavor];
  FlavorIndex& fi = indexes_[fx];
  if (!dev_usable_[g]) {
    fi.share.Set(g, -1);
    return;
  }
  fi.share.Set(g, dev_free_milli_[g]);
  // Recount whole free devices of this flavor on the node.
  int32_t whole = 0;
  const auto& devs = nodes_[n].devices;
  for (size_t d = 0; d < devs.size(); ++d) {
    int32_t gd = dev_base_[n] + static_cast<int32_t>(d);
    if (devs[d].flavor == dev.flavor && dev_usable_[gd] && dev_free_milli_[gd] == 1000 &&
        dev_free_mem_[gd] == devs[d].memory_bytes) {
      ++whole;
    }
  }
  whole_free_[n * indexes_.size() + fx] = whole;
  fi.whole.Set(n, whole);
}

void ClusterState::ReindexCpu(NodeIndex n) {
  if (!node_usable(n)) return;
  int32_t key = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(cpu_free_[n], 0) / 1000, cpu_only_.max_key()));
  (has_accelerators(n) ? cpu_accel_ : cpu_only_).Set(n, key);
}

int64_t ClusterState::extended_free(NodeIndex n, ExtendedId id) const {
  if (ext_free_.empty()) return 0;
  for (const ExtendedAmount& e : ext_free_[n]) {
    if (e.id == id) return e.amount;
  }
  return 0;
}

bool ClusterState::ExtendedFits(NodeIndex n, const std::vector<ExtendedAmount>& want, std::string* lacks) const {
  for (const ExtendedAmount& w : want) {
    int64_t free = extended_free(n, w.id);
    if (free >= w.amount) continue;
    if (lacks) {
      const ExtendedResource& r = ExtendedResource::FromId(w.id);
      *lacks = r.name() + " " + r.FormatAmount(std::max<int64_t>(free, 0)) + " free of " + r.FormatAmount(w.amount) + " needed";
    }
    return false;
  }
  return true;
}

void ClusterState::TakeExtended(NodeIndex n, const std::vector<ExtendedAmount>& held, int64_t sign) {
  if (ext_free_.empty()) return;
  // A node that no longer declares a resource its tasks hold keeps no count of it; one declaring
  // less than its tasks hold goes negative, so that nothing new is placed there until they end.
  for (const ExtendedAmount& h : held) {
    for (ExtendedAmount& e : ext_free_[n]) {
      if (e.id == h.id) e.amount -= sign * h.amount;
    }
  }
}

bool ClusterState::CanAllocate(const TaskPlacement& p) const {
  if (p.node < 0 || p.node >= num_nodes()) return false;
  if (p.cpu_milli > cpu_free_[p.node] || p.memory_bytes > mem_free_[p.node]) return false;
  if (!p.extended.empty() && !ExtendedFits(p.node, p.extended, nullptr)) return false;
  for (const auto& g : p.devices) {
    if (g.device < 0 || g.device >= static_cast<int32_t>(nodes_[p.node].devices.size())) return false;
    int32_t gd = dev_base_[p.node] + g.device;
    if (g.milli > dev_free_milli_[gd] || g.memory > dev_free_mem_[gd]) return false;
  }
  return true;
}

void ClusterState::Allocate(const TaskPlacement& p) {
  ABACUS_CHECK(p.node >= 0 && p.node < num_nodes(), "placement on an unknown node");
  cpu_free_[p.node] -= p.cpu_milli;
  mem_free_[p.node] -= p.memory_bytes;
  if (node_usable(p.node)) cluster_cpu_free_[node_cluster_[p.node]] -= p.cpu_milli;
  ABACUS_CHECK(cpu_free_[p.node] >= 0 && mem_free_[p.node] >= 0,
               "CPU or memory allocated beyond node capacity");
  if (!p.extended.empty()) TakeExtended(p.node, p.extended, +1);
  for (const auto& g : p.devices) {
    ABACUS_CHECK(g.device >= 0 && g.device < static_cast<int32_t>(nodes_[p.node].devices.size()),
                 "placement on an unknown device");
    int32_t gd = dev_base_[p.node] + g.device;
    dev_free_milli_[gd] -= g.milli;
    dev_free_mem_[gd] -= g.memory;
    ABACUS_CHECK(dev_free_milli_[gd] >= 0 && dev_free_mem_[gd] >= 0,
                 "device or device share allocated twice");
    if (dev_usable_[gd]) {
      int32_t fx = flavor_index_[nodes_[p.node].devices[g.device].flavor];
      indexes_[fx].free_milli -= g.milli;
      cluster_free_milli_[node_cluster_[p.node] * indexes_.size() + fx] -= g.milli;
    }
    Reindex(p.node, gd);
  }
  ReindexCpu(p.node);
}

void ClusterState::Release(const TaskPlacement& p) {
  cpu_free_[p.node] += p.cpu_milli;
  mem_free_[p.node] += p.memory_bytes;
  if (node_usable(p.node)) cluster_cpu_free_[node_cluster_[p.node]] += p.cpu_milli;
  if (!p.extended.empty()) TakeExtended(p.node, p.extended, -1);
  for (const auto& g : p.devices) {
    int32_t gd = dev_base_[p.node] + g.device;
    dev_free_milli_[gd] += g.milli;
    dev_free_mem_[gd] += g.memory;
    ABACUS_CHECK(dev_free_milli_[gd] <= 1000, "device released more than it held");
    if (dev_usable_[gd]) {
      int32_t fx = flavor_index_[nodes_[p.node].devices[g.device].flavor];
      indexes_[fx].free_milli += g.milli;
      cluster_free_milli_[node_cluster_[p.node] * indexes_.size() + fx] += g.milli;
    }
    Reindex(p.node, gd);
  }
  ReindexCpu(p.node);
}

}  // namespace abacus::sched

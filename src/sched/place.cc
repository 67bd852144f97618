#include "sched/place.h"

#include <algorithm>
#include <array>
#include <map>
#include <span>

#include "common/check.h"

namespace abacus::sched {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

bool TaskUsesDevices(const TaskRequest& t, FlavorId flavor) {
  return t.needs_devices() && flavor != kCpuFlavorId;
}

std::string DomainWord(const ClusterState& state, NodeIndex n, FlavorId flavor) {
  for (const auto& d : state.nodes()[n].devices) {
    if (d.flavor == flavor) {
      return Flavor::FromId(flavor).kind() == DeviceKind::kNpu ? "HCCS domain" : "NVLink domain";
    }
  }
  return "interconnect domain";
}

}  // namespace

std::string_view ScoringPolicyName(ScoringPolicy p) {
  switch (p) {
    case ScoringPolicy::kBinpack: return "binpack";
    case ScoringPolicy::kSpread: return "spread";
    case ScoringPolicy::kFgd: return "fgd";
    case ScoringPolicy::kFgdPlus: return "fgd-plus";
  }
  return "binpack";
}

Result<ScoringPolicy> ParseScoringPolicy(std::string_view text) {
  for (auto p : {ScoringPolicy::kBinpack, ScoringPolicy::kSpread, ScoringPolicy::kFgd, ScoringPolicy::kFgdPlus}) {
    if (text == ScoringPolicyName(p)) return p;
  }
  return InvalidArgument("unknown scoring policy '" + std::string(text) +
                         "' (expected binpack, spread, fgd or fgd-plus)");
}

bool UsesFgdDistribution(ScoringPolicy p) { return p == ScoringPolicy::kFgd || p == ScoringPolicy::kFgdPlus; }

std::vector<int32_t> NodePoolIds(const std::vector<NodeInfo>& nodes, std::vector<std::string>* names) {
  std::map<std::string, int32_t> ids;
  std::vector<int32_t> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back(ids.emplace(n.pool, static_cast<int32_t>(ids.size())).first->second);
  names->assign(ids.size(), "");
  for (const auto& [name, id] : ids) (*names)[id] = name;
  return out;
}

std::vector<std::vector<uint8_t>> QueuePoolAccess(const std::vector<QueueInfo>& queues,
                                                  const std::vector<std::string>& pools,
                                                  const std::map<std::string, std::vector<std::string>>& pool_tenants) {
  std::vector<std::vector<uint8_t>> ok(queues.size(), std::vector<uint8_t>(pools.size(), 1));
  for (size_t q = 0; q < queues.size(); ++q) {
    const QueueInfo& queue = queues[q];
    for (size_t p = 0; p < pools.size(); ++p) {
      if (!queue.allowed_pools.empty() &&
          std::find(queue.allowed_pools.begin(), queue.allowed_pools.end(), pools[p]) == queue.allowed_pools.end()) {
        ok[q][p] = 0;
      }
      auto it = pool_tenants.find(pools[p]);
      if (it != pool_tenants.end() && !it->second.empty() &&
          std::find(it->second.begin(), it->second.end(), queue.tenant) == it->second.end()) {
        ok[q][p] = 0;
      }
    }
  }
  return ok;
}

bool VersionSatisfies(const std::vector<int64_t>& have, const VersionRequirement& req) {
  size_t n = std::max(have.size(), req.version.size());
  int cmp = 0;
  for (size_t i = 0; i < n && cmp == 0; ++i) {
    int64_t a = i < have.size() ? have[i] : 0;
    int64_t b = i < req.version.size() ? req.version[i] : 0;
    cmp = a < b ? -1 : (a > b ? 1 : 0);
  }
  switch (req.op) {
    case VersionRequirement::Op::kGe: return cmp >= 0;
    case VersionRequirement::Op::kGt: return cmp > 0;
    case VersionRequirement::Op::kLe: return cmp <= 0;
    case VersionRequirement::Op::kLt: return cmp < 0;
    case VersionRequirement::Op::kEq: return cmp == 0;
    case VersionRequirement::Op::kNe: return cmp != 0;
  }
  return false;
}

Placer::Placer(ClusterState& state, std::vector<int32_t> node_pool,
               std::vector<std::vector<uint8_t>> queue_pool_ok, ScoringPolicy policy)
    : state_(state),
      node_pool_(std::move(node_pool)),
      queue_pool_ok_(std::move(queue_pool_ok)),
      policy_(policy),
      stamp_(state.num_nodes(), 0),
      cached_(state.num_nodes(), 0) {}

FilterReason Placer::StaticFilter(NodeIndex n, QueueIndex q, const TaskRequest& t, FlavorId flavor) const {
  const NodeInfo& node = state_.nodes()[n];
  if (node.state != NodeState::kReady) return FilterReason::kNotReady;
  if (q >= 0 && q < static_cast<QueueIndex>(queue_pool_ok_.size()) && !queue_pool_ok_[q][node_pool_[n]]) {
    return FilterReason::kPool;
  }
  if (!t.pools.empty() && std::find(t.pools.begin(), t.pools.end(), node.pool) == t.pools.end()) {
    return FilterReason::kPool;
  }
  if (!t.reserved_pool.empty() && node.pool != t.reserved_pool && !(t.pool_overflow && overflowing_)) {
    return FilterReason::kReservedPool;
  }
  if (q >= 0 && q < static_cast<QueueIndex>(queue_cluster_ok_.size()) && !queue_cluster_ok_[q][state_.cluster_of(n)]) {
    return FilterReason::kCluster;
  }
  for (const auto& [k, v] : t.node_selector) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || it->second != v) return FilterReason::kSelector;
  }
  if (!node.taints.empty() && !ToleratesAll(node.taints, t.tolerations)) return FilterReason::kTaint;
  const std::map<std::string, std::vector<int64_t>>* of_flavor = nullptr;
  if (!t.runtime.empty() && TaskUsesDevices(t, flavor)) {
    auto f = node.flavor_runtime_versions.find(flavor);
    if (f != node.flavor_runtime_versions.end()) of_flavor = &f->second;
  }
  for (const auto& req : t.runtime) {
    const std::vector<int64_t>* version = nullptr;
    if (of_flavor != nullptr) {
      if (auto it = of_flavor->find(req.name); it != of_flavor->end()) version = &it->second;
    }
    if (version == nullptr) {
      if (auto it = node.runtime_versions.find(req.name); it != node.runtime_versions.end()) version = &it->second;
    }
    if (version == nullptr || !VersionSatisfies(*version, req)) return FilterReason::kRuntime;
  }
  if (gate_.Blocks(n)) return FilterReason::kWindowReserved;
  return FilterReason::kCount;
}

FilterReason Placer::CachedStaticFilter(NodeIndex n, QueueIndex q, const TaskRequest& t, FlavorId flavor) {
  if (stamp_[n] != attempt_) {
    stamp_[n] = attempt_;
    cached_[n] = static_cast<uint8_t>(StaticFilter(n, q, t, flavor));
  }
  return static_cast<FilterReason>(cached_[n]);
}

FilterReason Placer::FitOnNode(NodeIndex n, const TaskRequest& t, FlavorId flavor, TaskPlacement* out,
                               std::string* lacks) const {
  if (state_.cpu_free(n) < t.cpu_milli) {
    if (lacks) *lacks = "cpu " + std::to_string(state_.cpu_free(n)) + "m free of " + std::to_string(t.cpu_milli) + "m needed";
    return FilterReason::kCpu;
  }
  if (state_.memory_free(n) < t.memory_bytes) {
    if (lacks) *lacks = "memory " + FormatBytes(state_.memory_free(n)) + " free of " + FormatBytes(t.memory_bytes) + " needed";
    return FilterReason::kMemory;
  }
  if (!t.extended.empty() && !state_.ExtendedFits(n, t.extended, lacks)) return FilterReason::kExtended;
  out->node = n;
  out->cpu_milli = t.cpu_milli;
  out->memory_bytes = t.memory_bytes;
  out->extended = t.extended;
  out->devices.clear();
  if (!TaskUsesDevices(t, flavor)) return FilterReason::kCount;
  const auto& devs = state_.nodes()[n].devices;
  if (state_.device_count(n, flavor) == 0) {
    if (lacks) *lacks = "no " + Flavor::FromId(flavor).name();
    return FilterReason::kNoDevice;
  }
  if (t.share_milli > 0) {
    // A share: the usable device with the least free milli that still fits (binpack), or the
    // most free (spread).
    int32_t best = -1;
    bool memory_short = false;
    for (size_t d = 0; d < devs.size(); ++d) {
      if (devs[d].flavor != flavor || !state_.device_usable(n, static_cast<int32_t>(d))) continue;
      int32_t free = state_.device_free_milli(n, static_cast<int32_t>(d));
      if (free < t.share_milli) continue;
      if (state_.device_free_memory(n, static_cast<int32_t>(d)) < t.device_memory) {
        memory_short = true;
        continue;
      }
      if (best < 0 || (policy_ == ScoringPolicy::kSpread ? free > state_.device_free_milli(n, best)
                                                         : free < state_.device_free_milli(n, best))) {
        best = static_cast<int32_t>(d);
      }
    }
    if (best < 0) {
      if (lacks) *lacks = memory_short ? "no device with " + FormatBytes(t.device_memory) + " device memory free"
                                       : "no device with " + std::to_string(t.share_milli) + "m free";
      return memory_short ? FilterReason::kDeviceMemory : FilterReason::kDevices;
    }
    out->devices.push_back({best, t.share_milli, t.device_memory});
    return FilterReason::kCount;
  }
  // Whole devices: group the whole free devices (with enough memory) by interconnect domain or
  // NUMA node as the topology asks.
  int32_t whole = 0, whole_mem_ok = 0;
  // (group key, device positions) — small: at most the node's devices.
  std::vector<std::pair<int32_t, std::vector<int32_t>>> groups;
  for (size_t d = 0; d < devs.size(); ++d) {
    if (devs[d].flavor != flavor || !state_.device_usable(n, static_cast<int32_t>(d))) continue;
    if (state_.device_free_milli(n, static_cast<int32_t>(d)) != 1000 ||
        state_.device_free_memory(n, static_cast<int32_t>(d)) != devs[d].memory_bytes) {
      continue;
    }
    ++whole;
    if (devs[d].memory_bytes < t.device_memory) continue;
    ++whole_mem_ok;
    int32_t key = t.topology == TopologyRequirement::kSameNuma ? devs[d].numa : devs[d].domain;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(static_cast<int32_t>(d));
  }
  if (whole < t.device_count) {
    if (lacks) *lacks = std::to_string(whole) + " of " + std::to_string(t.device_count) + " " + Flavor::FromId(flavor).name() + " free";
    return FilterReason::kDevices;
  }
  if (whole_mem_ok < t.device_count) {
    if (lacks) *lacks = std::to_string(whole_mem_ok) + " of " + std::to_string(t.device_count) + " free devices have " + FormatBytes(t.device_memory);
    return FilterReason::kDeviceMemory;
  }
  // Prefer the smallest group that holds the whole task (keeps big islands intact).
  const std::vector<int32_t>* fit = nullptr;
  size_t largest = 0;
  for (const auto& g : groups) {
    largest = std::max(largest, g.second.size());
    if (static_cast<int32_t>(g.second.size()) >= t.device_count && (g.first >= 0 || groups.size() == 1) &&
        (fit == nullptr || g.second.size() < fit->size())) {
      fit = &g.second;
    }
  }
  if (t.topology != TopologyRequirement::kNone) {
    if (fit == nullptr) {
      if (lacks) {
        *lacks = std::to_string(largest) + " of " + std::to_string(t.device_count) + " free in one " +
                 (t.topology == TopologyRequirement::kSameNuma ? std::string("NUMA node") : DomainWord(state_, n, flavor));
      }
      return FilterReason::kTopology;
    }
  }
  if (fit != nullptr) {
    // Inside the chosen domain, prefer one NUMA node: the smallest that holds the whole task.
    std::vector<int32_t> chosen = *fit;
    if (t.topology != TopologyRequirement::kSameNuma && static_cast<int32_t>(fit->size()) > t.device_count) {
      std::map<int32_t, std::vector<int32_t>> by_numa;
      for (int32_t d : *fit) by_numa[devs[d].numa].push_back(d);
      const std::vector<int32_t>* best_numa = nullptr;
      for (const auto& [numa, list] : by_numa) {
        if (numa >= 0 && static_cast<int32_t>(list.size()) >= t.device_count &&
            (best_numa == nullptr || list.size() < best_numa->size())) {
          best_numa = &list;
        }
      }
      if (best_numa != nullptr) chosen = *best_numa;
    }
    for (int32_t i = 0; i < t.device_count; ++i) {
      int32_t d = chosen[i];
      out->devices.push_back({d, 1000, devs[d].memory_bytes});
    }
    return FilterReason::kCount;
  }
  // No single group: take from the largest groups first.
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return a.second.size() != b.second.size() ? a.second.size() > b.second.size() : a.first < b.first;
  });
  for (const auto& g : groups) {
    for (int32_t d : g.second) {
      if (static_cast<int32_t>(out->devices.size()) == t.device_count) break;
      out->devices.push_back({d, 1000, devs[d].memory_bytes});
    }
  }
  return FilterReason::kCount;
}

bool Placer::PlaceTask(const WorkloadInfo& w, WorkloadIndex self, int32_t group, int32_t replica,
                       FlavorId flavor, const std::vector<WorkloadIndex>& reserved_by, TaskPlacement* out) {
  const TaskRequest& t = w.groups[group].task;
  out->group = group;
  out->replica = replica;
  bool ascending = policy_ != ScoringPolicy::kSpread;
  bool found = false;
  auto try_node = [&](NodeIndex n) {
    if (!InCluster(n)) return false;
    if (reserved_by[n] != kNone && reserved_by[n] != self) return false;
    if (CachedStaticFilter(n, w.queue, t, flavor) != FilterReason::kCount) return false;
    if (Ruled(n)) return false;
    if (FitOnNode(n, t, flavor, out, nullptr) != FilterReason::kCount) return false;
    found = true;
    return true;
  };
  if (TaskUsesDevices(t, flavor)) {
    if (UsesFgdDistribution(policy_)) return PlaceFgd(t, w.queue, flavor, self, reserved_by, out);
    if (t.share_milli > 0) {
      state_.VisitShareFree(flavor, t.share_milli, ascending, [&](int32_t g) {
        NodeIndex n = state_.device_node(g);
        if (!InCluster(n)) return false;
        if (reserved_by[n] != kNone && reserved_by[n] != self) return false;
        if (CachedStaticFilter(n, w.queue, t, flavor) != FilterReason::kCount) return false;
        if (Ruled(n)) return false;
        if (state_.cpu_free(n) < t.cpu_milli || state_.memory_free(n) < t.memory_bytes) return false;
        if (!t.extended.empty() && !state_.ExtendedFits(n, t.extended, nullptr)) return false;
        int32_t d = state_.device_pos(g);
        if (state_.device_free_memory(n, d) < t.device_memory) return false;
        out->node = n;
        out->cpu_milli = t.cpu_milli;
        out->memory_bytes = t.memory_bytes;
        out->extended = t.extended;
        out->devices.assign(1, DeviceGrant{d, t.share_milli, t.device_memory});
        found = true;
        return true;
      });
    } else {
      state_.VisitWholeFree(flavor, t.device_count, ascending, try_node);
    }
  } else if (policy_ == ScoringPolicy::kFgdPlus) {
    return PlaceHostOnlyFgdPlus(w, self, t, flavor, reserved_by, out);
  } else {
    state_.VisitCpuFree(t.cpu_milli, ascending, try_node);
  }
  return found;
}

void Placer::SetFgdDistribution(std::vector<frag::WeightedShape> d) {
  fgd_distribution_ = std::move(d);
  host_per_gpu_ = frag::TypicalHostPerGpu(fgd_distribution_);
}

double Placer::StrandingIncrease(NodeIndex n, const TaskRequest& t) const {
  std::array<int32_t, frag::kMaxGpusPerNode> free{};
  const auto& devs = state_.nodes()[n].devices;
  size_t count = 0;
  for (size_t d = 0; d < devs.size() && count < free.size(); ++d) {
    if (state_.device_usable(n, static_cast<int32_t>(d))) free[count++] = state_.device_free_milli(n, static_cast<int32_t>(d));
  }
  const std::span<const int32_t> gpus(free.data(), count);
  const frag::GpuNodeFree before{state_.cpu_free(n), state_.memory_free(n) / kMiB, gpus, 0};
  const frag::GpuNodeFree after{state_.cpu_free(n) - t.cpu_milli, (state_.memory_free(n) - t.memory_bytes) / kMiB, gpus, 0};
  return frag::StrandedGpuMilli(after, host_per_gpu_) - frag::StrandedGpuMilli(before, host_per_gpu_);
}

bool Placer::PlaceHostOnlyFgdPlus(const WorkloadInfo& w, WorkloadIndex self, const TaskRequest& t, FlavorId flavor,
                                  const std::vector<WorkloadIndex>& reserved_by, TaskPlacement* out) {
  // Least CPU free first (binpack's order); the first node that strands nothing wins at once.
  bool found = false;
  double best_increase = 0;
  TaskPlacement trial = *out;
  state_.VisitCpuFree(t.cpu_milli, true, [&](NodeIndex n) {
    if (!InCluster(n)) return false;
    if (reserved_by[n] != kNone && reserved_by[n] != self) return false;
    if (CachedStaticFilter(n, w.queue, t, flavor) != FilterReason::kCount) return false;
    if (Ruled(n)) return false;
    if (FitOnNode(n, t, flavor, &trial, nullptr) != FilterReason::kCount) return false;
    const double increase = StrandingIncrease(n, t);
    if (!found || increase < best_increase) {
      found = true;
      best_increase = increase;
      *out = trial;
    }
    return best_increase <= 0;
  });
  return found;
}

bool Placer::PlaceFgd(const TaskRequest& t, QueueIndex q, FlavorId flavor, WorkloadIndex self,
                      const std::vector<WorkloadIndex>& reserved_by, TaskPlacement* out) {
  // FGD evaluates every feasible node: the fragmentation delta is not monotone in free
  // capacity, so no index order can stand in for it (cost O(candidates × shapes × devices)).
  frag::TaskShape shape;
  shape.cpu_milli = t.cpu_milli;
  shape.memory_mib = (t.memory_bytes + kMiB - 1) / kMiB;
  shape.num_gpu = t.device_count;
  shape.gpu_milli = t.share_milli > 0 ? t.share_milli : 1000;
  double best_delta = 0;
  NodeIndex best_node = kNone;
  uint64_t best_mask = 0;
  std::vector<int32_t> free;
  std::vector<int32_t> positions;
  auto consider = [&](NodeIndex n) {
    if (!InCluster(n)) return false;
    if (reserved_by[n] != kNone && reserved_by[n] != self) return false;
    if (CachedStaticFilter(n, q, t, flavor) != FilterReason::kCount) return false;
    if (Ruled(n)) return false;
    if (!t.extended.empty() && !state_.ExtendedFits(n, t.extended, nullptr)) return false;
    const auto& devs = state_.nodes()[n].devices;
    free.clear();
    positions.clear();
    for (size_t d = 0; d < devs.size(); ++d) {
      if (devs[d].flavor != flavor || !state_.device_usable(n, static_cast<int32_t>(d))) continue;
      if (state_.device_free_memory(n, static_cast<int32_t>(d)) < t.device_memory) {
        free.push_back(0);
      } else {
        free.push_back(state_.device_free_milli(n, static_cast<int32_t>(d)));
      }
      positions.push_back(static_cast<int32_t>(d));
    }
    frag::GpuNodeFree node{state_.cpu_free(n), state_.memory_free(n) / kMiB, free, 0};
    frag::FgdChoice c = policy_ == ScoringPolicy::kFgdPlus
                            ? frag::BestFgdPlusPlacement(node, shape, fgd_distribution_, host_per_gpu_)
                            : frag::BestFgdPlacement(node, shape, fgd_distribution_);
    if (c.feasible && (best_node == kNone || c.delta < best_delta)) {
      best_delta = c.delta;
      best_node = n;
      best_mask = c.gpu_mask;
    }
    return false;
  };
  if (t.share_milli > 0) {
    // Visit each node once even though the share index lists devices.
    std::vector<NodeIndex> seen;
    state_.VisitShareFree(flavor, t.share_milli, true, [&](int32_t g) {
      seen.push_back(state_.device_node(g));
      return false;
    });
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (NodeIndex n : seen) consider(n);
  } else {
    state_.VisitWholeFree(flavor, t.device_count, true, consider);
  }
  if (best_node == kNone) return false;
  out->node = best_node;
  out->cpu_milli = t.cpu_milli;
  out->memory_bytes = t.memory_bytes;
  out->extended = t.extended;
  out->devices.clear();
  const auto& devs = state_.nodes()[best_node].devices;
  int32_t bit = 0;
  for (size_t d = 0; d < devs.size(); ++d) {
    if (devs[d].flavor != flavor || !state_.device_usable(best_node, static_cast<int32_t>(d))) continue;
    if (best_mask & (uint64_t{1} << bit)) {
      bool share = t.share_milli > 0;
      out->devices.push_back({static_cast<int32_t>(d), share ? t.share_milli : 1000,
                              share ? t.device_memory : devs[d].memory_bytes});
    }
    ++bit;
  }
  return true;
}

void Placer::SetClusterRules(const std::vector<QueueInfo>& queues, const std::vector<ClusterInfo>& clusters) {
  const int32_t nc = state_.num_clusters();
  cluster_labels_.assign(nc, {});
  for (int32_t c = 0; c < nc; ++c) {
    for (const auto& info : clusters) {
      if (info.name == state_.cluster_name(c)) cluster_labels_[c] = info.labels;
    }
  }
  queue_cluster_ok_.assign(queues.size(), std::vector<uint8_t>(nc, 1));
  queue_cluster_preferred_.assign(queues.size(), std::vector<uint8_t>(nc, 0));
  for (size_t q = 0; q < queues.size(); ++q) {
    for (int32_t c = 0; c < nc; ++c) {
      const std::string& name = state_.cluster_name(c);
      const auto& allowed = queues[q].allowed_clusters;
      const auto& preferred = queues[q].preferred_clusters;
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) queue_cluster_ok_[q][c] = 0;
      if (std::find(preferred.begin(), preferred.end(), name) != preferred.end()) queue_cluster_preferred_[q][c] = 1;
    }
  }
}

std::vector<int32_t> Placer::RankClusters(const WorkloadInfo& w, const std::vector<FlavorId>& flavors) const {
  const int32_t nc = state_.num_clusters();
  // What the whole workload needs of each flavor (milli) and of CPU.
  int64_t cpu = 0;
  std::vector<std::pair<FlavorId, int64_t>> devices;
  for (size_t g = 0; g < w.groups.size(); ++g) {
    const TaskRequest& t = w.groups[g].task;
    cpu += t.cpu_milli * w.groups[g].replicas;
    FlavorId f = g < flavors.size() ? flavors[g] : kCpuFlavorId;
    if (!TaskUsesDevices(t, f)) continue;
    auto it = std::find_if(devices.begin(), devices.end(), [&](const auto& e) { return e.first == f; });
    if (it == devices.end()) it = devices.insert(devices.end(), {f, 0});
    it->second += t.device_milli() * w.groups[g].replicas;
  }
  const bool has_queue = w.queue >= 0 && w.queue < static_cast<QueueIndex>(queue_cluster_ok_.size());
  std::vector<std::pair<double, int32_t>> scored;
  for (int32_t c = 0; c < nc; ++c) {
    if (has_queue && !queue_cluster_ok_[w.queue][c]) continue;
    if (state_.cluster_cpu_free(c) < cpu) continue;
    // Room left after it, as a share of the cluster: the most room first (fewest evictions and
    // retries later); a cluster without enough free capacity cannot take it at all.
    double room = 0;
    bool fits = true;
    for (const auto& [f, need] : devices) {
      int64_t free = state_.cluster_free_milli(c, f);
      if (free < need) fits = false;
      room += static_cast<double>(free - need) / static_cast<double>(std::max<int64_t>(1, state_.cluster_total_milli(c, f)));
    }
    if (!fits) continue;
    room = devices.empty() ? static_cast<double>(state_.cluster_cpu_free(c) - cpu) /
                                 static_cast<double>(std::max<int64_t>(1, state_.cluster_cpu_free(c)))
                           : room / static_cast<double>(devices.size());
    // Data locality: the share of its data.abacus.io/ labels the cluster carries.
    double local = 0;
    if (!w.data_labels.empty() && c < static_cast<int32_t>(cluster_labels_.size())) {
      int matches = 0;
      for (const auto& [k, v] : w.data_labels) {
        auto it = cluster_labels_[c].find(k);
        matches += it != cluster_labels_[c].end() && it->second == v;
      }
      local = static_cast<double>(matches) / static_cast<double>(w.data_labels.size());
    }
    bool preferred = has_queue && queue_cluster_preferred_[w.queue][c];
    scored.push_back({4.0 * preferred + 2.0 * local + room, c});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int32_t> out;
  out.reserve(scored.size());
  for (const auto& s : scored) out.push_back(s.second);
  return out;
}

bool Placer::Place(const WorkloadInfo& w, WorkloadIndex self, const std::vector<FlavorId>& flavors,
                   const std::vector<WorkloadIndex>& reserved_by, std::vector<TaskPlacement>* out,
                   PlacementDetail* why) {
  gate_.For(w);
  // 1) Reserved pools hold: every task with one is placed inside it. 2) Only when that fails
  // and the tasks allow overflow, again with their pools open (the why of pass 1 stays).
  if (PlaceInClusters(w, self, flavors, reserved_by, out, why)) return true;
  bool overflow = std::any_of(w.groups.begin(), w.groups.end(), [](const TaskGroupRequest& g) {
    return !g.task.reserved_pool.empty() && g.task.pool_overflow;
  });
  if (!overflow) return false;
  overflowing_ = true;
  bool placed = PlaceInClusters(w, self, flavors, reserved_by, out, nullptr);
  overflowing_ = false;
  return placed;
}

bool Placer::PlaceInClusters(const WorkloadInfo& w, WorkloadIndex self, const std::vector<FlavorId>& flavors,
                             const std::vector<WorkloadIndex>& reserved_by, std::vector<TaskPlacement>* out,
                             PlacementDetail* why) {
  if (state_.num_clusters() <= 1) return PlaceAll(w, self, flavors, reserved_by, out, why);
  // Several clusters: all tasks in one (a gang never spans clusters), the best-scored first.
  std::vector<int32_t> ranked = RankClusters(w, flavors);
  bool placed = false;
  PlacementDetail first_why;
  for (size_t i = 0; i < ranked.size() && !placed; ++i) {
    cluster_only_ = ranked[i];
    placed = PlaceAll(w, self, flavors, reserved_by, out, i == 0 ? &first_why : nullptr);
  }
  cluster_only_ = -1;
  if (!placed && why != nullptr) {
    if (!ranked.empty()) {
      *why = first_why;
    } else {
      // No cluster has the capacity (or the queue may use none): say so per the first group.
      why->group = 0;
      why->flavor = flavors.empty() ? kCpuFlavorId : flavors[0];
      why->tasks_needed = w.groups.empty() ? 0 : w.groups[0].replicas;
      why->tasks_placeable = 0;
    }
  }
  return placed;
}

bool Placer::PlaceAll(const WorkloadInfo& w, WorkloadIndex self, const std::vector<FlavorId>& flavors,
                      const std::vector<WorkloadIndex>& reserved_by, std::vector<TaskPlacement>* out,
                      PlacementDetail* why) {
  size_t first = out->size();
  for (int32_t g = 0; g < static_cast<int32_t>(w.groups.size()); ++g) {
    ++attempt_;  // static filters depend on the group's request
    if (attempt_ == 0) {
      std::fill(stamp_.begin(), stamp_.end(), 0);
      attempt_ = 1;
    }
    probe_ = state_.rules().Resolve(w, g);
    for (int32_t r = 0; r < w.groups[g].replicas; ++r) {
      TaskPlacement p;
      if (!PlaceTask(w, self, g, r, flavors[g], reserved_by, &p)) {
        // With its other tasks still held, name the placement rule that stopped this one (explain
        // scans for one task alone and would not see them).
        if (why && !probe_.empty()) why->rule_example = RuleNote(w, self, g, flavors[g], reserved_by);
        // All or nothing: give back what this workload took.
        for (size_t i = out->size(); i > first; --i) state_.Release(w, (*out)[i - 1]);
        out->resize(first);
        probe_ = RuleProbe{};
        if (why) {
          why->group = g;
          why->flavor = flavors[g];
          why->tasks_needed = w.groups[g].replicas;
          why->tasks_placeable = r;
        }
        return false;
      }
      state_.Allocate(w, p);
      out->push_back(std::move(p));
    }
  }
  probe_ = RuleProbe{};
  return true;
}

std::string Placer::RuleNote(const WorkloadInfo& w, WorkloadIndex self, int32_t group, FlavorId flavor,
                             const std::vector<WorkloadIndex>& reserved_by) {
  const TaskRequest& t = w.groups[group].task;
  for (NodeIndex n = 0; n < state_.num_nodes(); ++n) {
    if (!InCluster(n) || (reserved_by[n] != kNone && reserved_by[n] != self)) continue;
    if (CachedStaticFilter(n, w.queue, t, flavor) != FilterReason::kCount) continue;
    RuleBlock b = state_.rules().Check(probe_, n);
    if (!b.blocks()) continue;
    TaskPlacement p;
    if (FitOnNode(n, t, flavor, &p, nullptr) != FilterReason::kCount) continue;
    state_.rules().Name(state_.nodes(), w, group, n, &b);
    return DescribeRuleBlock(b);
  }
  return "";
}

int64_t Placer::CpuCloseness(NodeIndex n, const TaskRequest& t) const {
  // 1,000,000 less the shortfalls in millionths of the request: higher is closer.
  auto short_part = [](int64_t want, int64_t free) -> int64_t {
    if (want <= 0 || free >= want) return 0;
    return static_cast<int64_t>(static_cast<double>(want - std::max<int64_t>(0, free)) * 1e6 / static_cast<double>(want));
  };
  return 2'000'000 - short_part(t.cpu_milli, state_.cpu_free(n)) - short_part(t.memory_bytes, state_.memory_free(n));
}

PlacementDetail Placer::Explain(const WorkloadInfo& w, int32_t group, FlavorId flavor,
                                const std::vector<WorkloadIndex>& reserved_by, WorkloadIndex self) {
  PlacementDetail d;
  gate_.For(w);
  const TaskRequest& t = w.groups[group].task;
  d.group = group;
  d.flavor = flavor;
  d.nodes_total = state_.num_nodes();
  d.tasks_needed = w.groups[group].replicas;
  for (const auto& req : t.runtime) d.runtime_needed += (d.runtime_needed.empty() ? "" : ", ") + req.text;
  for (const auto& [k, v] : t.node_selector) d.selector_needed += (d.selector_needed.empty() ? "" : ", ") + k + "=" + v;
  int64_t best_score = -1;
  const RuleProbe probe = state_.rules().Resolve(w, group);
  d.max_per_node = probe.max_per_node;
  for (NodeIndex n = 0; n < state_.num_nodes(); ++n) {
    FilterReason r = StaticFilter(n, w.queue, t, flavor);
    if (r == FilterReason::kCount && reserved_by[n] != kNone && reserved_by[n] != self) r = FilterReason::kReserved;
    std::string lacks;
    TaskPlacement p;
    if (r == FilterReason::kCount) r = FitOnNode(n, t, flavor, &p, &lacks);
    if (r == FilterReason::kCount && !probe.empty()) {
      // It has room: do the group's placement rules let one more task of it go here?
      RuleBlock b = state_.rules().Check(probe, n);
      if (b.blocks()) {
        r = b.kind == RuleKind::kMaxPerNode ? FilterReason::kMaxPerNode
            : b.kind == RuleKind::kSpread   ? FilterReason::kSpread
                                            : FilterReason::kAntiAffinity;
        if (d.rule_example.empty()) {
          state_.rules().Name(state_.nodes(), w, group, n, &b);
          d.rule_example = DescribeRuleBlock(b);
        }
      } else if (probe.max_per_node > 0) {
        d.rule_room += probe.max_per_node - state_.rules().OnNode(probe, n);
      }
    }
    if (r == FilterReason::kCount) {
      ++d.nodes_feasible;
      continue;
    }
    ++d.filtered[static_cast<size_t>(r)];
    if (r == FilterReason::kWindowReserved && d.reservation_note.empty()) d.reservation_note = gate_.Why(n);
    // Closest candidate: passes the static filters, has the flavor, and has the most of it free;
    // CPU-only work: the smallest shortfall of cpu and memory, each relative to the request.
    if (r >= FilterReason::kCpu && r <= FilterReason::kTopology && r != FilterReason::kNoDevice) {
      int64_t score = TaskUsesDevices(t, flavor) ? state_.whole_free(n, flavor) * 1000 : CpuCloseness(n, t);
      if (t.share_milli > 0) {
        score = 0;
        for (size_t i = 0; i < state_.nodes()[n].devices.size(); ++i) {
          if (state_.nodes()[n].devices[i].flavor == flavor && state_.device_usable(n, static_cast<int32_t>(i))) {
            score = std::max<int64_t>(score, state_.device_free_milli(n, static_cast<int32_t>(i)));
          }
        }
      }
      if (r == FilterReason::kTopology) score += 500;  // enough devices, wrong shape: closest of all
      if (score > best_score) {
        best_score = score;
        d.best_node = state_.nodes()[n].name;
        d.best_lacks = lacks;
      }
    }
  }
  // With maxPerNode, a node that fits one task takes at most what the limit leaves on it.
  d.tasks_placeable = std::min(probe.max_per_node > 0 ? d.rule_room : d.nodes_feasible, d.tasks_needed);
  return d;
}

}  // namespace abacus::sched

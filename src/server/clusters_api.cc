// ControlPlane: clusters as the API lists them (GET /api/v1/clusters): the declared ones (kind
// Cluster) and those agents registered into without a declaration, each with its nodes and
// devices per flavor, so that `abacus get clusters` shows where capacity is.
#include <map>

#include "common/mutex.h"
#include "server/control_plane.h"

namespace abacus::server {

std::vector<ClusterView> ControlPlane::ListClusters() const {
  ReaderLock lock(state_mu_);
  auto usage = ledger_.DeviceUsage();
  std::vector<ClusterView> items;
  std::map<std::string, size_t> index;  // name -> position in items (declared first, then by node)
  auto entry = [&](const std::string& name) -> ClusterView& {
    auto [it, added] = index.try_emplace(name, items.size());
    if (added) items.emplace_back().name = name;
    return items[it->second];
  };
  for (const ClusterConfig* c : ledger_.config().clusters()) entry(c->name).declared = *c;
  for (const auto& [name, n] : ledger_.nodes()) {
    ClusterView& v = entry(n.node.cluster);
    v.nodes += 1;
    if (n.node.state == NodeState::kReady) v.ready_nodes += 1;
    v.cpu_milli += n.node.cpu_milli;
    v.pools.insert(n.node.pool);
    auto held = usage.find(name);
    for (const Device& d : n.node.devices) {
      ClusterDevicesView& f = v.devices[d.flavor.name()];
      f.total += 1;
      if (held != usage.end()) {
        if (auto u = held->second.find(d.index); u != held->second.end()) f.allocated_milli += u->second;
      }
      if (d.health != DeviceHealth::kHealthy) f.unhealthy += 1;
    }
  }
  return items;
}

}  // namespace abacus::server

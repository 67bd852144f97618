// ControlPlane: clusters as the API lists them (GET /api/v1/clusters): the declared ones (kind
// Cluster) and those agents registered into without a declaration, each with its nodes and
// devices per flavor, so that `abacus get clusters` shows where capacity is.
#include "common/mutex.h"
#include "server/control_plane.h"

namespace abacus::server {

using nlohmann::json;

json ControlPlane::ListClusters() const {
  ReaderLock lock(state_mu_);
  auto usage = ledger_.DeviceUsage();
  std::map<std::string, json> by_name;
  std::vector<std::string> order;
  auto entry = [&](const std::string& name) -> json& {
    auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    order.push_back(name);
    return by_name[name] = json{{"kind", "Cluster"}, {"name", name}, {"declared", false}};
  };
  for (const ClusterConfig* c : ledger_.config().clusters()) {
    json& j = entry(c->name);
    j = abacus::ToJson(SpecObject(*c));
    j["declared"] = true;
  }
  for (const auto& [name, n] : ledger_.nodes()) {
    json& j = entry(n.node.cluster);
    j["nodes"] = j.value("nodes", 0) + 1;
    if (n.node.state == NodeState::kReady) j["readyNodes"] = j.value("readyNodes", 0) + 1;
    j["cpuMilli"] = j.value("cpuMilli", int64_t{0}) + n.node.cpu_milli;
    std::set<std::string> pools = j.value("pools", std::set<std::string>{});
    pools.insert(n.node.pool);
    j["pools"] = pools;
    auto held = usage.find(name);
    for (const Device& d : n.node.devices) {
      json& f = j["devices"][d.flavor.name()];
      if (f.is_null()) f = {{"total", 0}, {"allocatedMilli", 0}};
      f["total"] = f.value("total", 0) + 1;
      int32_t used = 0;
      if (held != usage.end()) {
        if (auto u = held->second.find(d.index); u != held->second.end()) used = u->second;
      }
      f["allocatedMilli"] = f.value("allocatedMilli", 0) + used;
      if (d.health != DeviceHealth::kHealthy) f["unhealthy"] = f.value("unhealthy", 0) + 1;
    }
  }
  json items = json::array();
  for (const auto& name : order) {
    json& j = by_name[name];
    for (const char* k : {"nodes", "readyNodes"}) {
      if (!j.contains(k)) j[k] = 0;
    }
    if (!j.contains("devices")) j["devices"] = json::object();
    items.push_back(std::move(j));
  }
  return {{"items", items}};
}

}  // namespace abacus::server

#include "gateway/server_plan.h"

#include <algorithm>
#include <numeric>

namespace abacus::gateway {

using nlohmann::json;

const char* ServerAdminName(ServerAdmin a) {
  switch (a) {
    case ServerAdmin::kReady: return "ready";
    case ServerAdmin::kDrain: return "drain";
    case ServerAdmin::kMaint: return "maint";
  }
  return "maint";
}

std::string ServerName(const std::string& task_id) { return "t-" + task_id; }

ServerSet WantedServers(const json& endpoints) {
  const json rollout = endpoints.value("rollout", json::object());
  const int percent = std::clamp(rollout.value("canaryPercent", 0), 0, 100);
  int stable = 0, canary = 0;  // ready serving replicas of each version
  for (const json& e : endpoints.value("items", json::array())) {
    if (!e.value("ready", false) || e.value("state", "") != "serving") continue;
    (e.value("version", "stable") == "canary" ? canary : stable) += 1;
  }
  // canary weight / (canary weight + stable weight) = percent / 100, with each replica of a
  // version weighing the same: wc = percent × S, ws = (100 − percent) × C per replica.
  int wc = 1, ws = 1;
  if (canary > 0 && stable > 0 && percent > 0 && percent < 100) {
    wc = percent * stable;
    ws = (100 - percent) * canary;
    const int g = std::gcd(wc, ws);
    wc /= g;
    ws /= g;
    const int top = std::max(wc, ws);
    if (top > 256) {  // HAProxy weights are 0..256
      wc = std::max(1, wc * 256 / top);
      ws = std::max(1, ws * 256 / top);
    }
  }
  ServerSet out;
  for (const json& e : endpoints.value("items", json::array())) {
    ServerWant w;
    w.address = e.value("address", "");
    if (w.address.empty()) continue;
    const bool is_canary = e.value("version", "stable") == "canary";
    w.weight = is_canary ? wc : ws;
    if (e.value("state", "") == "draining") {
      w.admin = ServerAdmin::kDrain;
    } else {
      w.admin = e.value("ready", false) ? ServerAdmin::kReady : ServerAdmin::kMaint;
    }
    out[ServerName(e.value("taskId", ""))] = w;
  }
  return out;
}

std::vector<std::string> PlanCommands(const std::string& backend, const ServerSet& have, const ServerSet& want,
                                      bool health_checks) {
  std::vector<std::string> out;
  for (const auto& [name, w] : want) {
    const std::string server = backend + "/" + name;
    auto it = have.find(name);
    if (it == have.end() || it->second.address != w.address) {
      if (it != have.end()) {  // the same task on another address: replace it
        out.push_back("set server " + server + " state maint");
        out.push_back("shutdown sessions server " + server);
        out.push_back("del server " + server);
      }
      // A server added at run time starts in maint.
      out.push_back("add server " + server + " " + w.address + " weight " + std::to_string(w.weight) +
                    (health_checks ? " check" : ""));
      if (health_checks) out.push_back("enable health " + server);
      if (w.admin != ServerAdmin::kMaint) out.push_back(std::string("set server ") + server + " state " + ServerAdminName(w.admin));
      continue;
    }
    if (it->second.weight != w.weight) out.push_back("set server " + server + " weight " + std::to_string(w.weight));
    if (it->second.admin != w.admin) out.push_back(std::string("set server ") + server + " state " + ServerAdminName(w.admin));
  }
  for (const auto& [name, h] : have) {
    if (want.count(name) != 0) continue;
    const std::string server = backend + "/" + name;
    if (h.admin != ServerAdmin::kMaint) out.push_back("set server " + server + " state maint");
    out.push_back("shutdown sessions server " + server);
    out.push_back("del server " + server);
  }
  return out;
}

}  // namespace abacus::gateway

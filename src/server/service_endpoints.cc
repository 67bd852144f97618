#include "server/service_endpoints.h"

#include <algorithm>
#include <set>
#include <string>

#include "server/task_ids.h"

namespace abacus::server {

using nlohmann::json;

Result<json> ServiceEndpoints(const json& view) {
  const std::string id = view.value("id", "");
  if (view.value("kind", "") != "InferenceService") {
    return FailedPrecondition("workload '" + view.value("name", id) + "' is a " + view.value("kind", "workload") +
                              "; only an InferenceService has endpoints");
  }
  // The workload document's spec (view "spec" is the whole document: kind, metadata, spec).
  const json spec = view.value("spec", json::object()).value("spec", json::object());
  const json rollout_state =
      view.value("controllerState", json::object()).is_object()
          ? view.value("controllerState", json::object()).value("rollout", json::object())
          : json::object();
  const std::string phase = rollout_state.value("phase", "Stable");
  const std::string stable = rollout_state.value("stableVersion", "");
  const std::string canary = rollout_state.value("canaryVersion", "");
  const bool canary_runs = (phase == "Canary" || phase == "Paused") && !canary.empty();

  json items = json::array();
  std::set<int32_t> replicas, canaries;
  const int32_t attempt = view.value("requeues", 0) + 1;
  for (const json& p : view.value("placements", json::array())) {
    const int32_t replica = p.value("replica", 0);
    replicas.insert(replica);
    const std::string release = p.value("version", "");
    const bool is_canary = canary_runs && release == canary;
    if (is_canary) canaries.insert(replica);
    // Neither the stable release nor the canary that runs: a replica on its way out (a rolled
    // back canary draining, an old release being replaced after a promotion).
    const bool outgoing = !is_canary && !stable.empty() && !release.empty() && release != stable;
    if (p.value("group", 0) != 0) continue;
    const std::string address = p.value("address", "");
    const std::string task_phase = p.value("phase", "");
    if (address.empty() || (task_phase != "Running" && task_phase != "Stopping")) continue;
    const bool draining = p.value("stopRequested", false) || p.contains("drainUntilUs") || task_phase == "Stopping";
    TaskRef ref{id, 0, replica, attempt, p.value("run", 0)};
    items.push_back({{"replica", replica},
                     {"taskId", FormatTaskId(ref)},
                     {"address", address},
                     {"node", p.value("node", "")},
                     {"version", is_canary ? "canary" : outgoing ? "outgoing" : "stable"},
                     {"release", release},
                     {"ready", p.value("routed", false) && !draining},
                     {"state", draining ? "draining" : "serving"}});
  }
  std::sort(items.begin(), items.end(), [](const json& a, const json& b) { return a["replica"] < b["replica"]; });

  json rollout = {{"phase", phase}, {"stableVersion", stable}};
  if (canary_runs) {
    rollout["canaryVersion"] = canary;
    // The canary's share of requests: the spec's canaryPercent, else its share of the replicas.
    const json r = spec.value("rollout", json::object());
    int pct = r.value("canaryPercent", 0);
    if (pct <= 0 && !replicas.empty()) pct = static_cast<int>(100 * canaries.size() / replicas.size());
    rollout["canaryPercent"] = pct;
  }
  json out = {{"service", id},
              {"name", view.value("name", "")},
              {"project", view.value("project", "")},
              {"state", view.value("state", "")},
              {"rollout", std::move(rollout)},
              {"items", std::move(items)}};
  const json readiness = spec.value("probes", json::object()).value("readiness", json::object());
  if (readiness.contains("http")) out["healthCheck"] = {{"path", readiness["http"].value("path", "/")}};
  // A gateway posts this metric per replica when the service scales on what it observes.
  const json target = spec.value("autoscaling", json::object()).value("target", json());
  if (target.is_object() && target.size() == 1) out["autoscaling"] = {{"metric", target.begin().key()}};
  return out;
}

}  // namespace abacus::server

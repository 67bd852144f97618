#include "server/records.h"

#include <algorithm>
#include <set>

#include "common/ids.h"
#include "model/extended_resource.h"
#include "model/quantity.h"
#include "workload/workload_codec.h"

namespace abacus::server {
namespace {

using nlohmann::json;

int64_t TimeField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

json EventJson(WorkloadState state, const std::string& message, json details) {
  details["state"] = WorkloadStateName(state);
  if (!message.empty()) details["message"] = message;
  return details;
}

json ToJson(const WorkloadRecord& r) {
  json j = ToJsonWithoutSpec(r);
  j["spec"] = abacus::ToJson(r.spec);
  return j;
}

json ToJsonWithoutSpec(const WorkloadRecord& r) {
  json placements = json::array();
  for (const auto& p : r.placements) {
    json devices = json::array();
    for (const auto& d : p.devices) devices.push_back({{"index", d.index}, {"milli", d.milli}, {"memory", d.memory}});
    json pj = {{"group", p.group},
               {"replica", p.replica},
               {"node", p.node},
               {"cpuMilli", p.cpu_milli},
               {"memoryBytes", p.memory_bytes},
               {"devices", std::move(devices)}};
    if (!p.phase.empty()) {
      pj["phase"] = p.phase;
      pj["exitCode"] = p.exit_code;
      if (p.signal != 0) pj["signal"] = p.signal;
      if (p.oom_killed) pj["oomKilled"] = true;
      if (p.stopped) pj["stopped"] = true;
      if (!p.message.empty()) pj["message"] = p.message;
      if (!p.lost_reason.empty()) pj["lostReason"] = p.lost_reason;
      if (ToMicros(p.started_at) != 0) pj["startedUs"] = ToMicros(p.started_at);
      if (ToMicros(p.finished_at) != 0) pj["finishedUs"] = ToMicros(p.finished_at);
    }
    if (p.stop_requested || ToMicros(p.drain_until) != 0) {
      if (p.stop_requested) pj["stopRequested"] = true;
      pj["stopSignal"] = p.stop_signal;
      pj["stopGraceSeconds"] = p.stop_grace;
    }
    if (ToMicros(p.drain_until) != 0) pj["drainUntilUs"] = ToMicros(p.drain_until);
    if (p.ready) pj["ready"] = *p.ready;
    if (p.live) pj["live"] = *p.live;
    if (p.readiness_run != 0) pj["readinessRun"] = p.readiness_run;
    if (p.liveness_run != 0) pj["livenessRun"] = p.liveness_run;
    if (p.run != 0) pj["run"] = p.run;
    if (p.index >= 0) pj["index"] = p.index;
    if (!p.version.empty()) pj["version"] = p.version;
    if (p.routed) pj["routed"] = true;
    if (!p.address.empty()) pj["address"] = p.address;
    if (p.restart) {
      pj["restart"] = true;
      pj["restartUs"] = ToMicros(p.restart_at);
    }
    if (p.results) pj["results"] = *p.results;
    if (!p.results_error.empty()) pj["resultsError"] = p.results_error;
    placements.push_back(std::move(pj));
  }
  json j = {{"id", r.id},
            {"name", r.spec.name},
            {"kind", WorkloadKindName(r.spec.kind())},
            {"project", r.spec.project},
            {"queue", r.spec.queue},
            {"priorityClass", r.spec.priority_class},
            {"state", WorkloadStateName(r.state)},
            {"submittedUs", ToMicros(r.submitted)},
            {"groupFlavors", r.group_flavors},
            {"placements", std::move(placements)},
            {"requeues", r.requeues}};
  if (r.failures != 0) j["failures"] = r.failures;
  if (!r.failure_reason.empty()) j["failureReason"] = r.failure_reason;
  if (r.requeue_reason != RequeueReason::kNone) j["requeueReason"] = RequeueReasonName(r.requeue_reason);
  if (!r.submitted_by.empty()) j["submittedBy"] = r.submitted_by;
  if (ToMicros(r.started_at) != 0) j["startedUs"] = ToMicros(r.started_at);
  if (r.prior_runtime_us != 0) j["priorRuntimeUs"] = r.prior_runtime_us;
  if (ToMicros(r.not_before) != 0) j["notBeforeUs"] = ToMicros(r.not_before);
  if (r.infra_requeues != 0) j["infraRequeues"] = r.infra_requeues;
  if (!r.next_env.empty()) j["nextEnv"] = r.next_env;
  if (!r.controller_state.is_null()) j["controllerState"] = r.controller_state;
  if (!r.next_runs.empty()) j["nextRuns"] = r.next_runs;
  if (ToMicros(r.first_admitted_at) != 0) j["firstAdmittedUs"] = ToMicros(r.first_admitted_at);
  if (!r.yields_to.empty()) j["yieldsTo"] = r.yields_to;
  if (r.yield_count != 0) j["yieldCount"] = r.yield_count;
  for (const auto& g : r.quota_grants) {
    json gj = {{"resource", g.resource.Name()}, {"amount", g.amount.ToString()}};
    if (ToMicros(g.until) != 0) gj["untilUs"] = ToMicros(g.until);
    j["quotaGrants"].push_back(std::move(gj));
  }
  for (const auto& v : r.revisions) {
    json vj = {{"revision", v.revision}, {"version", v.version}, {"image", v.image}, {"command", v.command},
               {"env", v.env}, {"atUs", ToMicros(v.at)}, {"by", v.by}, {"diff", v.diff}};
    j["revisions"].push_back(std::move(vj));
  }
  if (r.quota_decision) {
    j["quotaDecision"] = {{"approved", r.quota_decision->approved},
                          {"by", r.quota_decision->by},
                          {"atUs", ToMicros(r.quota_decision->at)}};
  }
  if (ToMicros(r.admitted_at) != 0) j["admittedUs"] = ToMicros(r.admitted_at);
  if (ToMicros(r.preempted_at) != 0) j["preemptedUs"] = ToMicros(r.preempted_at);
  if (ToMicros(r.finished_at) != 0) j["finishedUs"] = ToMicros(r.finished_at);
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.hold.empty()) {
    j["hold"] = r.hold;
    j["holdBy"] = r.hold_by;
  }
  if (r.evict_reason != RequeueReason::kNone) j["evictReason"] = RequeueReasonName(r.evict_reason);
  if (r.priority) j["priority"] = *r.priority;
  return j;
}

Result<WorkloadRecord> WorkloadRecordFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("workload record: not an object");
  WorkloadRecord r;
  try {
    r.id = j.at("id").get<std::string>();
    auto spec = WorkloadFromJson(j.at("spec"));
    if (!spec.ok()) return spec.status().WithContext("workload record " + r.id);
    r.spec = std::move(*spec);
    auto state = ParseWorkloadState(j.at("state").get<std::string>());
    if (!state.ok()) return state.status();
    r.state = *state;
    r.submitted = FromMicros(TimeField(j, "submittedUs"));
    r.admitted_at = FromMicros(TimeField(j, "admittedUs"));
    r.preempted_at = FromMicros(TimeField(j, "preemptedUs"));
    r.finished_at = FromMicros(TimeField(j, "finishedUs"));
    r.message = j.value("message", "");
    r.requeues = j.value("requeues", 0);
    r.failures = j.value("failures", 0);
    r.failure_reason = j.value("failureReason", "");
    r.requeue_reason = ParseRequeueReason(j.value("requeueReason", ""));
    r.submitted_by = j.value("submittedBy", "");  // absent in records stored before issue 23
    r.started_at = FromMicros(TimeField(j, "startedUs"));
    r.prior_runtime_us = j.value("priorRuntimeUs", int64_t{0});
    r.not_before = FromMicros(TimeField(j, "notBeforeUs"));
    r.infra_requeues = j.value("infraRequeues", 0);
    if (j.contains("nextEnv")) r.next_env = j.at("nextEnv").get<std::map<std::string, std::string>>();
    if (j.contains("controllerState")) r.controller_state = j.at("controllerState");
    if (j.contains("nextRuns") && j["nextRuns"].is_object()) r.next_runs = j["nextRuns"].get<std::map<std::string, int32_t>>();
    r.first_admitted_at = FromMicros(TimeField(j, "firstAdmittedUs"));
    r.yields_to = j.value("yieldsTo", "");
    r.hold = j.value("hold", "");
    r.hold_by = j.value("holdBy", "");
    r.evict_reason = ParseRequeueReason(j.value("evictReason", ""));
    if (j.contains("priority") && j["priority"].is_number_integer()) r.priority = j["priority"].get<int32_t>();
    r.yield_count = j.value("yieldCount", 0);
    for (const auto& g : j.value("quotaGrants", json::array())) {
      auto res = QuotaResource::Parse(g.at("resource").get<std::string>());
      if (!res.ok()) return res.status().WithContext("workload record " + r.id + " quotaGrants");
      auto amount = Quantity::Parse(g.at("amount").get<std::string>());
      if (!amount.ok()) return amount.status().WithContext("workload record " + r.id + " quotaGrants");
      r.quota_grants.push_back({*res, *amount, FromMicros(TimeField(g, "untilUs"))});
    }
    for (const auto& v : j.value("revisions", json::array())) {
      RevisionRecord rv;
      rv.revision = v.value("revision", 1);
      rv.version = v.value("version", "");
      rv.image = v.value("image", "");
      rv.command = v.value("command", std::vector<std::string>{});
      rv.env = v.value("env", std::map<std::string, std::string>{});
      rv.at = FromMicros(TimeField(v, "atUs"));
      rv.by = v.value("by", "");
      rv.diff = v.value("diff", json::array());
      r.revisions.push_back(std::move(rv));
    }
    if (j.contains("quotaDecision")) {
      const json& d = j.at("quotaDecision");
      r.quota_decision = QuotaDecisionRecord{d.value("approved", false), d.value("by", ""),
                                             FromMicros(TimeField(d, "atUs"))};
    }
    if (j.contains("groupFlavors")) r.group_flavors = j.at("groupFlavors").get<std::vector<std::string>>();
    for (const auto& p : j.value("placements", json::array())) {
      PlacementRecord pr;
      pr.group = p.at("group").get<int32_t>();
      pr.replica = p.at("replica").get<int32_t>();
      pr.node = p.at("node").get<std::string>();
      pr.cpu_milli = p.value("cpuMilli", int64_t{0});
      pr.memory_bytes = p.value("memoryBytes", int64_t{0});
      for (const auto& d : p.value("devices", json::array())) {
        pr.devices.push_back({d.at("index").get<int>(), d.value("milli", 0), d.value("memory", int64_t{0})});
      }
      pr.phase = p.value("phase", "");
      pr.exit_code = p.value("exitCode", 0);
      pr.signal = p.value("signal", 0);
      pr.oom_killed = p.value("oomKilled", false);
      pr.stopped = p.value("stopped", false);
      pr.message = p.value("message", "");
      pr.started_at = FromMicros(TimeField(p, "startedUs"));
      pr.finished_at = FromMicros(TimeField(p, "finishedUs"));
      pr.lost_reason = p.value("lostReason", "");
      pr.stop_requested = p.value("stopRequested", false);
      pr.stop_signal = p.value("stopSignal", "");
      pr.stop_grace = p.value("stopGraceSeconds", 0);
      pr.drain_until = FromMicros(TimeField(p, "drainUntilUs"));
      if (p.contains("ready")) pr.ready = p.at("ready").get<bool>();
      if (p.contains("live")) pr.live = p.at("live").get<bool>();
      pr.readiness_run = p.value("readinessRun", 0);
      pr.liveness_run = p.value("livenessRun", 0);
      pr.run = p.value("run", 0);
      pr.index = p.value("index", -1);
      pr.version = p.value("version", "");
      pr.routed = p.value("routed", false);
      pr.address = p.value("address", "");
      pr.restart = p.value("restart", false);
      pr.restart_at = FromMicros(TimeField(p, "restartUs"));
      if (p.contains("results")) pr.results = p.at("results").get<std::string>();
      pr.results_error = p.value("resultsError", "");
      r.placements.push_back(std::move(pr));
    }
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("workload record: ") + e.what());
  }
  return r;
}

json DeviceJson(const Device& d) {
  json dj = {{"index", d.index},
             {"uuid", d.uuid},
             {"flavor", d.flavor.name()},
             {"memoryBytes", d.memory_bytes},
             {"health", DeviceHealthName(d.health)},
             {"simulated", d.simulated}};
  if (!d.driver_version.empty()) dj["driverVersion"] = d.driver_version;
  if (!d.runtime_versions.empty()) dj["runtimeVersions"] = d.runtime_versions;
  if (d.topology.numa_node >= 0) dj["numa"] = d.topology.numa_node;
  if (!d.topology.interconnect_domain.empty()) dj["interconnectDomain"] = d.topology.interconnect_domain;
  if (!d.topology.pcie_switch.empty()) dj["pcieSwitch"] = d.topology.pcie_switch;
  return dj;
}

json ToJson(const NodeRecord& n) {
  const Node& node = n.node;
  json devices = json::array();
  for (const auto& d : node.devices) devices.push_back(DeviceJson(d));
  json taints = json::array();
  for (const auto& t : node.taints) {
    taints.push_back({{"key", t.key}, {"value", t.value}, {"effect", TaintEffectName(t.effect)}});
  }
  json j = {{"name", node.name},
            {"cluster", node.cluster},
            {"pool", node.pool},
            {"labels", node.labels},
            {"taints", std::move(taints)},
            {"cpuMilli", node.cpu_milli},
            {"memoryBytes", node.memory_bytes},
            {"state", NodeStateName(node.state)},
            {"simulated", n.simulated},
            {"devices", std::move(devices)}};
  if (!node.extended.empty()) j["extended"] = node.extended;  // exact units (bytes for storage)
  if (n.agent) {
    j["agent"] = true;
    if (!n.agent_version.empty()) j["agentVersion"] = n.agent_version;
  }
  if (ToMicros(node.last_heartbeat) != 0) j["lastHeartbeatUs"] = ToMicros(node.last_heartbeat);
  if (ToMicros(n.not_ready_since) != 0) j["notReadySinceUs"] = ToMicros(n.not_ready_since);
  if (n.cordon.state != NodeState::kReady) {
    json c = {{"state", NodeStateName(n.cordon.state)}, {"sinceUs", ToMicros(n.cordon.since)}, {"by", n.cordon.by}};
    if (!n.cordon.reason.empty()) c["reason"] = n.cordon.reason;
    if (ToMicros(n.cordon.deadline) != 0) c["deadlineUs"] = ToMicros(n.cordon.deadline);
    if (n.cordon.requeue_all) c["requeueAll"] = true;
    j["cordon"] = std::move(c);
  }
  if (!n.health.empty()) {
    json faults = json::array();
    for (const auto& f : n.health.faults) {
      faults.push_back({{"index", f.index}, {"atUs", ToMicros(f.at)}, {"reason", f.reason}});
    }
    json probation = json::array();
    for (const auto& [index, since] : n.health.probation) probation.push_back({{"index", index}, {"sinceUs", ToMicros(since)}});
    j["health"] = {{"faults", std::move(faults)}, {"probation", std::move(probation)}};
  }
  j["schedulingState"] = NodeStateName(n.EffectiveState());
  return j;
}

Result<NodeRecord> NodeRecordFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("node: expected a JSON object");
  std::vector<std::string> problems;
  auto problem = [&](std::string field, std::string message) { problems.push_back(field + ": " + message); };
  NodeRecord rec;
  Node& n = rec.node;
  try {
    n.name = j.value("name", "");
    if (!IsValidName(n.name)) problem("name", "must be 1-63 characters of [a-z0-9-_.], got '" + n.name + "'");
    n.cluster = j.value("cluster", "default");
    n.pool = j.value("pool", "");
    if (n.pool.empty()) n.pool = "default";
    if (n.cluster.empty()) n.cluster = "default";
    if (j.contains("labels")) n.labels = j.at("labels").get<std::map<std::string, std::string>>();
    for (const auto& t : j.value("taints", json::array())) {
      Taint taint;
      taint.key = t.value("key", "");
      taint.value = t.value("value", "");
      auto effect = ParseTaintEffect(t.value("effect", "NoSchedule"));
      if (!effect.ok()) {
        problem("taints", effect.status().message());
      } else {
        taint.effect = *effect;
      }
      n.taints.push_back(std::move(taint));
    }
    // cpu / memory as quantities, or the exact integer fields.
    if (j.contains("cpuMilli")) {
      n.cpu_milli = j.at("cpuMilli").get<int64_t>();
    } else if (j.contains("cpu")) {
      auto q = Quantity::Parse(j.at("cpu").is_string() ? j.at("cpu").get<std::string>() : j.at("cpu").dump());
      if (q.ok()) n.cpu_milli = q->milli(); else problem("cpu", q.status().message());
    }
    if (j.contains("memoryBytes")) {
      n.memory_bytes = j.at("memoryBytes").get<int64_t>();
    } else if (j.contains("memory")) {
      auto q = Quantity::Parse(j.at("memory").is_string() ? j.at("memory").get<std::string>() : j.at("memory").dump());
      if (q.ok()) n.memory_bytes = q->CeilUnits(); else problem("memory", q.status().message());
    }
    if (n.cpu_milli <= 0) problem("cpu", "must be positive");
    if (n.memory_bytes <= 0) problem("memory", "must be positive");
    // Extended resources: {"rdma/hca": 4, "ephemeral-storage": "500Gi"} (numbers or quantities).
    if (j.contains("extended")) {
      if (!j.at("extended").is_object()) problem("extended", "expected a map of resource name to amount");
      const json extended = j.value("extended", json::object());  // kept: items() of a temporary would dangle
      for (const auto& [name, v] : extended.items()) {
        auto r = ExtendedResource::Parse(name);
        if (!r.ok()) {
          problem("extended", r.status().message());
          continue;
        }
        auto amount = r->ParseAmount(v.is_string() ? v.get<std::string>() : v.dump());
        if (!amount.ok()) {
          problem("extended." + name, amount.status().message());
        } else if (*amount > 0) {
          n.extended[name] = *amount;
        }
      }
    }
    if (j.contains("state")) {
      auto s = ParseNodeState(j.at("state").get<std::string>());
      if (s.ok()) n.state = *s; else problem("state", s.status().message());
    }
    rec.simulated = j.value("simulated", false);
    rec.agent = j.value("agent", false);
    rec.agent_version = j.value("agentVersion", "");
    rec.credential_sha256 = j.value("credentialSha256", "");
    n.last_heartbeat = FromMicros(j.value("lastHeartbeatUs", int64_t{0}));
    rec.not_ready_since = FromMicros(j.value("notReadySinceUs", int64_t{0}));
    if (j.contains("cordon") && j["cordon"].is_object()) {
      const json& c = j["cordon"];
      auto cs = ParseNodeState(c.value("state", "Cordoned"));
      if (!cs.ok() || *cs == NodeState::kReady || *cs == NodeState::kNotReady) {
        problem("cordon.state", "expected Cordoned, Draining or Drained");
      } else {
        rec.cordon.state = *cs;
      }
      rec.cordon.since = FromMicros(c.value("sinceUs", int64_t{0}));
      rec.cordon.deadline = FromMicros(c.value("deadlineUs", int64_t{0}));
      rec.cordon.requeue_all = c.value("requeueAll", false);
      rec.cordon.by = c.value("by", "");
      rec.cordon.reason = c.value("reason", "");
    }
    if (j.contains("health") && j["health"].is_object()) {
      for (const auto& f : j["health"].value("faults", json::array())) {
        rec.health.faults.push_back(
            {f.value("index", 0), FromMicros(f.value("atUs", int64_t{0})), f.value("reason", std::string())});
      }
      for (const auto& p : j["health"].value("probation", json::array())) {
        rec.health.probation[p.value("index", 0)] = FromMicros(p.value("sinceUs", int64_t{0}));
      }
    }
    int next_index = 0;
    std::set<int> seen;
    int di = 0;
    for (const auto& d : j.value("devices", json::array())) {
      std::string field = "devices[" + std::to_string(di++) + "]";
      Device dev;
      dev.index = d.value("index", next_index);
      next_index = dev.index + 1;
      if (!seen.insert(dev.index).second) problem(field + ".index", "duplicate device index " + std::to_string(dev.index));
      auto f = Flavor::Parse(d.value("flavor", ""));
      if (!f.ok() || !f->is_accelerator()) {
        problem(field + ".flavor", f.ok() ? "must be an accelerator flavor" : f.status().message());
        continue;
      }
      dev.flavor = *f;
      dev.uuid = d.value("uuid", n.name + "-dev" + std::to_string(dev.index));
      if (d.contains("memoryBytes")) {
        dev.memory_bytes = d.at("memoryBytes").get<int64_t>();
      } else if (d.contains("memory")) {
        auto q = Quantity::Parse(d.at("memory").get<std::string>());
        if (q.ok()) dev.memory_bytes = q->CeilUnits(); else problem(field + ".memory", q.status().message());
      }
      std::string health = d.value("health", "Healthy");
      dev.health = health == "Healthy" ? DeviceHealth::kHealthy
                   : health == "Unhealthy" ? DeviceHealth::kUnhealthy
                                           : DeviceHealth::kUnknown;
      dev.driver_version = d.value("driverVersion", "");
      if (d.contains("runtimeVersions")) {
        dev.runtime_versions = d.at("runtimeVersions").get<std::map<std::string, std::string>>();
      }
      dev.topology.numa_node = d.value("numa", -1);
      dev.topology.interconnect_domain = d.value("interconnectDomain", "");
      dev.topology.pcie_switch = d.value("pcieSwitch", "");
      dev.simulated = d.value("simulated", rec.simulated);
      n.devices.push_back(std::move(dev));
    }
    std::sort(n.devices.begin(), n.devices.end(), [](const Device& a, const Device& b) { return a.index < b.index; });
  } catch (const json::exception& e) {
    problems.push_back(e.what());
  }
  if (!problems.empty()) {
    std::string msg;
    for (const auto& p : problems) msg += (msg.empty() ? "" : "\n") + p;
    return InvalidArgument(msg);
  }
  return rec;
}

const std::map<std::string, int64_t>& ExtendedHeld(const WorkloadRecord& r, const PlacementRecord& p) {
  static const std::map<std::string, int64_t> kNone;
  const auto& groups = r.spec.spec.task_groups;
  if (p.group < 0 || p.group >= static_cast<int>(groups.size())) return kNone;
  return groups[p.group].resources.extended;
}

}  // namespace abacus::server

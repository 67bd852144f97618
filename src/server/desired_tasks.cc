#include "server/desired_tasks.h"

#include "server/evaluation_archive.h"
#include "server/governance.h"
#include "server/secrets.h"
#include "server/task_ids.h"
#include "server/workload_update.h"
#include "workload/workload_codec.h"

namespace abacus::server {

using nlohmann::json;

bool TaskEnded(const PlacementRecord& p) { return p.phase == "Exited" || p.phase == "Lost"; }

std::string TaskIdOf(const WorkloadRecord& r, const PlacementRecord& p) {
  return FormatTaskId({r.id, p.group, p.replica, r.attempt(), p.run});
}

int32_t TaskIndex(const WorkloadRecord& r, const PlacementRecord& p) {
  // A batch slot runs the array task the controller put on it (-1: none yet).
  if (r.spec.kind() == WorkloadKind::kBatchJob) return p.index;
  // Instances of the whole group set (services): replica numbers run across them.
  if (r.spec.kind() == WorkloadKind::kInferenceService) return p.replica;
  // Otherwise the replicas of earlier groups come first.
  int32_t index = 0;
  for (int32_t g = 0; g < p.group && g < static_cast<int32_t>(r.spec.spec.task_groups.size()); ++g) {
    index += r.spec.spec.task_groups[g].replicas;
  }
  return index + p.replica;
}

std::map<std::string, std::string> TaskEnvironment(const WorkloadRecord& r, const PlacementRecord& p,
                                                   const std::string& task_id) {
  const RevisionRecord* version = TemplateForTask(r, p);  // a service replica's version (workload_update.h)
  std::map<std::string, std::string> env = version != nullptr ? version->env : r.spec.spec.env;
  for (const auto& [k, v] : r.next_env) env[k] = v;  // what the controller gave this attempt
  int32_t index = TaskIndex(r, p);
  env["ABACUS_WORKLOAD_ID"] = r.id;
  env["ABACUS_WORKLOAD_NAME"] = r.spec.name;
  env["ABACUS_PROJECT"] = r.spec.project;
  env["ABACUS_TASK_ID"] = task_id;
  env["ABACUS_TASK_GROUP"] = p.group < static_cast<int32_t>(r.spec.spec.task_groups.size())
                                 ? r.spec.spec.task_groups[p.group].name
                                 : std::to_string(p.group);
  env["ABACUS_TASK_REPLICA"] = std::to_string(p.replica);
  env["ABACUS_TASK_INDEX"] = std::to_string(index);
  const BatchSpec* batch = r.spec.batch();
  env["ABACUS_TASK_COUNT"] = std::to_string(batch != nullptr ? batch->tasks : static_cast<int32_t>(r.placements.size()));
  if (!p.version.empty()) env["ABACUS_VERSION"] = p.version;
  env["ABACUS_ATTEMPT"] = std::to_string(r.attempt());
  if (r.attempt() > 1) env["ABACUS_RESUME"] = "1";
  return env;
}

std::map<std::string, std::map<std::string, json>> DesiredTasks(const WorkloadRecord& r, const Ledger& ledger,
                                                                const FencingPolicy& fencing) {
  std::map<std::string, std::map<std::string, json>> out;
  if (r.waiting()) return out;
  std::string action;
  int32_t grace = kDefaultStopGraceSeconds;
  std::string signal = "SIGTERM";
  if (const TrainingSpec* t = r.spec.training(); t != nullptr && t->checkpoint) {
    signal = t->checkpoint->signal;
    if (r.state == WorkloadState::kPreempting) grace = t->checkpoint->grace_seconds;
  }
  // Per workload, not per task: the probes (services) and the data mounts (containers).
  json probes;
  if (r.spec.inference() != nullptr) {
    json spec = abacus::ToJson(r.spec);
    probes = spec.contains("spec") && spec["spec"].contains("probes") ? spec["spec"]["probes"] : json::object();
  }
  json mounts = json::array();
  for (const DataMount& m : r.spec.spec.mounts) {
    mounts.push_back({{"path", m.path}, {"mountPath", m.mount_path.empty() ? m.path : m.mount_path},
                      {"readOnly", m.read_only}});
  }
  const std::string network =
      r.spec.admission.network ? std::string(NetworkClassName(*r.spec.admission.network)) : "";
  // Secret references only: the values are opened into the agent's answer (SecretVault).
  const json secrets = SecretVault::References(r.spec);
  // An Evaluation's results file: the agent reads this name in ABACUS_RESULTS_DIR first.
  const EvaluationSpec* evaluation = r.spec.evaluation();
  const std::string results_file = evaluation != nullptr ? ResultsFileOf(evaluation->results_path) : "";
  for (const PlacementRecord& p : r.placements) {
    const NodeRecord* node = ledger.FindNode(p.node);
    if (node == nullptr || !node->agent) continue;
    if (TaskEnded(p)) continue;
    if (r.spec.kind() == WorkloadKind::kBatchJob && p.index < 0) continue;  // an empty slot: nothing to run
    int32_t task_grace = grace;
    std::string task_signal = signal;
    if (p.stop_requested) {
      action = "stop";  // a controller stopped it (gang member of a failed task, maxRuntime, TTL, …)
      task_grace = p.stop_grace;
      if (!p.stop_signal.empty()) task_signal = p.stop_signal;
    } else if (r.state == WorkloadState::kAdmitted || r.state == WorkloadState::kRunning) {
      action = "run";
    } else if (r.state == WorkloadState::kPreempting) {
      action = "stop";
    } else if (p.phase == "Running" || p.phase == "Stopping") {
      action = "stop";  // terminal: stop what still runs
    } else {
      continue;
    }
    std::string id = TaskIdOf(r, p);
    json devices = json::array();
    for (const DeviceGrantRecord& g : p.devices) {
      json d = {{"index", g.index}, {"milli", g.milli}, {"memoryBytes", g.memory}};
      for (const Device& dev : node->node.devices) {
        if (dev.index != g.index) continue;
        d["uuid"] = dev.uuid;
        d["vendor"] = dev.flavor.vendor();
        d["flavor"] = dev.flavor.name();
        d["deviceMemoryBytes"] = dev.memory_bytes;
      }
      devices.push_back(std::move(d));
    }
    json t = {{"taskId", id},
              {"workloadId", r.id},
              {"workload", r.spec.name},
              {"kind", WorkloadKindName(r.spec.kind())},
              {"project", r.spec.project},
              {"group", p.group},
              {"replica", p.replica},
              {"attempt", r.attempt()},
              {"run", p.run},
              {"action", action},
              {"command", TemplateForTask(r, p) != nullptr ? TemplateForTask(r, p)->command : r.spec.spec.command},
              {"env", TaskEnvironment(r, p, id)},
              {"image", TemplateForTask(r, p) != nullptr ? TemplateForTask(r, p)->image : r.spec.spec.image},
              {"cpuMilli", p.cpu_milli},
              {"memoryBytes", p.memory_bytes},
              {"devices", std::move(devices)},
              {"graceSeconds", task_grace},
              {"stopSignal", task_signal},
              {"fencingSignal", fencing.Signal(r)},
              {"fencingGraceSeconds", std::chrono::duration_cast<std::chrono::seconds>(fencing.Grace(r)).count()}};
    if (!probes.is_null()) t["probes"] = probes;
    if (!mounts.empty()) t["mounts"] = mounts;
    if (!secrets.is_null()) t["secrets"] = secrets;
    if (r.spec.spec.read_only_root) t["readOnlyRoot"] = true;  // spec.readOnlyRootFilesystem (containers)
    if (!network.empty()) t["network"] = network;  // the tenant's network class (admission policies)
    if (!results_file.empty()) t["resultsFile"] = results_file;
    out[p.node][id] = std::move(t);
  }
  return out;
}

}  // namespace abacus::server

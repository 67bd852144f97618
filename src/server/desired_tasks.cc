#include "server/desired_tasks.h"

#include <algorithm>

#include "control/batch.h"
#include "server/evaluation_archive.h"
#include "server/governance.h"
#include "server/secrets.h"
#include "server/task_ids.h"
#include "server/workload_update.h"
#include "wire/assignment.h"
#include "workload/workload_codec.h"

namespace abacus::server {

using nlohmann::json;

std::optional<Time> EndSeen(const PlacementRecord& p, Time floor, Time now) {
  if (!TaskEnded(p) || ToMicros(p.finished_at) == 0) return std::nullopt;
  return std::clamp(p.finished_at, std::min(floor, now), now);
}

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
  // The task's attempt: the workload's (requeues), plus for an array task the retries its index
  // has used (a BatchJob retries each index on its own: its second run is attempt 2).
  int32_t attempt = r.attempt();
  if (batch != nullptr && index >= 0 && r.controller_state.is_object()) {
    if (auto state = control::BatchStateFromJson(r.controller_state); state.ok()) {
      if (auto it = state->retries.find(index); it != state->retries.end()) attempt += it->second;
    }
  }
  env["ABACUS_ATTEMPT"] = std::to_string(attempt);
  if (attempt > 1) env["ABACUS_RESUME"] = "1";
  return env;
}

NodeTasks DesiredTasks(const WorkloadRecord& r, const Ledger& ledger, const FencingPolicy& fencing) {
  NodeTasks out;
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
  std::vector<wire::MountSpec> mounts;
  for (const DataMount& m : r.spec.spec.mounts) mounts.push_back(wire::MountSpec{m.path, m.mount_path, m.read_only});
  const std::string network =
      r.spec.admission.network ? std::string(NetworkClassName(*r.spec.admission.network)) : "";
  // Secret references only: the values are opened into the agent's answer (SecretVault).
  const std::optional<SecretReferences> secrets = SecretVault::References(r.spec);
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
    PublishedTask published;
    wire::TaskAssignment& t = published.task;
    t.task_id = TaskIdOf(r, p);
    for (const DeviceGrantRecord& g : p.devices) {
      wire::GrantedDevice d{g.index, g.milli, g.memory, std::nullopt};
      for (const Device& dev : node->node.devices) {
        if (dev.index != g.index) continue;
        d.info = wire::GrantedDeviceInfo{dev.uuid, std::string(dev.flavor.vendor()), dev.flavor.name(), dev.memory_bytes};
      }
      t.devices.push_back(std::move(d));
    }
    const RevisionRecord* version = TemplateForTask(r, p);
    t.workload_id = r.id;
    t.workload = r.spec.name;
    t.kind = WorkloadKindName(r.spec.kind());
    t.project = r.spec.project;
    t.group = p.group;
    t.replica = p.replica;
    t.attempt = r.attempt();
    t.run = p.run;
    t.action = action == "stop" ? wire::TaskAction::kStop : wire::TaskAction::kRun;
    t.command = version != nullptr ? version->command : r.spec.spec.command;
    t.env = TaskEnvironment(r, p, t.task_id);
    t.image = version != nullptr ? version->image : r.spec.spec.image;
    t.cpu_milli = p.cpu_milli;
    t.memory_bytes = p.memory_bytes;
    t.grace_seconds = task_grace;
    t.stop_signal = task_signal;
    t.fencing_signal = fencing.Signal(r);
    t.fencing_grace_seconds = std::chrono::duration_cast<std::chrono::seconds>(fencing.Grace(r)).count();
    if (!probes.is_null()) t.probes = probes;
    t.mounts = mounts;
    t.read_only_root = r.spec.spec.read_only_root;  // spec.readOnlyRootFilesystem (containers)
    t.network = network;                            // the tenant's network class (admission policies)
    t.results_file = results_file;
    // Secret references only, for the server's vault (never sent): it opens them into the
    // answer's secretFiles, secretEnv and secretError (server/secrets.h).
    published.secrets = secrets;
    const std::string id = t.task_id;
    out[p.node][id] = std::move(published);
  }
  return out;
}

}  // namespace abacus::server

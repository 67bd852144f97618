// `abacus run NAME -- COMMAND...`: a quick job without a file, like `sbatch --wrap` (issue 23).
// The flags become one workload document, which goes through the submission path of
// `abacus submit -f` (submit.h): the same parse, validation, errors and answer.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/client.h"
#include "cli/number_flags.h"
#include "cli/submit.h"
#include "cli/verbs.h"
#include "model/quantity.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct RunOptions {
  // cpu and memory: what a quick job gets unless it says (the spec requires both; sbatch gives one
  // CPU by default too).
  std::string name, queue, project, kind = "TrainingJob", gpus, cpu = "1", memory = "2Gi", image, priority_class,
                                                                   max_runtime;
  int replicas = 1;
  int tasks = 0;  // BatchJob: array tasks
  std::vector<std::string> env, labels, command;
  std::string server, token, ca_cert, output = "table";
  bool dry_run = false;
};

// Splits "K=V" entries of `flag` into a map; false (with the error printed) on one without '='.
bool KeyValues(const std::vector<std::string>& entries, const std::string& flag, std::map<std::string, std::string>& out) {
  for (const auto& e : entries) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: " << flag << " '" << e << "': expected KEY=VALUE\n";
      return false;
    }
    out[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return true;
}

// Returns the workload document `abacus run` submits for `o`, or null with the problem printed.
json RunDocument(const RunOptions& o) {
  // A bad amount is named by its flag, not by a line of the generated document.
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--cpu", o.cpu}, {"--memory", o.memory}}) {
    auto q = Quantity::Parse(value);
    if (!q.ok() || q->milli() <= 0) {
      std::cerr << "error: " << flag << " '" << value << "': expected " << (std::string(flag) == "--cpu" ? "cores, e.g. 4 or 2500m" : "bytes, e.g. 16Gi or 512Mi")
                << "\n";
      return nullptr;
    }
  }
  json resources = json::object();
  if (!o.cpu.empty()) resources["cpu"] = o.cpu;
  if (!o.memory.empty()) resources["memory"] = o.memory;
  if (!o.gpus.empty()) {
    // FLAVOR:COUNT ("gpu/nvidia/A100-80G:2"), or FLAVOR alone (one device).
    std::string flavor = o.gpus, count = "1";
    if (size_t colon = o.gpus.rfind(':'); colon != std::string::npos) {
      flavor = o.gpus.substr(0, colon);
      count = o.gpus.substr(colon + 1);
    }
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(count, &used);
      if (used != count.size()) n = 0;
    } catch (...) {
    }
    if (flavor.empty() || n <= 0) {
      std::cerr << "error: --gpus '" << o.gpus << "': expected FLAVOR:COUNT, e.g. gpu/nvidia/A100-80G:2\n";
      return nullptr;
    }
    resources["accelerators"] = {{"flavor", flavor}, {"count", n}};
  }
  json group = {{"name", "main"}, {"replicas", o.replicas}};
  if (!resources.empty()) group["resources"] = resources;
  json spec = {{"command", o.command}, {"taskGroups", json::array({group})}};
  if (!o.image.empty()) spec["image"] = o.image;
  std::map<std::string, std::string> env, labels;
  if (!KeyValues(o.env, "--env", env) || !KeyValues(o.labels, "--label", labels)) return nullptr;
  if (!env.empty()) spec["env"] = env;
  if (!o.max_runtime.empty()) spec["maxRuntime"] = o.max_runtime;
  if (o.tasks > 0) spec["tasks"] = o.tasks;
  json doc = {{"kind", o.kind}, {"name", o.name}, {"project", o.project}, {"queue", o.queue}, {"spec", spec}};
  if (!o.priority_class.empty()) doc["priorityClass"] = o.priority_class;
  if (!labels.empty()) doc["labels"] = labels;
  return doc;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Submit a quick job from flags, without a file (like sbatch --wrap); prints its id as submit does.\n"
      "The flags make one workload document (one task group 'main'), validated and submitted as\n"
      "`abacus submit -f` would.\n"
      "Examples: abacus run llama-ft --queue nlp-train --project nlp/llm --gpus gpu/nvidia/A100-80G:2 -- python "
      "train.py --lr 3e-4\n"
      "          abacus run prep --queue cpu --project acme/ml --cpu 4 --memory 16Gi --kind BatchJob --tasks 10 -- "
      "./prep.sh\n"
      "          abacus run probe --queue train --project acme/ml --dry-run -- nvidia-smi   (where it would go now)");
  cmd->add_option("NAME", o->name, "workload name (unique among the project's active workloads)")->required();
  cmd->add_option("COMMAND", o->command, "the command and its arguments, after --")->required();
  cmd->add_option("--queue", o->queue, "queue to submit to")->required();
  cmd->add_option("--project", o->project, "project, TENANT/PROJECT")->required();
  cmd->add_option("--kind", o->kind, "workload kind")
      ->capture_default_str()
      ->check(CLI::IsMember({"TrainingJob", "BatchJob", "Experiment", "Evaluation", "InferenceService"}));
  cmd->add_option("--gpus", o->gpus, "accelerators per task, FLAVOR:COUNT (gpu/nvidia/A100-80G:2, npu/huawei/910B:8)");
  cmd->add_option("--cpu", o->cpu, "cores per task (4, 2500m)")->capture_default_str();
  cmd->add_option("--memory", o->memory, "memory per task (16Gi)")->capture_default_str();
  cmd->add_option("--replicas", o->replicas, "tasks of the group (a gang for TrainingJob)")
      ->capture_default_str()
      ->check(AtLeast(1));
  cmd->add_option("--tasks", o->tasks, "BatchJob: array tasks")->check(AtLeast(1));
  cmd->add_option("--image", o->image, "container image (without: the command runs as a process)");
  // One KEY=VALUE per flag (repeat the flag): a vector option would also swallow what follows.
  cmd->add_option("--env", o->env, "KEY=VALUE, repeatable")->allow_extra_args(false);
  cmd->add_option("--label", o->labels, "KEY=VALUE, repeatable")->allow_extra_args(false);
  cmd->add_option("--priority-class", o->priority_class, "priority class");
  cmd->add_option("--max-runtime", o->max_runtime, "stop after this long (72h)");
  cmd->add_flag("--dry-run", o->dry_run,
                "validate, run the admission policies and explain where it would go now; store nothing");
  cmd->add_option("--server", o->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", o->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", o->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT)");
  cmd->add_option("-o,--output", o->output, "table, json or yaml")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  cmd->callback([=] {
    json doc = RunDocument(*o);
    if (doc.is_null()) {
      *exit_code = kExitUsage;
      return;
    }
    // JSON is YAML: the document goes through submit's parse and validation as text.
    ApplyMode mode;
    mode.dry_run = o->dry_run;
    *exit_code = SubmitSources(o->server, o->token, o->ca_cert, o->output, {{"abacus run", doc.dump(2)}}, true, mode);
  });
}

}  // namespace abacus::cli

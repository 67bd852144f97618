// The agent side of the agent protocol (docs/agent-protocol.md): the messages both ends share
// come from wire/agent_protocol.h (named here as the agent's code always named them); the
// assignment the agent reads (with the agent's probe, mount and secret types), log chunks and
// signals are decoded here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/probe/probe.h"
#include "agent/runtime/container.h"
#include "agent/loop/secret_files.h"
#include "agent/runtime/process_runtime.h"
#include "common/clock.h"
#include "common/status.h"
#include "model/device.h"
#include "model/node.h"
#include "wire/agent_protocol.h"

namespace abacus::agent {

// The phase of a task as the server sees it: the protocol's one phase enum (wire/task_phase.h).
// The runtime's TaskPhase (runtime/process_runtime.h) stays apart: a process the agent runs is
// never Lost (Lost is what the agent says of a task it no longer runs, or fenced).
using ReportedPhase = wire::TaskPhase;
// Returns "Running", "Stopping", "Exited" or "Lost".
inline std::string_view ReportedPhaseName(ReportedPhase phase) { return wire::TaskPhaseName(phase); }

using wire::HeartbeatRequest;
using wire::ProbeRun;
using wire::RegisterAnswer;
using wire::RegisterRequest;
using wire::TaskStatus;
using wire::TaskUsageBeat;
using wire::DeviceBeat;

// What a task's probes say, as its status carries it (TaskStatus ready, live, probe_message).
struct ProbeOutcome {
  std::optional<bool> ready;  // set when the task has a readiness probe
  std::optional<bool> live;   // set when it has a liveness probe
  std::string message;
  std::optional<ProbeRun> readiness_run{}, liveness_run{};  // set after the probe's first attempt
  bool operator==(const ProbeOutcome&) const = default;
};

// Returns the status of a runtime task record (Running, Stopping, or Exited with how it ended).
TaskStatus StatusOf(const TaskRecord& record);

// One device granted to an assigned task.
struct AssignedDevice {
  int index = 0;
  int32_t milli = Device::kWholeMilli;
  int64_t memory_bytes = 0;
  std::string uuid;
  std::string vendor;
};

enum class TaskAction { kRun, kStop };

// A probe of an assigned task (InferenceService), always against 127.0.0.1.
struct AssignedProbe {
  ProbeSpec spec;
  std::string invalid;  // not empty: the probe could not be read; every attempt fails with this
};

// One task of the node's assignment.
struct AssignedTask {
  std::string task_id;
  std::string workload_id, workload, kind, project;
  int group = 0, replica = 0, attempt = 0;
  TaskAction action = TaskAction::kRun;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::string image;
  std::vector<Mount> mounts;  // "mounts": [{"path", "mountPath", "readOnly"}] (containers)
  bool read_only_root = false;  // "readOnlyRoot": the container's root filesystem is read-only
  std::string network;        // "network": isolated | internal | internet; "": the runtime's default
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<AssignedDevice> devices;
  Duration grace = std::chrono::seconds(30);
  int stop_signal = 15;  // SIGTERM
  // What the agent does when cut off from every server for the node timeout ("fencingSignal",
  // "fencingGraceSeconds"; absent: the stop signal and grace).
  int fencing_signal = 15;
  Duration fencing_grace = std::chrono::seconds(30);
  std::optional<AssignedProbe> readiness, liveness;  // "probes": {"readiness": …, "liveness": …}
  std::string results_file;  // "resultsFile": the results file name to read first (Evaluation)
  // Secrets (secret_files.h): "secretFiles": [{"path", "data" (base64)}], written mode 0400;
  // "secretError": the server could not open a secret, the task fails to start with it.
  std::vector<SecretFile> secret_files;
  std::string secret_error;
  // "secretEnv": the variables of `env` whose value is a secret's: a container gets them by name
  // only, never on the engine's command line (BuildContainerRunCommand).
  std::set<std::string> secret_env;
};

// GET /api/v1/agent/assignments: the full set of tasks the node should run, with its version.
struct Assignment {
  int64_t version = 0;
  std::vector<AssignedTask> tasks;
};

// POST /api/v1/agent/logs: `data` appended to the task's stream at `offset`.
struct LogChunk {
  std::string node;
  std::string task_id;
  LogStream stream;
  int64_t offset = 0;
  std::string data;
};

// What the server said to a log chunk.
struct LogAck {
  bool accepted = true;
  int64_t server_size = 0;  // when not accepted (409): resend from here
};

// Returns "SIGTERM"-style names as numbers; InvalidArgument for an unknown name. Accepts
// "TERM", "SIGTERM" and "15".
Result<int> ParseSignal(std::string_view name);

// Encoders (request bodies); the shared messages' are wire/agent_protocol.h's.
using wire::DeviceToJson;
using wire::ToJson;
nlohmann::json ToJson(const LogChunk& chunk);
nlohmann::json StatusReportJson(const std::string& node, const std::vector<TaskStatus>& tasks);

// Decoders (answers). InvalidArgument naming the field that does not fit.
using wire::ParseRegisterAnswer;
Result<Assignment> ParseAssignment(const nlohmann::json& j);
// Decodes one probe of an assignment (the canonical spec JSON: exactly one of "http" {path,
// port}, "tcp" {port}, "exec" {command}, with initialDelaySeconds, periodSeconds,
// timeoutSeconds, failureThreshold, successThreshold), against 127.0.0.1, validated.
Result<ProbeSpec> ParseProbe(const nlohmann::json& j);
using wire::ParseTaskStatus;

}  // namespace abacus::agent

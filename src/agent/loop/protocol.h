// The agent side of the agent protocol (docs/agent-protocol.md): the messages `abacus agent`
// sends to `/api/v1/agent/…` and the answers it reads, with their JSON codecs.
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

namespace abacus::agent {

// The phase of a task as the server sees it.
enum class ReportedPhase { kRunning, kStopping, kExited, kLost };
// Returns "Running", "Stopping", "Exited" or "Lost".
std::string_view ReportedPhaseName(ReportedPhase phase);

// A probe's latest run of equal attempt results as the agent counted them: `count` consecutive
// successes (`ok`) or failures, capped at the larger of the probe's two thresholds (so a steady
// probe stops changing the status). The server's controller applies the thresholds to it.
struct ProbeRun {
  bool ok = false;
  int32_t count = 0;
  bool operator==(const ProbeRun&) const = default;
};

// What the agent tells the server about one task.
struct TaskStatus {
  std::string task_id;
  ReportedPhase phase = ReportedPhase::kRunning;
  int pid = 0;
  std::optional<Time> started_at;
  std::optional<Time> finished_at;
  std::optional<int> exit_code;  // set when it exited (not by a signal)
  int signal = 0;
  bool oom_killed = false;
  bool stopped = false;
  std::string message;
  std::vector<std::string> warnings;
  // Probes (InferenceService): set while the task runs or stops and has that probe. `ready`
  // starts false and is false once the task stops; `live` starts true.
  std::optional<bool> ready;
  std::optional<bool> live;
  std::string probe_message;  // the last failed attempt ("readiness: GET …: HTTP 503"); "" once all pass
  std::optional<ProbeRun> readiness_run{}, liveness_run{};  // with ready/live, once a probe made an attempt
  // Exited only: what the task wrote to its results file (results.h), or why it was not taken.
  std::optional<std::string> results;
  std::string results_error;
  std::string lost_reason = "";  // Lost only: "NodeLost" when the agent fenced the task (cut off)
  // InferenceService replica: "host:port" it listens on (the agent's advertise host and the
  // port it allocated, ABACUS_PORT); "" for other tasks.
  std::string address = "";
  bool operator==(const TaskStatus&) const = default;

  bool final() const { return phase == ReportedPhase::kExited || phase == ReportedPhase::kLost; }
};

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

// POST /api/v1/agent/register.
struct RegisterRequest {
  std::string name;
  std::string cluster;
  std::string pool;  // empty: the server's default
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  bool simulated = false;  // every device is simulated (--fake-devices only)
  std::vector<Device> devices;
  std::map<std::string, int64_t> extended;  // extended resources, discovered or declared ("rdma/hca": 4)
  std::string agent_version;
  std::vector<TaskStatus> tasks;  // what this agent still knows of (orphans as Lost)
  std::string credential;         // its node credential when it registered before (proves it is that node)
};

struct RegisterAnswer {
  std::string node;
  std::string node_token;
  int heartbeat_seconds = 5;
  int node_timeout_seconds = 30;
};

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

// One device line of a heartbeat.
struct DeviceBeat {
  int index = 0;
  std::string uuid;
  DeviceHealth health = DeviceHealth::kHealthy;
  std::string health_reason;          // why Unhealthy, when known (an injected fault's reason)
  std::optional<double> utilization;  // 0..1
  std::optional<int64_t> memory_used_bytes;
};

struct TaskUsageBeat {
  std::string task_id;
  double cpu_seconds = 0;
  int64_t memory_bytes = 0;
};

// POST /api/v1/agent/heartbeat.
struct HeartbeatRequest {
  std::string node;
  std::vector<DeviceBeat> devices;
  std::optional<std::vector<Device>> inventory;  // only when re-discovery changed the devices
  std::vector<TaskStatus> tasks;
  std::vector<TaskUsageBeat> usage;
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

// Encoders (request bodies).
nlohmann::json DeviceToJson(const Device& device);
nlohmann::json ToJson(const TaskStatus& status);
nlohmann::json ToJson(const RegisterRequest& request);
nlohmann::json ToJson(const HeartbeatRequest& request);
nlohmann::json ToJson(const LogChunk& chunk);
nlohmann::json StatusReportJson(const std::string& node, const std::vector<TaskStatus>& tasks);

// Decoders (answers). InvalidArgument naming the field that does not fit.
Result<RegisterAnswer> ParseRegisterAnswer(const nlohmann::json& j);
Result<Assignment> ParseAssignment(const nlohmann::json& j);
// Decodes one probe of an assignment (the canonical spec JSON: exactly one of "http" {path,
// port}, "tcp" {port}, "exec" {command}, with initialDelaySeconds, periodSeconds,
// timeoutSeconds, failureThreshold, successThreshold), against 127.0.0.1, validated.
Result<ProbeSpec> ParseProbe(const nlohmann::json& j);
// Decodes a TaskStatus (the server side and tests read them back).
Result<TaskStatus> ParseTaskStatus(const nlohmann::json& j);

}  // namespace abacus::agent

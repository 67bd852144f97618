// The agent protocol (docs/agent-protocol.md): the messages an agent sends to `/api/v1/agent/…`
// and the answers it reads, with their one JSON codec. Both ends use it: the agent encodes its
// requests and decodes the answers, the server decodes the requests and encodes the answers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/status.h"
#include "model/device.h"
#include "model/node.h"
#include "wire/task_phase.h"

namespace abacus::wire {

// A probe's latest run of equal attempt results as the agent counted them: `count` consecutive
// successes (`ok`) or failures, capped at the larger of the probe's two thresholds (so a steady
// probe stops changing the status). The server's controller applies the thresholds to it.
struct ProbeRun {
  bool ok = false;
  int32_t count = 0;
  bool operator==(const ProbeRun&) const = default;
};

// What the agent tells the server about one task ("TaskStatus" in docs/agent-protocol.md).
struct TaskStatus {
  std::string task_id;
  TaskPhase phase = TaskPhase::kRunning;
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

  bool final() const { return IsFinal(phase); }
};

// POST /api/v1/agent/register. The node's description (devices, labels, taints, capacity) is
// read on the server by the node record codec (server/records.h NodeRecordFromJson), the one
// reader of device JSON; this module encodes it and decodes the registration's own fields.
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

// The answer to a registration.
struct RegisterAnswer {
  std::string node;
  std::string node_token;
  int heartbeat_seconds = 5;
  int node_timeout_seconds = 30;
};

// One device line of a heartbeat.
struct DeviceBeat {
  int index = 0;
  std::string uuid;
  std::optional<DeviceHealth> health = DeviceHealth::kHealthy;  // nullopt: not reported
  std::string health_reason;          // why Unhealthy, when known (an injected fault's reason)
  std::optional<double> utilization;  // 0..1
  std::optional<int64_t> memory_used_bytes;
};

struct TaskUsageBeat {
  std::string task_id;
  double cpu_seconds = 0;
  int64_t memory_bytes = 0;
};

// POST /api/v1/agent/heartbeat. `inventory` is encoded here and read on the server by the node
// record codec (see RegisterRequest).
struct HeartbeatRequest {
  std::string node;
  std::vector<DeviceBeat> devices;
  std::optional<std::vector<Device>> inventory;  // only when re-discovery changed the devices
  std::vector<TaskStatus> tasks;
  std::vector<TaskUsageBeat> usage;
};

// POST /api/v1/agent/status.
struct StatusReport {
  std::string node;
  std::vector<TaskStatus> tasks;
  // The agent is shutting down (SIGTERM): the server takes the node out of placement before it
  // reads the tasks' reports, so what it stops is not placed back on it.
  bool leaving = false;
};

// Encoders.
nlohmann::json DeviceToJson(const Device& device);
nlohmann::json ToJson(const TaskStatus& status);
nlohmann::json ToJson(const RegisterRequest& request);
nlohmann::json ToJson(const RegisterAnswer& answer);
nlohmann::json ToJson(const HeartbeatRequest& request);
nlohmann::json ToJson(const StatusReport& report);

// Decoders. InvalidArgument naming the field that does not fit.
// A task status: needs a string "taskId" and a known "phase"; optional fields of the wrong type
// are ignored (probe fields, times, results, address), as the server always read them.
Result<TaskStatus> ParseTaskStatus(const nlohmann::json& j);
// A status report body: an object whose optional "tasks" is an array of task statuses.
Result<StatusReport> ParseStatusReport(const nlohmann::json& j);
// A heartbeat body: "tasks" as in a status report; device lines without an integer "index" are
// skipped; "inventory" is left to the node record codec (not decoded here).
Result<HeartbeatRequest> ParseHeartbeatRequest(const nlohmann::json& j);
// The registration's own fields: "agentVersion", "credential" (a string when present) and
// "tasks", each read leniently (no taskId: "", a phase not known: Lost, the agent no longer runs
// it); the node's description is left to the node record codec (not decoded here).
Result<RegisterRequest> ParseRegisterRequest(const nlohmann::json& j);
Result<RegisterAnswer> ParseRegisterAnswer(const nlohmann::json& j);

}  // namespace abacus::wire

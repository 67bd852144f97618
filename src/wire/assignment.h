// GET /api/v1/agent/assignments (docs/agent-protocol.md): the full set of tasks a node should
// run, as the server builds it (server/desired_tasks.h) and the agent reads it
// (agent/loop/protocol.h ParseAssignment turns it into the agent's own types: probe specs,
// signal numbers, decoded secret files). One codec for both ends.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace abacus::wire {

// Run it (start it when it does not run) or stop it.
enum class TaskAction : uint8_t { kRun, kStop };

// What the server knows of a granted device from its node's inventory.
struct GrantedDeviceInfo {
  std::string uuid;
  std::string vendor;
  std::string flavor;
  int64_t memory_bytes = 0;  // "deviceMemoryBytes": the whole device's memory
  bool operator==(const GrantedDeviceInfo&) const = default;
};

// One device granted to an assigned task.
struct GrantedDevice {
  int index = 0;
  int32_t milli = 1000;
  int64_t memory_bytes = 0;  // device memory granted
  std::optional<GrantedDeviceInfo> info;  // absent when the node no longer lists the device
  bool operator==(const GrantedDevice&) const = default;
};

// A data mount of a container task.
struct MountSpec {
  std::string path;        // on the host
  std::string mount_path;  // in the container ("" in a body: the host path)
  bool read_only = true;
  bool operator==(const MountSpec&) const = default;
};

// A secret file the server opened for the task: "data" is base64.
struct SecretFileData {
  std::string path;
  std::string data_base64;
  bool operator==(const SecretFileData&) const = default;
};

// One task of a node's assignment.
struct TaskAssignment {
  std::string task_id;
  std::string workload_id, workload, kind, project;
  int32_t group = 0, replica = 0, attempt = 0, run = 0;
  TaskAction action = TaskAction::kRun;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::string image;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<GrantedDevice> devices;
  int64_t grace_seconds = 30;
  std::string stop_signal = "SIGTERM";
  // What the agent does when cut off from every server for the node timeout (absent: the stop
  // signal and grace).
  std::optional<std::string> fencing_signal;
  std::optional<int64_t> fencing_grace_seconds;
  // InferenceService tasks: the canonical probes JSON of the spec ({"readiness": …,
  // "liveness": …}, {} when none); the agent decodes each probe itself (an unreadable one fails
  // its attempts, not the assignment).
  std::optional<nlohmann::json> probes;
  std::vector<MountSpec> mounts;
  bool read_only_root = false;
  std::string network;       // isolated | internal | internet; "": the runtime's default
  std::string results_file;  // Evaluation: the results file name to read first
  // Filled by the server's secret vault just before the answer leaves (server/secrets.h).
  std::vector<SecretFileData> secret_files;
  std::set<std::string> secret_env;  // the variables of `env` whose value is a secret's
  std::string secret_error;          // a secret could not be opened: the task fails to start with it
  bool operator==(const TaskAssignment&) const = default;
};

// The node's set with its version.
struct Assignment {
  int64_t version = 0;
  std::vector<TaskAssignment> tasks;
};

// Returns "run" or "stop".
std::string_view TaskActionName(TaskAction action);

// Encoders: the fields of docs/agent-protocol.md; optional ones only when set.
nlohmann::json ToJson(const TaskAssignment& task);
nlohmann::json ToJson(const Assignment& assignment);

// Decoders. InvalidArgument naming the field that does not fit ("task T: unknown action 'x'").
Result<TaskAssignment> ParseTaskAssignment(const nlohmann::json& j);
Result<Assignment> ParseAssignment(const nlohmann::json& j);

}  // namespace abacus::wire

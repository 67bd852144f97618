// AssignmentBoard: what each agent node should be running, for the long poll of
// GET /api/v1/agent/assignments (docs/agent-protocol.md). The loop thread publishes a workload's
// tasks after its decisions are committed; HTTP threads wait on one node's set. Versions start at
// the server's start time in microseconds, so a version from a previous server life never matches.
// The board holds each task typed (wire::TaskAssignment, with its secret references beside it);
// the long poll's route encodes the answer (agent_api.cc). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "wire/assignment.h"
#include "workload/workload.h"

namespace abacus::server {

// The secrets a task's values are opened from when its answer leaves (SecretVault::FillAssignment):
// the workload's project and the references of its spec. Never sent.
struct SecretReferences {
  std::string project;
  std::vector<SecretEnvVar> env;
  std::vector<std::string> env_from;
  std::vector<SecretMount> mounts;
  bool operator==(const SecretReferences&) const = default;
};

// One task on the board: what the agent is sent, and the secret references its values are
// opened from (none: the workload names no secret).
struct PublishedTask {
  wire::TaskAssignment task;
  std::optional<SecretReferences> secrets;
  bool operator==(const PublishedTask&) const = default;
};

// node → task id → task: what DesiredTasks builds for one workload.
using NodeTasks = std::map<std::string, std::map<std::string, PublishedTask>>;

class AssignmentBoard {
 public:
  explicit AssignmentBoard(uint64_t first_version);

  // Replaces every task of `workload_id` by `tasks`; bumps the version of each node whose set
  // changed and wakes its pollers.
  void Publish(const std::string& workload_id, NodeTasks tasks);
  // Forgets a node's set (the node was deleted); its pollers get an empty set.
  void DropNode(const std::string& node);

  // A node's set: its tasks by task id, shared with the board (never changed once published).
  struct Answer {
    uint64_t version = 0;
    std::vector<std::shared_ptr<const PublishedTask>> tasks;
    bool shut_down = false;  // the board is shut down: later waits return at once
  };
  // Returns `node`'s set at once when its version differs from `after`; otherwise waits up to
  // `timeout` for a change (or WakeAll, or Shutdown) and returns the set then.
  Answer Wait(const std::string& node, uint64_t after, std::chrono::milliseconds timeout);
  // Returns the node's set now.
  Answer Get(const std::string& node);
  // Wakes every poller waiting now, each with its node's set as it is (a node credential was
  // reset: the long poll asks whether its caller still stands before it answers).
  void WakeAll();
  // Wakes every poller; later waits return at once.
  void Shutdown();

 private:
  struct NodeSet {
    uint64_t version = 0;
    std::map<std::string, std::shared_ptr<const PublishedTask>> tasks;  // by task id
    std::condition_variable changed;
  };
  NodeSet& NodeLocked(const std::string& node) REQUIRES(mu_);
  Answer AnswerLocked(const NodeSet& set) const REQUIRES(mu_);

  Mutex mu_;
  uint64_t wakes_ GUARDED_BY(mu_) = 0;  // WakeAll calls so far
  uint64_t next_version_;
  std::map<std::string, std::unique_ptr<NodeSet>> nodes_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::set<std::string>> nodes_of_ GUARDED_BY(mu_);  // workload → nodes
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace abacus::server

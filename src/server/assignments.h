// AssignmentBoard: what each agent node should be running, for the long poll of
// GET /api/v1/agent/assignments (docs/agent-protocol.md). The loop thread publishes a workload's
// tasks after its decisions are committed; HTTP threads wait on one node's set. Versions start at
// the server's start time in microseconds, so a version from a previous server life never matches.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>

#include "common/mutex.h"

namespace abacus::server {

class AssignmentBoard {
 public:
  explicit AssignmentBoard(uint64_t first_version);

  // Replaces every task of `workload_id` by `tasks` (node → task id → assignment JSON); bumps the
  // version of each node whose set changed and wakes its pollers.
  void Publish(const std::string& workload_id, const std::map<std::string, std::map<std::string, nlohmann::json>>& tasks);
  // Forgets a node's set (the node was deleted); its pollers get an empty set.
  void DropNode(const std::string& node);

  struct Answer {
    uint64_t version = 0;
    nlohmann::json tasks = nlohmann::json::array();
  };
  // Returns `node`'s set at once when its version differs from `after`; otherwise waits up to
  // `timeout` for a change (or Shutdown) and returns the set then.
  Answer Wait(const std::string& node, uint64_t after, std::chrono::milliseconds timeout);
  // Returns the node's set now.
  Answer Get(const std::string& node);
  // Wakes every poller; later waits return at once.
  void Shutdown();

 private:
  struct NodeSet {
    uint64_t version = 0;
    std::map<std::string, nlohmann::json> tasks;  // by task id
    std::condition_variable changed;
  };
  NodeSet& NodeLocked(const std::string& node) REQUIRES(mu_);
  Answer AnswerLocked(const NodeSet& set) const REQUIRES(mu_);

  Mutex mu_;
  uint64_t next_version_;
  std::map<std::string, std::unique_ptr<NodeSet>> nodes_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::set<std::string>> nodes_of_ GUARDED_BY(mu_);  // workload → nodes
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace abacus::server

#include "server/assignments.h"

#include "common/mutex.h"

namespace abacus::server {

using nlohmann::json;

AssignmentBoard::AssignmentBoard(uint64_t first_version) : next_version_(first_version) {}

AssignmentBoard::NodeSet& AssignmentBoard::NodeLocked(const std::string& node) {
  auto& slot = nodes_[node];
  if (!slot) {
    slot = std::make_unique<NodeSet>();
    slot->version = next_version_++;
  }
  return *slot;
}

void AssignmentBoard::Publish(const std::string& workload_id,
                              const std::map<std::string, std::map<std::string, json>>& tasks) {
  MutexLock lock(mu_);
  std::set<std::string>& had = nodes_of_[workload_id];
  std::set<std::string> touched = had;
  for (const auto& [node, _] : tasks) touched.insert(node);
  const std::string prefix = workload_id + ".";
  for (const std::string& node : touched) {
    NodeSet& set = NodeLocked(node);
    std::map<std::string, json> next;
    for (auto& [id, t] : set.tasks) {
      if (id.compare(0, prefix.size(), prefix) != 0) next.emplace(id, t);
    }
    if (auto it = tasks.find(node); it != tasks.end()) {
      for (const auto& [id, t] : it->second) next[id] = t;
    }
    if (next != set.tasks) {
      set.tasks = std::move(next);
      set.version = next_version_++;
      set.changed.notify_all();
    }
  }
  had.clear();
  for (const auto& [node, list] : tasks) {
    if (!list.empty()) had.insert(node);
  }
  if (had.empty()) nodes_of_.erase(workload_id);
}

void AssignmentBoard::DropNode(const std::string& node) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  it->second->tasks.clear();
  it->second->version = next_version_++;
  it->second->changed.notify_all();
}

AssignmentBoard::Answer AssignmentBoard::AnswerLocked(const NodeSet& set) const {
  Answer a;
  a.version = set.version;
  for (const auto& [id, t] : set.tasks) a.tasks.push_back(t);
  return a;
}

AssignmentBoard::Answer AssignmentBoard::Wait(const std::string& node, uint64_t after,
                                              std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  NodeSet& set = NodeLocked(node);
  lock.WaitFor(set.changed, timeout, [&]() REQUIRES(mu_) { return shutdown_ || set.version != after; });
  return AnswerLocked(set);
}

AssignmentBoard::Answer AssignmentBoard::Get(const std::string& node) {
  MutexLock lock(mu_);
  return AnswerLocked(NodeLocked(node));
}

void AssignmentBoard::Shutdown() {
  MutexLock lock(mu_);
  shutdown_ = true;
  for (auto& [_, set] : nodes_) set->changed.notify_all();
}

}  // namespace abacus::server

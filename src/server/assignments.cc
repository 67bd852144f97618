#include "server/assignments.h"

#include <algorithm>

#include "common/blocking_region.h"
#include "common/mutex.h"

namespace abacus::server {
namespace {

using TaskSet = std::map<std::string, std::shared_ptr<const PublishedTask>>;

// True when `a` and `b` hold the same tasks (by value).
bool SameTasks(const TaskSet& a, const TaskSet& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && (x.second == y.second || *x.second == *y.second);
  });
}

}  // namespace

AssignmentBoard::AssignmentBoard(uint64_t first_version) : next_version_(first_version) {}

AssignmentBoard::NodeSet& AssignmentBoard::NodeLocked(const std::string& node) {
  auto& slot = nodes_[node];
  if (!slot) {
    slot = std::make_unique<NodeSet>();
    slot->version = next_version_++;
  }
  return *slot;
}

void AssignmentBoard::Publish(const std::string& workload_id, NodeTasks tasks) {
  // Shared before the lock: a node's unchanged tasks are then kept by reference.
  std::map<std::string, TaskSet> shared;
  for (auto& [node, list] : tasks) {
    TaskSet& set = shared[node];
    for (auto& [id, t] : list) set.emplace(id, std::make_shared<const PublishedTask>(std::move(t)));
  }
  MutexLock lock(mu_);
  std::set<std::string>& had = nodes_of_[workload_id];
  std::set<std::string> touched = had;
  for (const auto& [node, _] : shared) touched.insert(node);
  const std::string prefix = workload_id + ".";
  for (const std::string& node : touched) {
    NodeSet& set = NodeLocked(node);
    TaskSet next;
    for (auto& [id, t] : set.tasks) {
      if (id.compare(0, prefix.size(), prefix) != 0) next.emplace(id, t);
    }
    if (auto it = shared.find(node); it != shared.end()) {
      for (const auto& [id, t] : it->second) next[id] = t;
    }
    if (!SameTasks(next, set.tasks)) {
      set.tasks = std::move(next);
      set.version = next_version_++;
      set.changed.notify_all();
    }
  }
  had.clear();
  for (const auto& [node, list] : shared) {
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
  a.shut_down = shutdown_;
  a.tasks.reserve(set.tasks.size());
  for (const auto& [id, t] : set.tasks) a.tasks.push_back(t);
  return a;
}

AssignmentBoard::Answer AssignmentBoard::Wait(const std::string& node, uint64_t after,
                                              std::chrono::milliseconds timeout) {
  BlockingRegion waiting;  // a long poll: up to `timeout`
  MutexLock lock(mu_);
  NodeSet& set = NodeLocked(node);
  const uint64_t wakes = wakes_;
  lock.WaitFor(set.changed, timeout,
               [&]() REQUIRES(mu_) { return shutdown_ || set.version != after || wakes_ != wakes; });
  return AnswerLocked(set);
}

AssignmentBoard::Answer AssignmentBoard::Get(const std::string& node) {
  MutexLock lock(mu_);
  return AnswerLocked(NodeLocked(node));
}

void AssignmentBoard::WakeAll() {
  MutexLock lock(mu_);
  ++wakes_;
  for (auto& [_, set] : nodes_) set->changed.notify_all();
}

void AssignmentBoard::Shutdown() {
  MutexLock lock(mu_);
  shutdown_ = true;
  for (auto& [_, set] : nodes_) set->changed.notify_all();
}

}  // namespace abacus::server

// Node: one machine in the ledger — where it is (cluster, pool), what it has (CPU, memory,
// devices), how it may be used (labels, taints, state) and when it last spoke.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "model/device.h"
#include "model/resources.h"

namespace abacus {

// Drained: an operator's drain finished (nothing of it runs there any more); like Cordoned and
// Draining it takes no new work (server/fleet.h).
enum class NodeState : uint8_t { kReady, kNotReady, kCordoned, kDraining, kDrained };
// Returns "Ready", "NotReady", "Cordoned", "Draining" or "Drained".
std::string_view NodeStateName(NodeState s);
// Parses a node state name.
Result<NodeState> ParseNodeState(std::string_view text);

enum class TaintEffect : uint8_t { kNoSchedule, kPreferNoSchedule, kNoExecute };
std::string_view TaintEffectName(TaintEffect e);
Result<TaintEffect> ParseTaintEffect(std::string_view text);

// A mark that keeps work off a node unless the work tolerates it.
struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Taint&) const = default;
};

// A workload's permission to land on tainted nodes: Exists matches any value.
struct Toleration {
  std::string key;  // empty with Exists: tolerates every taint
  enum class Op : uint8_t { kEqual, kExists } op = Op::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // empty: any effect
  // Returns true when this toleration covers `taint`.
  bool Tolerates(const Taint& taint) const;
  bool operator==(const Toleration&) const = default;
};

// Returns true when every NoSchedule/NoExecute taint of a node is covered by `tolerations`.
bool ToleratesAll(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations);

// A group of nodes in one failure/network domain.
struct Cluster {
  std::string name;
  std::string location;
  std::string network_domain;
};

struct Node {
  std::string name;
  std::string cluster = "default";
  std::string pool = "default";
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  int64_t cpu_milli = 0;      // allocatable CPU
  int64_t memory_bytes = 0;   // allocatable memory
  std::vector<Device> devices;
  // Allocatable extended resources by name ("rdma/hca" → 4, "ephemeral-storage" → bytes).
  std::map<std::string, int64_t> extended;
  NodeState state = NodeState::kReady;
  Time last_heartbeat{};
  // CPU and memory held by tasks, by task id.
  std::map<std::string, std::pair<int64_t, int64_t>> cpu_memory_allocations;

  // Returns total capacity: cpu, memory, per flavor device milli and device memory (healthy
  // devices only), and the extended resources.
  ResourceVector Capacity() const;
  // Returns what is held by tasks.
  ResourceVector Allocated() const;
  // Capacity() - Allocated().
  ResourceVector Free() const { return Capacity() - Allocated(); }
  int64_t FreeCpuMilli() const;
  int64_t FreeMemory() const;
  // Returns true when the scheduler may place new work here.
  bool IsSchedulable() const { return state == NodeState::kReady; }
  // Returns the device with `index`, or nullptr.
  Device* FindDevice(int index);
  const Device* FindDevice(int index) const;
};

}  // namespace abacus

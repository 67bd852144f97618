// PoolConfig and FlavorConfig: how a pool of nodes may be used, and a flavor's fair-share weight.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/flavor.h"

namespace abacus {

enum class PoolPurpose : uint8_t { kGeneral, kTraining, kInference, kExperiment, kEvaluation, kBatch };
// Returns "general", "training", "inference", "experiment", "evaluation" or "batch".
std::string_view PoolPurposeName(PoolPurpose p);
Result<PoolPurpose> ParsePoolPurpose(std::string_view text);

// "kind: Pool": a named group of nodes (nodes carry the pool name) in one cluster.
struct PoolConfig {
  std::string name;
  std::string cluster = "default";
  PoolPurpose purpose = PoolPurpose::kGeneral;
  std::vector<std::string> tenants;  // tenants allowed; empty = all
  std::string description;
  bool operator==(const PoolConfig&) const = default;
};

// "kind: Cluster": a group of nodes in one place (agents register into it with --cluster). Its
// labels name the data it holds locally (keys under data.abacus.io/): placement across clusters
// prefers the cluster whose labels match a workload's data.abacus.io/ labels.
struct ClusterConfig {
  std::string name;
  std::string location;        // e.g. "cn-hangzhou-b"
  std::string network_domain;  // nodes of one domain reach each other at full speed
  std::map<std::string, std::string> labels;
  std::string description;
  bool operator==(const ClusterConfig&) const = default;
};

// "kind: Flavor": per-flavor settings. weight scales a flavor in weighted dominant share so that
// an H100 counts more than a T4.
struct FlavorConfig {
  Flavor flavor;
  int64_t weight_milli = 1000;  // exact thousandths; default 1
  std::string description;
  bool operator==(const FlavorConfig&) const = default;
};

}  // namespace abacus

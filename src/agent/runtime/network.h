// Network classes of tasks (AdmissionPolicy spec.network, docs/governance.md): how the runtime
// connects a task. A container gets `--network none` (isolated), the operator-made internal
// network kInternalNetworkName (internal), or the engine's default (internet, or no class);
// every task, process or container, finds its class in ABACUS_NETWORK_CLASS. A plain process
// is told its class but not confined (that needs an image).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::agent {

inline constexpr char kNetworkClassVariable[] = "ABACUS_NETWORK_CLASS";
// The container network internal tasks join: made by the operator with no route outside, e.g.
// `docker network create --internal abacus-internal` (docs/operations.md).
inline constexpr char kInternalNetworkName[] = "abacus-internal";

// OK for "", "isolated", "internal" and "internet"; InvalidArgument otherwise, so that a task
// of an unknown class is refused rather than given more network than its tenant may have.
Status ValidateNetworkClass(std::string_view network_class);

// Returns the `--network` value of a container of `network_class`: "none", kInternalNetworkName,
// or "" (no flag: the engine's default) for "internet" and "".
Result<std::string> ContainerNetworkFor(std::string_view network_class);

// Puts ABACUS_NETWORK_CLASS=`network_class` into the environment `env` of a task (nothing for "");
// InvalidArgument for an unknown class.
Status AddNetworkClass(std::string_view network_class, std::map<std::string, std::string>& env);

}  // namespace abacus::agent

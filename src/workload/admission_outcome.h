// What the server's admission policies decided for a workload (server/governance, CheckSubmit):
// the network class its tasks get and the pools it may be placed in. A typed field of the
// workload, read by the scheduler's snapshot and the agent's desired tasks. Users see it as two
// labels, which the server writes beside the field and which are read back into it only where a
// workload is decoded (the store, the wire): one place, here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus {

// Network a workload's tasks get from the runtime, from most to least restricted.
enum class NetworkClass : uint8_t {
  kIsolated,  // no network but loopback
  kInternal,  // the cluster's networks only
  kInternet,  // unrestricted egress
};
// Returns "isolated", "internal" or "internet".
std::string_view NetworkClassName(NetworkClass c);
// Parses a network class name; InvalidArgument listing the three otherwise.
Result<NetworkClass> ParseNetworkClass(std::string_view text);

// The labels that show a workload's admission outcome (docs/governance.md).
inline constexpr std::string_view kNetworkLabel = "abacus.io/network";
inline constexpr std::string_view kAllowedPoolsLabel = "abacus.io/allowed-pools";

struct AdmissionOutcome {
  std::optional<NetworkClass> network;  // nullopt: the runtime's default
  std::vector<std::string> pools;       // pools it may be placed in; empty: any
  bool operator==(const AdmissionOutcome&) const = default;
};

// The outcome the labels show: kAllowedPoolsLabel split at commas (empty parts dropped) and
// kNetworkLabel when it names a class (any other value: nullopt, the runtime's default).
AdmissionOutcome AdmissionFromLabels(const std::map<std::string, std::string>& labels);
// Sets `outcome`'s labels in `labels` (removing both first), as AdmissionFromLabels reads them.
void WriteAdmissionLabels(const AdmissionOutcome& outcome, std::map<std::string, std::string>& labels);

}  // namespace abacus

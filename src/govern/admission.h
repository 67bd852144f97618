// Admission policies: the organisational rules a workload must pass before it is queued
// (AdmissionPolicy in workload/governance_spec.h; reference in docs/governance.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "workload/governance_spec.h"
#include "workload/workload.h"

namespace abacus::govern {

// An image reference split into its parts: "registry.local:5000/nlp/llama:1.4@sha256:…".
struct ImageRef {
  std::string registry;    // "registry.local:5000"; "docker.io" when the reference names none
  std::string repository;  // "nlp/llama"
  std::string tag;         // "1.4"; may be empty
  std::string digest;      // "sha256:<64 hex>"; empty when not pinned
};
// Parses an image reference; InvalidArgument when it is empty or malformed (a digest that is
// not sha256:<64 lower-case hex> included).
Result<ImageRef> ParseImageRef(std::string_view image);

// What admission hands on with an admitted workload.
struct Admission {
  std::optional<NetworkClass> network;   // most restrictive of the policies; nullopt: runtime default
  std::vector<std::string> pools;        // pools it may be placed in; empty: any
  std::vector<std::string> policies;     // names of the policies that applied, in order
};

// The footprint the maxResources rule compares: every task the workload may run at once
// (InferenceService at max(replicas, maxReplicas), BatchJob at parallelism), summed.
struct WorkloadFootprint {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t device_milli = 0;  // whole devices × 1000, shares as milli-devices
};
WorkloadFootprint FootprintOf(const Workload& w);

// Checks `w` (of tenant `tenant`) against every policy that applies to the tenant, in order.
// Returns the Admission, or PermissionDenied naming the first rule that fails and why:
//   "policy nlp-default: image registry docker.io is not allowed for tenant nlp (allowed:
//    registry.local)".
// Rules: images.allowedRegistries, images.requireImage, images.requireDigestFor (by the
// workload's priority class), mounts (each mount under an allowed prefix; read-write needs a
// read-write rule), maxResources (cpu, memory, devices), pools (a reservation pool or
// nodeSelector abacus.io/pool outside them is refused; the pools of all policies must
// intersect), secrets (each Secret the spec references matches secrets.allowed, for the work of
// secrets.queues or of every queue). network is not a check: the most restrictive class is returned.
Result<Admission> EvaluateAdmission(const Workload& w, std::string_view tenant,
                                    const std::vector<AdmissionPolicy>& policies);

// The node label that names a node's pool; a workload may select a pool through it.
inline constexpr std::string_view kPoolLabel = "abacus.io/pool";

}  // namespace abacus::govern

// The two governance kinds a user may write next to tenants and queues: AdmissionPolicy (what
// a tenant's workloads may use) and User (who may do what). Plain data; the YAML/JSON forms are
// in governance_codec.h and docs/governance.md; src/govern/ enforces them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "model/quantity.h"
#include "tenancy/tenancy_config.h"
#include "workload/admission_outcome.h"

namespace abacus {

inline constexpr std::string_view kAdmissionPolicyKind = "AdmissionPolicy";
inline constexpr std::string_view kUserKind = "User";

// One data path prefix a tenant may mount, and how.
struct MountRule {
  std::string path_prefix;  // normalized absolute path (see CheckMountPath)
  bool read_write = false;  // false: read-only mounts only
  bool operator==(const MountRule&) const = default;
};

// Per-workload ceiling, summed over every task the workload may run at once (an
// InferenceService counted at maxReplicas, a BatchJob at its parallelism).
struct ResourceCeiling {
  std::optional<Quantity> cpu;
  std::optional<Quantity> memory;
  std::optional<Quantity> devices;  // accelerator devices; fractional shares count as fractions
  bool operator==(const ResourceCeiling&) const = default;
};

// Rules for the workloads of some tenants. Every section is optional: one left out does not
// restrict; when several policies apply to a tenant, a workload must pass all of them.
struct AdmissionPolicy {
  std::string name;
  std::vector<std::string> tenants;  // tenants it applies to; empty: every tenant

  // Image registries allowed ("registry.local", "registry.local:5000"); nullopt: any.
  std::optional<std::vector<std::string>> allowed_registries;
  bool require_image = false;  // reject workloads that run a plain process (no image)
  // Priority classes whose workloads must pin their image by digest (image@sha256:<64 hex>).
  std::vector<std::string> require_digest_for;
  std::optional<std::vector<MountRule>> mounts;  // nullopt: any mount; empty: none
  std::optional<NetworkClass> network;           // passed to the runtime
  ResourceCeiling max_resources;
  std::vector<std::string> pools;  // node pools the tenant's workloads may use; empty: any
  // Secrets the work may reference (spec.secrets.allowed: names, or "prefix*"); nullopt: any.
  std::optional<std::vector<std::string>> allowed_secrets;
  // Queues whose work allowed_secrets covers (spec.secrets.queues); empty: every queue.
  std::vector<std::string> secret_queues;
  // Priority classes the tenant's work may name (spec.priorityClasses); nullopt: any. Keeps
  // members off non-preemptible classes that would take capacity from others (MakeRoom).
  std::optional<std::vector<std::string>> allowed_priority_classes;

  // True when the policy applies to `tenant`.
  bool AppliesTo(std::string_view tenant) const;
  bool operator==(const AdmissionPolicy&) const = default;
};

// What a principal may do; src/govern/authorize.h holds the permission table.
enum class Role : uint8_t {
  kAdmin,        // everything
  kTenantAdmin,  // everything inside one tenant, including its quotas and policies
  kMember,       // work in one project: submit, cancel, scale; read its tenant's config
  kViewer,       // read-only: everywhere, or inside one tenant or project
  kAgent,        // a node agent: register, heartbeat, report its own tasks
};
inline constexpr Role kAllRoles[] = {Role::kAdmin, Role::kTenantAdmin, Role::kMember, Role::kViewer,
                                     Role::kAgent};
// Returns "admin", "tenant-admin", "member", "viewer" or "agent".
std::string_view RoleName(Role r);
// Parses a role name; InvalidArgument listing the five otherwise.
Result<Role> ParseRole(std::string_view text);

// A role and where it holds. admin: no scope. tenant-admin: tenant. member: project
// ("tenant/project"). viewer: nothing (everywhere), tenant or project. agent: node.
struct RoleBinding {
  Role role = Role::kViewer;
  std::string tenant;
  std::string project;  // "tenant/project"
  std::string node;     // agent only
  // Returns "admin", "tenant-admin of nlp", "member of nlp/llm", "agent of node gpu-01".
  std::string ToString() const;
  // Returns OK when the scope fields suit the role; InvalidArgument saying why otherwise.
  Status Validate() const;
  bool operator==(const RoleBinding&) const = default;
};

// A person (or service) that holds API tokens.
struct UserSpec {
  std::string name;
  std::string display_name;
  std::string email;
  std::vector<RoleBinding> roles;
  bool disabled = false;  // a disabled user's tokens stop authenticating
  bool operator==(const UserSpec&) const = default;
};

using GovernanceObject = std::variant<AdmissionPolicy, UserSpec>;

// One decoded governance document and where it came from.
struct GovernanceDocument {
  GovernanceObject object;
  SourceLocation source;
  // Returns "AdmissionPolicy" or "User".
  std::string_view kind() const;
  const std::string& name() const;
};

}  // namespace abacus

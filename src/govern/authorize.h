// Authorization: which principal may do which action on which resource, decided by one
// declarative permission table (PermissionTable(); docs/governance.md prints it as a matrix).
//
// Every route of the server maps its request to an (Action, Resource) pair and calls
// Authorize; list routes filter their results with FilterVisible, so that a member never sees
// another project's workloads in a list either.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "govern/identity.h"
#include "workload/workload.h"

namespace abacus::govern {

enum class Action : uint8_t {
  kRead,            // get one object
  kList,            // see an object in a list
  kCreate,          // submit a workload
  kUpdate,          // change a workload
  kDelete,          // remove a workload
  kCancel,          // stop a workload
  kScale,           // change a service's replicas
  kApplyConfig,     // create, change or delete tenancy config (projects, queues, tenants, pools…)
  kQuotaChange,     // change a queue's quota, or decide a workload's temporary quota
  kPolicyChange,    // create, change or delete an AdmissionPolicy
  kAuditRead,       // read audit entries about the resource
  kUserManage,      // create, change or delete users
  kTokenManage,     // issue, list or revoke API tokens
  kAgentRegister,   // an agent registers its node
  kAgentHeartbeat,  // an agent heartbeats and polls for assignments
  kAgentReport,     // an agent reports task status and utilization
  kHold,            // hold/release, suspend/resume a workload (server/fleet.h)
  kRequeue,         // send a running workload back to wait, checkpoint signal first
  kPriorityChange,  // set a workload's priority (a value or a priority class)
  kQueueControl,    // suspend or resume a queue
  kNodeControl,     // cordon, uncordon or drain a node
};
inline constexpr Action kAllActions[] = {
    Action::kRead,        Action::kList,          Action::kCreate,        Action::kUpdate,
    Action::kDelete,      Action::kCancel,        Action::kScale,         Action::kApplyConfig,
    Action::kQuotaChange, Action::kPolicyChange,  Action::kAuditRead,     Action::kUserManage,
    Action::kTokenManage, Action::kAgentRegister, Action::kAgentHeartbeat, Action::kAgentReport,
    Action::kHold,        Action::kRequeue,       Action::kPriorityChange, Action::kQueueControl,
    Action::kNodeControl};
// Returns "read", "list", …, "quota-change", "agent-register", …, "node-control".
std::string_view ActionName(Action a);
Result<Action> ParseAction(std::string_view text);

// What an action is about. `tenant` is the owning tenant (empty for cluster-level objects such
// as nodes, flavors, pools and priority classes); `project` the owning project for
// project-scoped objects (workloads); `node` the node of node-bound objects; `owner` the user
// a token or user object belongs to.
struct Resource {
  std::string kind;  // "workload", "queue", "project", "tenant", "policy", "node", "token", …
  std::string name;
  std::string tenant;
  std::string project;  // "tenant/project"
  std::string node;
  std::string owner;

  // A workload: kind "workload", its name, project and tenant.
  static Resource ForWorkload(const Workload& w);
  static Resource ForWorkload(std::string name, std::string project);
  // A tenant-owned config object (queue, project, policy of one tenant, the Tenant itself).
  static Resource ForTenantObject(std::string kind, std::string name, std::string tenant);
  // A cluster-level object (node list, flavor, pool, priority class, global policy).
  static Resource ForCluster(std::string kind, std::string name);
  // A node (kind "node"): readable by every user, and by its own agent.
  static Resource ForNode(std::string node);
  // An API token of user `owner`, or a User object.
  static Resource ForToken(std::string id, std::string owner);
  static Resource ForUser(std::string name);

  // Returns "workload nlp/llm/ft-1", "queue nlp-train (tenant nlp)", "node gpu-01".
  std::string ToString() const;
};

// Where a permission holds, relative to the binding that grants it.
enum class Scope : uint8_t {
  kEverywhere,    // any resource
  kBinding,       // inside the binding: tenant-admin its tenant, member its project, viewer its
                  // tenant/project (everywhere when unscoped), agent its node
  kBindingTenant, // inside the tenant of the binding (a member's project's tenant)
  kClusterLevel,  // cluster-level objects (no tenant, project or owner)
  kSelf,          // objects owned by the principal itself (its tokens, its User)
};
std::string_view ScopeName(Scope s);

// One row of the permission table: `role` may do `actions` within `scope` on objects of
// `kinds` (every kind when empty).
struct Permission {
  Role role;
  std::vector<Action> actions;
  Scope scope;
  std::vector<std::string_view> kinds;
};

// The permission table (docs/governance.md).
const std::vector<Permission>& PermissionTable();

// Returns OK when one of `who`'s bindings grants `action` on `what`, else PermissionDenied:
// "user bob (member of nlp/llm) may not cancel workload vision/cv/det-1 (tenant vision)".
Status Authorize(const Principal& who, Action action, const Resource& what);
// True when Authorize(who, Action::kList, what) is OK.
bool MaySee(const Principal& who, const Resource& what);
// The one rule for an object a request names by its name (a queue, a project, a policy): true
// when `who` may see it (MaySee; a null `who`, the server itself, sees everything). One it may
// not see answers `who` exactly like a missing one: a lookup treats it as absent, and no answer
// quotes its fields or names its tenant (docs/governance.md "Objects named in requests").
bool Sees(const Principal* who, const Resource& what);
// Sees over a tenant-owned object of `kind` named `name` of `tenant`, as a function (what
// CheckWorkloadReferences takes); it holds a copy of `who`; empty for a null `who`.
std::function<bool(std::string_view kind, const std::string& name, const std::string& tenant)> SeenBy(
    const Principal* who);

// Returns the items `who` may see (Action::kList), in their order; `resource_of(item)` returns
// the item's Resource.
template <typename T, typename ResourceOf>
std::vector<T> FilterVisible(const Principal& who, std::span<const T> items, ResourceOf&& resource_of) {
  std::vector<T> out;
  for (const T& item : items) {
    if (MaySee(who, resource_of(item))) out.push_back(item);
  }
  return out;
}
// FilterVisible over workloads.
std::vector<Workload> FilterVisibleWorkloads(const Principal& who, std::span<const Workload> workloads);

// Returns the authorization matrix as Markdown: one table per sample principal (admin,
// tenant-admin of t1, member of t1/p1, viewer, viewer of t1, agent of node n1), a row per
// action, columns own project / other project of the same tenant / other tenant, cells
// "allow" or "deny", computed by Authorize. docs/governance.md holds its output.
std::string AuthorizationMatrixMarkdown();

}  // namespace abacus::govern

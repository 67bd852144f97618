#include "govern/authorize.h"

#include <algorithm>
#include <array>

namespace abacus::govern {
namespace {

constexpr std::array<std::string_view, 21> kActionNames = {
    "read",         "list",           "create",          "update",       "delete",        "cancel",
    "scale",        "apply-config",   "quota-change",    "policy-change", "audit-read",   "user-manage",
    "token-manage", "agent-register", "agent-heartbeat", "agent-report", "hold",          "requeue",
    "priority-change", "queue-control", "node-control"};

using A = Action;
const std::vector<Action> kReadActions = {A::kRead, A::kList};
const std::vector<Action> kMutateWork = {A::kCreate, A::kUpdate, A::kDelete, A::kCancel, A::kScale};
const std::vector<Action> kAgentActions = {A::kAgentRegister, A::kAgentHeartbeat, A::kAgentReport};

std::string TenantOfProject(std::string_view project) {
  size_t slash = project.find('/');
  return std::string(project.substr(0, slash));
}

// True when `what` lies inside the scope of `b` (Scope::kBinding).
bool InBinding(const RoleBinding& b, const Resource& what) {
  switch (b.role) {
    case Role::kAdmin: return true;
    case Role::kTenantAdmin: return !b.tenant.empty() && what.tenant == b.tenant;
    case Role::kMember: return !b.project.empty() && what.project == b.project;
    case Role::kViewer:
      if (!b.project.empty()) return what.project == b.project;
      if (!b.tenant.empty()) return what.tenant == b.tenant;
      return true;
    case Role::kAgent: return !b.node.empty() && what.node == b.node;
  }
  return false;
}

std::string BindingTenant(const RoleBinding& b) {
  if (!b.tenant.empty()) return b.tenant;
  if (!b.project.empty()) return TenantOfProject(b.project);
  return "";
}

bool InScope(Scope scope, const RoleBinding& b, const Principal& who, const Resource& what) {
  switch (scope) {
    case Scope::kEverywhere: return true;
    case Scope::kBinding: return InBinding(b, what);
    case Scope::kBindingTenant: {
      std::string t = BindingTenant(b);
      return !t.empty() && what.tenant == t;
    }
    case Scope::kClusterLevel: return what.tenant.empty() && what.project.empty() && what.owner.empty();
    case Scope::kSelf: return who.kind == Principal::Kind::kUser && !what.owner.empty() && what.owner == who.name;
  }
  return false;
}

bool Grants(const Permission& p, const RoleBinding& b, const Principal& who, Action action,
            const Resource& what) {
  if (p.role != b.role) return false;
  if (std::find(p.actions.begin(), p.actions.end(), action) == p.actions.end()) return false;
  if (!p.kinds.empty() && std::find(p.kinds.begin(), p.kinds.end(), what.kind) == p.kinds.end()) return false;
  return InScope(p.scope, b, who, what);
}

}  // namespace

std::string_view ActionName(Action a) { return kActionNames[static_cast<size_t>(a)]; }

Result<Action> ParseAction(std::string_view text) {
  for (size_t i = 0; i < kActionNames.size(); ++i) {
    if (kActionNames[i] == text) return static_cast<Action>(i);
  }
  return InvalidArgument("unknown action '" + std::string(text) + "'");
}

std::string_view ScopeName(Scope s) {
  switch (s) {
    case Scope::kEverywhere: return "everywhere";
    case Scope::kBinding: return "own scope";
    case Scope::kBindingTenant: return "own tenant";
    case Scope::kClusterLevel: return "cluster-level objects";
    case Scope::kSelf: return "own tokens/user";
  }
  return "?";
}

Resource Resource::ForWorkload(const Workload& w) { return ForWorkload(w.name, w.project); }

Resource Resource::ForWorkload(std::string name, std::string project) {
  Resource r;
  r.kind = "workload";
  r.name = std::move(name);
  r.tenant = TenantOfProject(project);
  r.project = std::move(project);
  return r;
}

Resource Resource::ForTenantObject(std::string kind, std::string name, std::string tenant) {
  Resource r;
  r.kind = std::move(kind);
  r.name = std::move(name);
  r.tenant = std::move(tenant);
  return r;
}

Resource Resource::ForCluster(std::string kind, std::string name) {
  Resource r;
  r.kind = std::move(kind);
  r.name = std::move(name);
  return r;
}

Resource Resource::ForNode(std::string node) {
  Resource r;
  r.kind = "node";
  r.name = node;
  r.node = std::move(node);
  return r;
}

Resource Resource::ForToken(std::string id, std::string owner) {
  Resource r;
  r.kind = "token";
  r.name = std::move(id);
  r.owner = std::move(owner);
  return r;
}

Resource Resource::ForUser(std::string name) {
  Resource r;
  r.kind = "user";
  r.name = name;
  r.owner = std::move(name);
  return r;
}

std::string Resource::ToString() const {
  std::string out = kind;
  if (kind == "workload" && !project.empty()) return out + " " + project + "/" + name;
  if (!name.empty()) out += " " + name;
  if (!project.empty()) return out + " (project " + project + ")";
  if (!tenant.empty() && name != tenant) return out + " (tenant " + tenant + ")";
  return out;
}

const std::vector<Permission>& PermissionTable() {
  static const std::vector<Permission> kTable = [] {
    std::vector<Permission> t;
    std::vector<Action> all(std::begin(kAllActions), std::end(kAllActions));
    // admin: everything, everywhere.
    t.push_back({Role::kAdmin, all, Scope::kEverywhere, {}});
    // tenant-admin: everything inside its tenant except users and cluster-level config.
    t.push_back({Role::kTenantAdmin, kReadActions, Scope::kBinding, {}});
    t.push_back({Role::kTenantAdmin, kMutateWork, Scope::kBinding, {"workload", "secret"}});
    t.push_back({Role::kTenantAdmin, kReadActions, Scope::kClusterLevel, {}});
    t.push_back({Role::kTenantAdmin, {A::kApplyConfig}, Scope::kBinding, {"project", "queue"}});
    t.push_back({Role::kTenantAdmin, {A::kQuotaChange}, Scope::kBinding, {"queue", "workload"}});
    t.push_back({Role::kTenantAdmin, {A::kPolicyChange}, Scope::kBinding, {"policy"}});
    t.push_back({Role::kTenantAdmin, {A::kHold, A::kRequeue, A::kPriorityChange}, Scope::kBinding, {"workload"}});
    t.push_back({Role::kTenantAdmin, {A::kQueueControl}, Scope::kBinding, {"queue"}});
    t.push_back({Role::kTenantAdmin, {A::kAuditRead}, Scope::kBinding, {}});
    t.push_back({Role::kTenantAdmin, {A::kTokenManage}, Scope::kSelf, {"token"}});
    t.push_back({Role::kTenantAdmin, kReadActions, Scope::kSelf, {"user"}});
    // member: work in its project; read its tenant's config and cluster-level objects.
    t.push_back({Role::kMember, kReadActions, Scope::kBinding, {}});
    t.push_back({Role::kMember, kMutateWork, Scope::kBinding, {"workload", "secret"}});
    // Like Slurm's users with their own jobs: hold, release, suspend, resume and requeue; the
    // priority against the project's other work is the tenant admin's call.
    t.push_back({Role::kMember, {A::kHold, A::kRequeue}, Scope::kBinding, {"workload"}});
    t.push_back({Role::kMember, kReadActions, Scope::kBindingTenant, {"tenant", "project", "queue", "policy"}});
    t.push_back({Role::kMember, kReadActions, Scope::kClusterLevel, {}});
    t.push_back({Role::kMember, {A::kTokenManage}, Scope::kSelf, {"token"}});
    t.push_back({Role::kMember, kReadActions, Scope::kSelf, {"user"}});
    // viewer: read-only inside its scope (everywhere when unscoped).
    t.push_back({Role::kViewer, kReadActions, Scope::kBinding, {}});
    t.push_back({Role::kViewer, kReadActions, Scope::kClusterLevel, {}});
    t.push_back({Role::kViewer, {A::kTokenManage}, Scope::kSelf, {"token"}});
    t.push_back({Role::kViewer, kReadActions, Scope::kSelf, {"user"}});
    // agent: its own node only.
    t.push_back({Role::kAgent, kAgentActions, Scope::kBinding, {"node"}});
    t.push_back({Role::kAgent, {A::kRead}, Scope::kBinding, {"node"}});
    return t;
  }();
  return kTable;
}

Status Authorize(const Principal& who, Action action, const Resource& what) {
  for (const RoleBinding& b : who.roles) {
    // An agent principal holds only agent bindings; a user never does.
    if ((b.role == Role::kAgent) != (who.kind == Principal::Kind::kAgent)) continue;
    for (const Permission& p : PermissionTable()) {
      if (Grants(p, b, who, action, what)) return Status::OK();
    }
  }
  return PermissionDenied(who.ToString() + " may not " + std::string(ActionName(action)) + " " +
                          what.ToString());
}

bool MaySee(const Principal& who, const Resource& what) { return Authorize(who, Action::kList, what).ok(); }

bool Sees(const Principal* who, const Resource& what) { return who == nullptr || MaySee(*who, what); }

std::function<bool(std::string_view, const std::string&, const std::string&)> SeenBy(const Principal* who) {
  if (who == nullptr) return {};
  return [who = *who](std::string_view kind, const std::string& name, const std::string& tenant) {
    return MaySee(who, Resource::ForTenantObject(std::string(kind), name, tenant));
  };
}

std::vector<Workload> FilterVisibleWorkloads(const Principal& who, std::span<const Workload> workloads) {
  return FilterVisible(who, workloads, [](const Workload& w) { return Resource::ForWorkload(w); });
}

namespace {

// The resource the matrix uses for `action` in column `col` (0: own project, 1: other
// project of the same tenant, 2: other tenant), relative to principal `self`.
Resource MatrixResource(Action action, int col, const std::string& self) {
  static const char* kTenants[] = {"t1", "t1", "t2"};
  static const char* kProjects[] = {"t1/p1", "t1/p2", "t2/p3"};
  static const char* kNodes[] = {"n1", "n2", "n3"};
  Resource r;
  switch (action) {
    case A::kApplyConfig: r.kind = "project"; break;
    case A::kQuotaChange: r.kind = "queue"; break;
    case A::kPolicyChange: r.kind = "policy"; break;
    case A::kAuditRead: r.kind = "audit"; break;
    case A::kUserManage: r.kind = "user"; break;
    case A::kTokenManage: r.kind = "token"; break;
    case A::kAgentRegister:
    case A::kAgentHeartbeat:
    case A::kAgentReport:
    case A::kNodeControl: r.kind = "node"; break;
    case A::kQueueControl: r.kind = "queue"; break;
    default: r.kind = "workload"; break;
  }
  r.name = "x";
  r.tenant = kTenants[col];
  r.project = kProjects[col];
  r.node = kNodes[col];
  r.owner = col == 0 ? self : "someone-else";
  if (r.kind == "node") {
    r.tenant.clear();
    r.project.clear();
  }
  return r;
}

std::vector<std::pair<std::string, Principal>> MatrixPrincipals() {
  auto binding = [](Role role, std::string tenant, std::string project, std::string node) {
    RoleBinding b;
    b.role = role;
    b.tenant = std::move(tenant);
    b.project = std::move(project);
    b.node = std::move(node);
    return b;
  };
  return {
      {"admin", Principal::User("ann", {binding(Role::kAdmin, "", "", "")})},
      {"tenant-admin of t1", Principal::User("tia", {binding(Role::kTenantAdmin, "t1", "", "")})},
      {"member of t1/p1", Principal::User("max", {binding(Role::kMember, "", "t1/p1", "")})},
      {"viewer", Principal::User("val", {binding(Role::kViewer, "", "", "")})},
      {"viewer of t1", Principal::User("vic", {binding(Role::kViewer, "t1", "", "")})},
      {"agent of n1", Principal::Agent("n1")},
  };
}

}  // namespace

std::string AuthorizationMatrixMarkdown() {
  auto principals = MatrixPrincipals();
  std::string out = "| action |";
  std::string rule = "|---|";
  for (const auto& [label, p] : principals) {
    out += " " + label + " |";
    rule += ":-:|";
  }
  out += "\n" + rule + "\n";
  for (Action a : kAllActions) {
    out += "| " + std::string(ActionName(a)) + " |";
    for (const auto& [label, p] : principals) {
      std::string cell;
      for (int col = 0; col < 3; ++col) {
        if (col > 0) cell += " ";
        cell += Authorize(p, a, MatrixResource(a, col, p.name)).ok() ? "✓" : "✗";
      }
      out += " " + cell + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace abacus::govern

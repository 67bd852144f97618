#include "workload/governance_spec.h"

#include <algorithm>
#include <array>

#include "common/ids.h"
#include "tenancy/tenant.h"

namespace abacus {
namespace {
constexpr std::array<std::string_view, 5> kRoleNames = {"admin", "tenant-admin", "member", "viewer",
                                                        "agent"};
}  // namespace

bool AdmissionPolicy::AppliesTo(std::string_view tenant) const {
  return tenants.empty() || std::find(tenants.begin(), tenants.end(), tenant) != tenants.end();
}

std::string_view RoleName(Role r) { return kRoleNames[static_cast<size_t>(r)]; }

Result<Role> ParseRole(std::string_view text) {
  for (size_t i = 0; i < kRoleNames.size(); ++i) {
    if (kRoleNames[i] == text) return static_cast<Role>(i);
  }
  return InvalidArgument("unknown role '" + std::string(text) +
                         "' (expected admin, tenant-admin, member, viewer or agent)");
}

std::string RoleBinding::ToString() const {
  std::string out(RoleName(role));
  if (!project.empty()) return out + " of " + project;
  if (!tenant.empty()) return out + " of " + tenant;
  if (!node.empty()) return out + " of node " + node;
  return out;
}

Status RoleBinding::Validate() const {
  const std::string name(RoleName(role));
  auto check_project = [&]() -> Status {
    auto p = ParseProjectRef(project);
    if (!p.ok()) return p.status();
    if (!tenant.empty() && tenant != p->first) {
      return InvalidArgument(name + ": tenant " + tenant + " does not own project " + project);
    }
    return Status::OK();
  };
  switch (role) {
    case Role::kAdmin:
      if (!tenant.empty() || !project.empty() || !node.empty()) {
        return InvalidArgument("admin holds everywhere; it takes no tenant, project or node");
      }
      return Status::OK();
    case Role::kTenantAdmin:
      if (tenant.empty()) return InvalidArgument("tenant-admin needs a tenant");
      if (!IsValidName(tenant)) return InvalidArgument("invalid tenant name '" + tenant + "'");
      if (!project.empty() || !node.empty()) return InvalidArgument("tenant-admin takes only a tenant");
      return Status::OK();
    case Role::kMember:
      if (project.empty()) return InvalidArgument("member needs a project (tenant/project)");
      if (!node.empty()) return InvalidArgument("member takes no node");
      return check_project();
    case Role::kViewer:
      if (!node.empty()) return InvalidArgument("viewer takes no node");
      if (!project.empty()) return check_project();
      if (!tenant.empty() && !IsValidName(tenant)) return InvalidArgument("invalid tenant name '" + tenant + "'");
      return Status::OK();
    case Role::kAgent:
      if (node.empty()) return InvalidArgument("agent needs a node");
      if (!IsValidName(node)) return InvalidArgument("invalid node name '" + node + "'");
      if (!tenant.empty() || !project.empty()) return InvalidArgument("agent takes only a node");
      return Status::OK();
  }
  return InvalidArgument("unknown role");
}

std::string_view GovernanceDocument::kind() const {
  return std::holds_alternative<AdmissionPolicy>(object) ? kAdmissionPolicyKind : kUserKind;
}

const std::string& GovernanceDocument::name() const {
  return std::visit([](const auto& o) -> const std::string& { return o.name; }, object);
}

}  // namespace abacus

// Test-only helpers shared by the server's unit tests and the integration tests: the small
// organisations they start from, as YAML (Org; TeamOrg and AcmeOrg for one tenant), so that each
// test states only its own tenants, quotas and users.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace abacus::server::testing_org {

using Quotas = std::vector<std::pair<std::string, std::string>>;  // {resource, nominal}, in order

// One tenant of an Org: its projects, and its queue (in `cohort` when not empty).
struct OrgTenant {
  std::string name;
  std::vector<std::string> projects;
  std::string queue;
  std::string cohort;
};

// A user of an Org: its roles as YAML flow mappings, e.g. "{role: member, project: t1/p1}".
struct OrgUser {
  std::string name;
  std::vector<std::string> roles;
};

// Returns a user with one role: admin and viewer everywhere when `scope` is empty; "project: t1/p1"
// or "tenant: t1" narrows it.
inline OrgUser User(const std::string& name, const std::string& role, const std::string& scope = "") {
  return {name, {"{role: " + role + (scope.empty() ? "" : ", " + scope) + "}"}};
}
// Returns a member of `project` ("t1/p1").
inline OrgUser Member(const std::string& name, const std::string& project) {
  return User(name, "member", "project: " + project);
}
// Returns a tenant-admin of `tenant`.
inline OrgUser TenantAdmin(const std::string& name, const std::string& tenant) {
  return User(name, "tenant-admin", "tenant: " + tenant);
}

// Returns YAML for the cohorts the tenants' queues name, each tenant with its projects, each
// tenant's queue with `quotas`, then `extra` (whole documents, e.g. priority classes) and the
// users, in that order.
inline std::string Org(const std::vector<OrgTenant>& tenants, const Quotas& quotas, const std::vector<OrgUser>& users = {},
                       const std::string& extra = "") {
  std::vector<std::string> docs;
  for (const auto& t : tenants) {
    if (!t.cohort.empty()) docs.push_back("kind: Cohort\nname: " + t.cohort + "\n");
  }
  for (const auto& t : tenants) {
    docs.push_back("kind: Tenant\nname: " + t.name + "\n");
    for (const auto& p : t.projects) docs.push_back("kind: Project\nname: " + p + "\ntenant: " + t.name + "\n");
  }
  for (const auto& t : tenants) {
    std::string q = "kind: Queue\nname: " + t.queue + "\ntenant: " + t.name + "\n";
    if (!t.cohort.empty()) q += "cohort: " + t.cohort + "\n";
    q += "quotas:\n";
    for (const auto& [resource, nominal] : quotas) q += "  - {resource: " + resource + ", nominal: " + nominal + "}\n";
    docs.push_back(q);
  }
  if (!extra.empty()) docs.push_back(extra);
  for (const auto& u : users) {
    std::string roles;
    for (const auto& r : u.roles) roles += (roles.empty() ? "" : ", ") + r;
    docs.push_back("kind: User\nname: " + u.name + "\nroles: [" + roles + "]\n");
  }
  std::string out;
  for (const auto& d : docs) out += (out.empty() ? "" : "---\n") + d;
  return out;
}

// Returns YAML for tenant `tenant`, project `tenant`/`project` and queue `queue` of the tenant with
// `quotas` as {resource, nominal} pairs, in order.
inline std::string TeamOrg(const std::string& tenant, const std::string& project, const std::string& queue,
                           const Quotas& quotas) {
  return Org({{tenant, {project}, queue, ""}}, quotas);
}

// The two tenants most isolation checks start from: t1 with project p1 (then `t1_more`) and
// queue q1, t2 with project `t2_project` and queue q2; no cohorts.
inline std::vector<OrgTenant> TwoTenants(const std::string& t2_project, const std::vector<std::string>& t1_more = {}) {
  std::vector<std::string> t1_projects = {"p1"};
  t1_projects.insert(t1_projects.end(), t1_more.begin(), t1_more.end());
  return {{"t1", t1_projects, "q1", ""}, {"t2", {t2_project}, "q2", ""}};
}

// Returns YAML for tenant acme, project acme/ml and queue `queue` of acme with nominal cpu 64 and
// memory 512Gi, plus `a100` devices of `flavor` (gpu/nvidia/A100-80G unless named) when a100 > 0
// (listed first).
inline std::string AcmeOrg(const std::string& queue = "train", int a100 = 2,
                           const std::string& flavor = "gpu/nvidia/A100-80G") {
  Quotas quotas;
  if (a100 > 0) quotas.emplace_back(flavor, std::to_string(a100));
  quotas.emplace_back("cpu", "64");
  quotas.emplace_back("memory", "512Gi");
  return TeamOrg("acme", "ml", queue, quotas);
}

// The org the isolation and route-rights suites share: t1 (projects p1 and p2, queue q1 in
// cohort c1) and t2 (p3, q2 in cohort c2); ann admin, and per tenant a tenant-admin (tia, tob)
// and a member (max, mia); vic viewer of t1.
inline std::string TwoTenantOrgWithUsers() {
  return Org({{"t1", {"p1", "p2"}, "q1", "c1"}, {"t2", {"p3"}, "q2", "c2"}}, {{"cpu", "64"}, {"memory", "1Ti"}},
             {User("ann", "admin"), TenantAdmin("tia", "t1"), Member("max", "t1/p1"),
              User("vic", "viewer", "tenant: t1"), TenantAdmin("tob", "t2"), Member("mia", "t2/p3")});
}

}  // namespace abacus::server::testing_org

#include "govern/authorize.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace abacus::govern {
namespace {

RoleBinding Bind(Role role, std::string tenant = "", std::string project = "", std::string node = "") {
  RoleBinding b;
  b.role = role;
  b.tenant = std::move(tenant);
  b.project = std::move(project);
  b.node = std::move(node);
  return b;
}

// The resource used for `action` in column `col` (0 own project, 1 other project of the same
// tenant, 2 other tenant); written independently of the implementation's matrix helper.
Resource ResourceFor(Action a, int col, const std::string& self) {
  const char* tenants[] = {"t1", "t1", "t2"};
  const char* projects[] = {"t1/p1", "t1/p2", "t2/p3"};
  const char* nodes[] = {"n1", "n2", "n3"};
  Resource r;
  r.name = "x";
  r.tenant = tenants[col];
  r.project = projects[col];
  r.node = nodes[col];
  r.owner = col == 0 ? self : "someone-else";
  switch (a) {
    case Action::kApplyConfig: r.kind = "project"; break;
    case Action::kQuotaChange: r.kind = "queue"; break;
    case Action::kPolicyChange: r.kind = "policy"; break;
    case Action::kAuditRead: r.kind = "audit"; break;
    case Action::kUserManage: r.kind = "user"; break;
    case Action::kTokenManage: r.kind = "token"; break;
    case Action::kQueueControl: r.kind = "queue"; break;
    case Action::kAgentRegister:
    case Action::kAgentHeartbeat:
    case Action::kAgentReport:
    case Action::kNodeControl:
      r.kind = "node";
      r.tenant.clear();
      r.project.clear();
      break;
    default: r.kind = "workload"; break;
  }
  return r;
}

struct MatrixRow {
  const char* label;
  Principal who;
  // One string per action in kAllActions order; 'Y' allow / 'N' deny for own project, other
  // project of the same tenant, other tenant.
  std::vector<std::string> expected;
};

// Actions: read list create update delete cancel scale apply-config quota-change
// policy-change audit-read user-manage token-manage agent-register agent-heartbeat agent-report
// hold requeue priority-change queue-control node-control
TEST(AuthorizeTest, ExhaustiveMatrixEveryRoleEveryActionOwnAndOtherTenant) {
  std::vector<MatrixRow> rows = {
      {"admin", Principal::User("ann", {Bind(Role::kAdmin)}),
       {"YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY", "YYY",
        "YYY", "YYY", "YYY", "YYY", "YYY", "YYY"}},
      {"tenant-admin of t1", Principal::User("tia", {Bind(Role::kTenantAdmin, "t1")}),
       {"YYN", "YYN", "YYN", "YYN", "YYN", "YYN", "YYN", "YYN", "YYN", "YYN", "YYN", "NNN", "YNN", "NNN", "NNN",
        "NNN", "YYN", "YYN", "YYN", "YYN", "NNN"}},
      {"member of t1/p1", Principal::User("max", {Bind(Role::kMember, "", "t1/p1")}),
       {"YNN", "YNN", "YNN", "YNN", "YNN", "YNN", "YNN", "NNN", "NNN", "NNN", "NNN", "NNN", "YNN", "NNN", "NNN",
        "NNN", "YNN", "YNN", "NNN", "NNN", "NNN"}},
      {"viewer", Principal::User("val", {Bind(Role::kViewer)}),
       {"YYY", "YYY", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "YNN", "NNN", "NNN",
        "NNN", "NNN", "NNN", "NNN", "NNN", "NNN"}},
      {"viewer of t1", Principal::User("vic", {Bind(Role::kViewer, "t1")}),
       {"YYN", "YYN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "YNN", "NNN", "NNN",
        "NNN", "NNN", "NNN", "NNN", "NNN", "NNN"}},
      {"agent of n1", Principal::Agent("n1"),
       {"NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "NNN", "YNN", "YNN",
        "YNN", "NNN", "NNN", "NNN", "NNN", "NNN"}},
  };
  const size_t n_actions = std::size(kAllActions);
  int cases = 0;
  for (const auto& row : rows) {
    ASSERT_EQ(row.expected.size(), n_actions) << row.label;
    for (size_t a = 0; a < n_actions; ++a) {
      Action action = kAllActions[a];
      for (int col = 0; col < 3; ++col) {
        Status st = Authorize(row.who, action, ResourceFor(action, col, row.who.name));
        bool want = row.expected[a][col] == 'Y';
        EXPECT_EQ(st.ok(), want) << row.label << " " << ActionName(action) << " column " << col << ": "
                                 << st.ToString();
        if (!want) {
          EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
        }
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 6 * 21 * 3);
}

TEST(AuthorizeTest, DocsHoldTheGeneratedMatrix) {
  std::ifstream in(std::string(ABACUS_SOURCE_DIR) + "/docs/governance.md");
  ASSERT_TRUE(in) << "docs/governance.md is missing";
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_NE(buf.str().find(AuthorizationMatrixMarkdown()), std::string::npos)
      << "docs/governance.md is out of date; paste this matrix:\n"
      << AuthorizationMatrixMarkdown();
}

TEST(AuthorizeTest, DenialNamesPrincipalActionAndResource) {
  Principal bob = Principal::User("bob", {Bind(Role::kMember, "", "nlp/llm")});
  Status st = Authorize(bob, Action::kCancel, Resource::ForWorkload("det-1", "vision/cv"));
  EXPECT_EQ(st.message(), "user bob (member of nlp/llm) may not cancel workload vision/cv/det-1");
}

TEST(AuthorizeTest, MemberReadsOwnTenantConfigButNotOthers) {
  Principal m = Principal::User("m", {Bind(Role::kMember, "", "nlp/llm")});
  EXPECT_TRUE(Authorize(m, Action::kRead, Resource::ForTenantObject("queue", "nlp-train", "nlp")).ok());
  EXPECT_TRUE(Authorize(m, Action::kList, Resource::ForTenantObject("project", "nlp/vision", "nlp")).ok());
  EXPECT_FALSE(Authorize(m, Action::kRead, Resource::ForTenantObject("queue", "cv-train", "vision")).ok());
  // Another project's workloads stay hidden even inside the same tenant.
  EXPECT_FALSE(Authorize(m, Action::kRead, Resource::ForWorkload("w", "nlp/vision")).ok());
  // Cluster-level objects are readable, not writable.
  EXPECT_TRUE(Authorize(m, Action::kRead, Resource::ForCluster("flavor", "gpu/nvidia/A100")).ok());
  EXPECT_TRUE(Authorize(m, Action::kList, Resource::ForNode("gpu-01")).ok());
  EXPECT_FALSE(Authorize(m, Action::kApplyConfig, Resource::ForCluster("flavor", "gpu/nvidia/A100")).ok());
}

TEST(AuthorizeTest, TenantAdminChangesItsQueuesAndPoliciesButNotItsTenantOrGlobalObjects) {
  Principal t = Principal::User("t", {Bind(Role::kTenantAdmin, "nlp")});
  EXPECT_TRUE(Authorize(t, Action::kQuotaChange, Resource::ForTenantObject("queue", "nlp-train", "nlp")).ok());
  EXPECT_TRUE(Authorize(t, Action::kApplyConfig, Resource::ForTenantObject("queue", "nlp-train", "nlp")).ok());
  EXPECT_TRUE(Authorize(t, Action::kPolicyChange, Resource::ForTenantObject("policy", "nlp-extra", "nlp")).ok());
  EXPECT_FALSE(Authorize(t, Action::kQuotaChange, Resource::ForTenantObject("queue", "cv-train", "vision")).ok());
  // The Tenant object carries pool isolation: only an admin changes it.
  EXPECT_FALSE(Authorize(t, Action::kApplyConfig, Resource::ForTenantObject("tenant", "nlp", "nlp")).ok());
  EXPECT_TRUE(Authorize(t, Action::kRead, Resource::ForTenantObject("tenant", "nlp", "nlp")).ok());
  EXPECT_FALSE(Authorize(t, Action::kPolicyChange, Resource::ForCluster("policy", "global")).ok());
  EXPECT_FALSE(Authorize(t, Action::kApplyConfig, Resource::ForCluster("pool", "train")).ok());
  EXPECT_FALSE(Authorize(t, Action::kUserManage, Resource::ForUser("someone")).ok());
}

TEST(AuthorizeTest, TokensAndUsersAreSelfService) {
  Principal v = Principal::User("val", {Bind(Role::kViewer, "nlp")});
  EXPECT_TRUE(Authorize(v, Action::kTokenManage, Resource::ForToken("tok-1", "val")).ok());
  EXPECT_FALSE(Authorize(v, Action::kTokenManage, Resource::ForToken("tok-2", "bob")).ok());
  EXPECT_TRUE(Authorize(v, Action::kRead, Resource::ForUser("val")).ok());
  EXPECT_FALSE(Authorize(v, Action::kUserManage, Resource::ForUser("val")).ok());
  EXPECT_FALSE(Authorize(v, Action::kRead, Resource::ForUser("bob")).ok());
}

TEST(AuthorizeTest, AgentOnlyActsForItsNode) {
  Principal a = Principal::Agent("gpu-01");
  EXPECT_TRUE(Authorize(a, Action::kAgentHeartbeat, Resource::ForNode("gpu-01")).ok());
  EXPECT_TRUE(Authorize(a, Action::kRead, Resource::ForNode("gpu-01")).ok());
  EXPECT_FALSE(Authorize(a, Action::kAgentReport, Resource::ForNode("gpu-02")).ok());
  EXPECT_FALSE(Authorize(a, Action::kList, Resource::ForWorkload("w", "nlp/llm")).ok());
  // A user that somehow holds an agent binding gets nothing from it.
  Principal u = Principal::User("u", {Bind(Role::kAgent, "", "", "gpu-01")});
  EXPECT_FALSE(Authorize(u, Action::kAgentHeartbeat, Resource::ForNode("gpu-01")).ok());
  // An agent principal never gets user permissions, whatever bindings it carries.
  Principal forged = Principal::Agent("gpu-01");
  forged.roles.push_back(Bind(Role::kAdmin));
  EXPECT_FALSE(Authorize(forged, Action::kCreate, Resource::ForWorkload("w", "nlp/llm")).ok());
}

TEST(AuthorizeTest, SeveralBindingsAddUp) {
  Principal p = Principal::User("p", {Bind(Role::kMember, "", "nlp/llm"), Bind(Role::kViewer, "vision")});
  EXPECT_TRUE(Authorize(p, Action::kCreate, Resource::ForWorkload("w", "nlp/llm")).ok());
  EXPECT_TRUE(Authorize(p, Action::kRead, Resource::ForWorkload("w", "vision/cv")).ok());
  EXPECT_FALSE(Authorize(p, Action::kCancel, Resource::ForWorkload("w", "vision/cv")).ok());
}

TEST(AuthorizeTest, ListsAreFilteredToWhatThePrincipalMaySee) {
  std::vector<Workload> all(4);
  all[0].name = "a";
  all[0].project = "nlp/llm";
  all[1].name = "b";
  all[1].project = "nlp/vision";
  all[2].name = "c";
  all[2].project = "cv/det";
  all[3].name = "d";
  all[3].project = "nlp/llm";
  auto names = [](const std::vector<Workload>& ws) {
    std::string out;
    for (const auto& w : ws) out += w.name;
    return out;
  };
  EXPECT_EQ(names(FilterVisibleWorkloads(Principal::User("m", {Bind(Role::kMember, "", "nlp/llm")}), all)), "ad");
  EXPECT_EQ(names(FilterVisibleWorkloads(Principal::User("t", {Bind(Role::kTenantAdmin, "nlp")}), all)), "abd");
  EXPECT_EQ(names(FilterVisibleWorkloads(Principal::User("v", {Bind(Role::kViewer)}), all)), "abcd");
  EXPECT_EQ(names(FilterVisibleWorkloads(Principal::User("x", {}), all)), "");
  EXPECT_EQ(names(FilterVisibleWorkloads(Principal::Agent("n1"), all)), "");

  struct Queue {
    std::string name, tenant;
  };
  std::vector<Queue> queues = {{"q1", "nlp"}, {"q2", "cv"}};
  auto visible = FilterVisible(Principal::User("m", {Bind(Role::kMember, "", "cv/det")}), std::span<const Queue>(queues),
                               [](const Queue& q) { return Resource::ForTenantObject("queue", q.name, q.tenant); });
  ASSERT_EQ(visible.size(), 1u);
  EXPECT_EQ(visible[0].name, "q2");
}

TEST(AuthorizeTest, ActionNamesRoundTrip) {
  for (Action a : kAllActions) {
    auto parsed = ParseAction(ActionName(a));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a);
  }
  EXPECT_FALSE(ParseAction("fly").ok());
}

}  // namespace
}  // namespace abacus::govern

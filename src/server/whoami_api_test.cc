#include "server/whoami_api.h"

#include <gtest/gtest.h>

#include <set>

namespace abacus::server {
namespace {

using govern::Principal;
using govern::Resource;
using nlohmann::json;

RoleBinding Bind(Role role, std::string tenant = "", std::string project = "") {
  RoleBinding b;
  b.role = role;
  b.tenant = std::move(tenant);
  b.project = std::move(project);
  return b;
}

std::set<std::string> May(const json& answer) {
  std::set<std::string> out;
  for (const auto& a : answer.at("may")) out.insert(a.get<std::string>());
  return out;
}

TEST(WhoAmITest, NamesTheCallerAndItsBindings) {
  Principal max = Principal::User("max", {Bind(Role::kMember, "", "t1/p1")});
  max.token_id = "tok-1";
  json w = WhoAmI(max, nullptr);
  EXPECT_EQ(w["name"], "max");
  EXPECT_EQ(w["kind"], "user");
  EXPECT_EQ(w["tokenId"], "tok-1");
  ASSERT_EQ(w["roles"].size(), 1u);
  EXPECT_EQ(w["roles"][0]["role"], "member");
  EXPECT_EQ(w["roles"][0]["project"], "t1/p1");
  EXPECT_FALSE(w.contains("may"));  // nothing asked about
}

// The actions listed are those the permission table grants on the object, so the dashboard shows
// a member cancel/hold/scale on its own work but not the temporary-quota decision, and node
// control only to admins.
TEST(WhoAmITest, MayListsWhatThePermissionTableGrants) {
  Principal max = Principal::User("max", {Bind(Role::kMember, "", "t1/p1")});
  Principal tia = Principal::User("tia", {Bind(Role::kTenantAdmin, "t1")});
  Principal ann = Principal::User("ann", {Bind(Role::kAdmin)});
  Resource own = Resource::ForWorkload("w", "t1/p1");
  Resource other = Resource::ForWorkload("w", "t2/p3");
  Resource node = Resource::ForCluster("node", "gpu-01");

  std::set<std::string> mine = May(WhoAmI(max, &own));
  EXPECT_TRUE(mine.count("cancel") && mine.count("hold") && mine.count("scale")) << WhoAmI(max, &own).dump();
  EXPECT_FALSE(mine.count("quota-change"));
  EXPECT_EQ(May(WhoAmI(max, &other)).count("cancel"), 0u);
  EXPECT_EQ(May(WhoAmI(max, &node)).count("node-control"), 0u);

  EXPECT_EQ(May(WhoAmI(tia, &own)).count("quota-change"), 1u);
  EXPECT_EQ(May(WhoAmI(tia, &other)).count("cancel"), 0u);
  EXPECT_EQ(May(WhoAmI(tia, &node)).count("node-control"), 0u);

  EXPECT_EQ(May(WhoAmI(ann, &other)).count("quota-change"), 1u);
  EXPECT_EQ(May(WhoAmI(ann, &node)).count("node-control"), 1u);
  EXPECT_EQ(WhoAmI(ann, &node)["about"], "node gpu-01");
}

}  // namespace
}  // namespace abacus::server

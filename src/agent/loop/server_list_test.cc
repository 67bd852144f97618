#include "agent/loop/server_list.h"

#include <gtest/gtest.h>

namespace abacus::agent {
namespace {

TEST(ServerListTest, ParsesACommaSeparatedListAndNormalizesEachUrl) {
  auto list = ServerList::Parse(" 10.0.0.1:8420 , https://b.internal:8420/,http://10.0.0.1:8420");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->urls(), (std::vector<std::string>{"http://10.0.0.1:8420", "https://b.internal:8420"}));
  EXPECT_EQ(list->current(), "http://10.0.0.1:8420");
  EXPECT_EQ(ServerList::Parse(" , ").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ServerList::Parse("").status().code(), StatusCode::kInvalidArgument);
}

TEST(ServerListTest, RotatesToTheNextUrlAfterAFailureAndWrapsAround) {
  ServerList list({"http://a", "http://b", "http://c"});
  list.Failed("http://a");
  EXPECT_EQ(list.current(), "http://b");
  list.Failed("http://b");
  EXPECT_EQ(list.current(), "http://c");
  list.Failed("http://c");
  EXPECT_EQ(list.current(), "http://a");
  // A late failure of a URL the agent already left (a call that was in flight) moves nothing.
  list.Failed("http://c");
  EXPECT_EQ(list.current(), "http://a");
}

TEST(ServerListTest, FollowsTheLeaderAFollowerNames) {
  ServerList list({"http://a", "http://b"});
  list.Failed("http://a", "http://b");  // a is a follower; it names b
  EXPECT_EQ(list.current(), "http://b");
  // A leader not in the list (another address of it) is learned and used.
  list.Failed("http://b", "c.internal:8420/");
  EXPECT_EQ(list.current(), "http://c.internal:8420");
  EXPECT_EQ(list.urls(), (std::vector<std::string>{"http://a", "http://b", "http://c.internal:8420"}));
  // Naming itself is no hint: on to the next URL.
  list.Failed("http://c.internal:8420", "http://c.internal:8420");
  EXPECT_EQ(list.current(), "http://a");
  // One URL: nowhere else to go.
  ServerList one({"http://only"});
  one.Failed("http://only");
  EXPECT_EQ(one.current(), "http://only");
}

}  // namespace
}  // namespace abacus::agent

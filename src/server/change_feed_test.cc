#include "server/change_feed.h"

#include <gtest/gtest.h>

#include <thread>

namespace abacus::server {
namespace {

using std::chrono::steady_clock;

TEST(ChangeFeedTest, ChangesAreSeenOnlyOncePublished) {
  ChangeFeed feed(1000);
  const uint64_t start = feed.version();
  feed.Record("workload", "w1");
  EXPECT_EQ(feed.version(), start);
  EXPECT_TRUE(feed.ChangesSince(start).changes.empty());
  feed.Publish();
  auto since = feed.ChangesSince(start);
  ASSERT_TRUE(since.complete);
  ASSERT_EQ(since.changes.size(), 1u);
  EXPECT_EQ(since.changes[0].key, "w1");
  EXPECT_EQ(since.version, start + 1);
  EXPECT_TRUE(feed.ChangesSince(since.version).changes.empty());
}

TEST(ChangeFeedTest, AVersionWhoseChangesWereDroppedListsAgain) {
  ChangeFeed feed(1000, 2);
  const uint64_t start = feed.version();
  for (const char* k : {"a", "b", "c"}) feed.Record("workload", k);
  feed.Publish();
  EXPECT_FALSE(feed.ChangesSince(start).complete);     // "a" was dropped
  EXPECT_TRUE(feed.ChangesSince(start + 1).complete);  // b and c are kept
  EXPECT_EQ(feed.ChangesSince(start + 1).changes.size(), 2u);
  EXPECT_FALSE(feed.ChangesSince(5).complete);          // a version of an earlier server life
  EXPECT_FALSE(feed.ChangesSince(start + 99).complete);  // one never published
}

TEST(ChangeFeedTest, WaitPastWakesOnPublishAndOnShutdown) {
  ChangeFeed feed(1000);
  const uint64_t start = feed.version();
  std::thread writer([&] {
    feed.Record("node", "n1");
    feed.Publish();
  });
  EXPECT_TRUE(feed.WaitPast(start, steady_clock::now() + std::chrono::minutes(5)));
  writer.join();
  EXPECT_EQ(feed.version(), start + 1);

  std::thread stopper([&] { feed.Shutdown(); });
  EXPECT_FALSE(feed.WaitPast(feed.version(), steady_clock::now() + std::chrono::minutes(5)));
  stopper.join();
}

}  // namespace
}  // namespace abacus::server

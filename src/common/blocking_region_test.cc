#include "common/blocking_region.h"

#include <gtest/gtest.h>

#include <thread>

namespace abacus {
namespace {

struct CountingPool : BlockingRegion::Pool {
  int blocked = 0;
  int unblocked = 0;
  void Blocked() override { ++blocked; }
  void Unblocked() override { ++unblocked; }
};

TEST(BlockingRegionTest, TellsTheThreadsPoolWhenItWaitsAndWhenItStops) {
  CountingPool pool;
  BlockingRegion::Join(&pool);
  {
    BlockingRegion waiting;
    EXPECT_EQ(pool.blocked, 1);
    EXPECT_EQ(pool.unblocked, 0);
  }
  EXPECT_EQ(pool.unblocked, 1);
  BlockingRegion::Join(nullptr);
  { BlockingRegion waiting; }
  EXPECT_EQ(pool.blocked, 1);  // the thread left the pool: nothing told
}

TEST(BlockingRegionTest, AnotherThreadsRegionIsNotThisPools) {
  CountingPool pool;
  BlockingRegion::Join(&pool);
  std::thread other([] { BlockingRegion waiting; });
  other.join();
  EXPECT_EQ(pool.blocked, 0);
  BlockingRegion::Join(nullptr);
}

TEST(BlockingRegionTest, ARegionThatStartedInAPoolEndsInIt) {
  CountingPool pool;
  BlockingRegion::Join(&pool);
  {
    BlockingRegion waiting;
    BlockingRegion::Join(nullptr);  // the thread leaves the pool while it waits
  }
  EXPECT_EQ(pool.blocked, 1);
  EXPECT_EQ(pool.unblocked, 1);
}

}  // namespace
}  // namespace abacus

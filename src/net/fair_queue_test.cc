#include "net/fair_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "common/blocking_region.h"
#include "common/test_eventually.h"

namespace abacus::net {
namespace {

using namespace std::chrono_literals;

// Runs `workers` threads over `q` (as HttpFront does) until the queue is closed.
std::vector<std::thread> StartWorkers(FairQueue& q, int workers) {
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back([&q] {
      BlockingRegion::Join(&q);
      std::function<void()> task;
      for (bool ended = false; q.Next(task, ended); ended = true) {
        task();
        task = nullptr;
      }
      BlockingRegion::Join(nullptr);
    });
  }
  return threads;
}

TEST(FairQueueTest, ClientsTakeTurns) {
  FairQueue q;
  std::vector<std::string> order;
  for (int i = 0; i < 3; ++i) q.Push("flood", [&order] { order.push_back("flood"); });
  q.Push("probe", [&order] { order.push_back("probe"); });
  std::function<void()> task;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(q.Next(task, i > 0));
    task();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"flood", "probe", "flood", "flood"}));
  q.Close();
  EXPECT_FALSE(q.Next(task, true));
}

TEST(FairQueueTest, NoMoreThanTheBoundRunAtOnce) {
  FairQueue q(2);
  auto workers = StartWorkers(q, 8);
  std::atomic<int> running{0}, most{0}, finished{0};
  std::atomic<bool> release{false};
  for (int i = 0; i < 6; ++i) {
    q.Push("c" + std::to_string(i), [&] {
      int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      while (!release.load()) std::this_thread::yield();  // busy, not waiting in a region
      --running;
      ++finished;
    });
  }
  ASSERT_TRUE(Eventually([&] { return running.load() == 2; }));
  std::this_thread::sleep_for(50ms);  // idle workers were there: still only two started
  EXPECT_EQ(running.load(), 2);
  EXPECT_TRUE(q.Waiting());
  release = true;
  ASSERT_TRUE(Eventually([&] { return finished.load() == 6; }));
  EXPECT_EQ(most.load(), 2);
  q.Close();
  for (auto& t : workers) t.join();
}

TEST(FairQueueTest, AWaitingTaskGivesItsPlaceToAQueuedOne) {
  FairQueue q(1);
  auto workers = StartWorkers(q, 4);
  std::latch waiting(1), go(1);
  std::atomic<bool> second_ran{false};
  q.Push("long-poll", [&] {
    waiting.count_down();
    BlockingRegion region;  // e.g. a long poll: the running place goes to the next task
    go.wait();
  });
  waiting.wait();
  q.Push("probe", [&] { second_ran = true; });
  EXPECT_TRUE(Eventually([&] { return second_ran.load(); }));
  go.count_down();
  q.Close();
  for (auto& t : workers) t.join();
}

TEST(FairQueueTest, WithoutARegionAWaitingTaskKeepsItsPlace) {
  FairQueue q(1);
  auto workers = StartWorkers(q, 4);
  std::latch started(1);
  std::atomic<bool> release{false}, second_ran{false};
  q.Push("busy", [&] {
    started.count_down();
    while (!release.load()) std::this_thread::sleep_for(1ms);  // not marked: counts as running
  });
  started.wait();
  q.Push("probe", [&] { second_ran = true; });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(second_ran.load());
  release = true;
  EXPECT_TRUE(Eventually([&] { return second_ran.load(); }));
  q.Close();
  for (auto& t : workers) t.join();
}

TEST(FairQueueTest, ATaskThatWaitedGoesOnWithoutAPlace) {
  FairQueue q(1);
  auto workers = StartWorkers(q, 4);
  std::latch after_wait(1);
  std::atomic<bool> release{false}, second_ran{false};
  q.Push("submission", [&] {
    { BlockingRegion region; }  // its commit
    after_wait.count_down();
    while (!release.load()) std::this_thread::sleep_for(1ms);  // writing its answer
  });
  after_wait.wait();
  q.Push("probe", [&] { second_ran = true; });
  EXPECT_TRUE(Eventually([&] { return second_ran.load(); }));
  release = true;
  q.Close();
  for (auto& t : workers) t.join();
}

TEST(FairQueueTest, CloseHandsOutWhatIsQueuedThenStops) {
  FairQueue q(1);
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) q.Push("c", [&] { ++ran; });
  q.Close();
  auto workers = StartWorkers(q, 3);
  for (auto& t : workers) t.join();
  EXPECT_EQ(ran.load(), 5);
}

}  // namespace
}  // namespace abacus::net

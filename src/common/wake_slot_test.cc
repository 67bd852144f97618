#include "common/wake_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace abacus {
namespace {

TEST(WakeSlotTest, AWakeBeforeTheWaitIsNotLost) {
  WakeSlot& slot = WakeSlot::ForThisThread();
  slot.Arm();
  slot.Wake();
  slot.Wait();  // returns at once
  SUCCEED();
}

TEST(WakeSlotTest, EachThreadHasItsOwnSlot) {
  WakeSlot* mine = &WakeSlot::ForThisThread();
  WakeSlot* other = nullptr;
  std::thread([&] { other = &WakeSlot::ForThisThread(); }).join();
  EXPECT_NE(mine, other);
  EXPECT_EQ(mine, &WakeSlot::ForThisThread());
}

TEST(WakeSlotTest, WhatTheWakerWroteIsSeenAfterTheWait) {
  std::string answer;
  WakeSlot* slot = nullptr;
  std::atomic<bool> armed{false};
  std::thread waiter([&] {
    slot = &WakeSlot::ForThisThread();
    slot->Arm();
    armed.store(true);
    slot->Wait();
    EXPECT_EQ(answer, "committed");
  });
  while (!armed.load()) std::this_thread::yield();
  answer = "committed";
  slot->Wake();
  waiter.join();
}

// A committer and a submitter hand 20,000 answers back and forth through their slots, as a
// group commit does call after call; each side sees every answer in order, and nothing hangs.
TEST(WakeSlotTest, SlotsAreReusedCallAfterCall) {
  constexpr int kRounds = 20'000;
  std::atomic<WakeSlot*> submitter_slot{nullptr};
  std::atomic<WakeSlot*> committer_slot{nullptr};
  int request = 0;
  int answer = 0;
  std::thread committer([&] {
    WakeSlot& mine = WakeSlot::ForThisThread();
    for (int i = 1; i <= kRounds; ++i) {
      mine.Arm();
      committer_slot.store(&mine);
      if (i == 1) {
        while (submitter_slot.load() == nullptr) std::this_thread::yield();
      } else {
        submitter_slot.load()->Wake();  // the previous answer
      }
      mine.Wait();
      ASSERT_EQ(request, i);
      answer = i;
    }
    submitter_slot.load()->Wake();
  });
  WakeSlot& mine = WakeSlot::ForThisThread();
  for (int i = 1; i <= kRounds; ++i) {
    mine.Arm();
    submitter_slot.store(&mine);
    while (committer_slot.load() == nullptr) std::this_thread::yield();
    request = i;
    // The committer armed its slot before it woke us (or before the first round).
    committer_slot.load()->Wake();
    mine.Wait();
    ASSERT_EQ(answer, i);
  }
  committer.join();
}

}  // namespace
}  // namespace abacus

#include "common/wake_slot.h"

#include "common/blocking_region.h"

namespace abacus {

WakeSlot& WakeSlot::ForThisThread() {
  thread_local WakeSlot slot;
  return slot;
}

void WakeSlot::Wait() {
  if (state_.load(std::memory_order_acquire) != 0) return;
  BlockingRegion waiting;
  // Returns once the word is no longer 0: a Wake before the wait is not lost, and early wakes
  // wait again.
  state_.wait(0, std::memory_order_acquire);
}

void WakeSlot::Wake() {
  state_.store(1, std::memory_order_release);
  state_.notify_one();
}

}  // namespace abacus

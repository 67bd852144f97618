#include "common/wake_slot.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/blocking_region.h"

namespace abacus {
namespace {

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, nullptr, nullptr, 0);
}

}  // namespace

WakeSlot& WakeSlot::ForThisThread() {
  thread_local WakeSlot slot;
  return slot;
}

void WakeSlot::Wait() {
  // FUTEX_WAIT sleeps only while the word is still 0, so a Wake between the load and the call
  // is not lost; EINTR and early wakes loop.
  if (state_.load(std::memory_order_acquire) != 0) return;
  BlockingRegion waiting;
  while (state_.load(std::memory_order_acquire) == 0) {
    Futex(&state_, FUTEX_WAIT_PRIVATE, 0);
  }
}

void WakeSlot::Wake() {
  state_.store(1, std::memory_order_release);
  Futex(&state_, FUTEX_WAKE_PRIVATE, 1);
}

}  // namespace abacus

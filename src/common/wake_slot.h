// WakeSlot: one thread sleeps until another hands it an answer, on C++20's atomic wait and
// notify (one futex call on each side on Linux). A mutex and condition variable take three (the
// waker notifies under the mutex, so the woken thread blocks once more on that mutex, and glibc
// then marks it contended, so its unlock wakes nobody with a syscall): on a group commit of 30
// waiters that is 60 needless syscalls and as many context switches, most of them on the
// committing thread.
//
//   WakeSlot& slot = WakeSlot::ForThisThread();
//   slot.Arm();                 // before the slot is handed to the waker
//   queue.push(&slot); ...
//   slot.Wait();                // returns once the waker called slot.Wake()
//
// Each thread owns one slot for its whole life (ForThisThread), so a waker's futex call that
// lands after the woken thread has returned finds the slot still there: at worst that thread's
// next Wait wakes once early and sleeps again. The slot is trivially destructible, so it stays
// usable while its thread exits. The answer itself can live on the waiter's stack: the waker
// writes it before Wake and touches it no more.
#pragma once

#include <atomic>
#include <cstdint>

namespace abacus {

class WakeSlot {
 public:
  // Returns the calling thread's slot.
  static WakeSlot& ForThisThread();

  // Makes the slot wait again; call before handing it to the waker.
  void Arm() { state_.store(0, std::memory_order_relaxed); }
  // Blocks until Wake; everything the waker wrote before Wake is visible after it.
  void Wait();
  // Wakes the thread in Wait (or lets its next Wait return at once). Call once per Arm.
  void Wake();

 private:
  WakeSlot() = default;
  std::atomic<uint32_t> state_{0};  // 0: armed, 1: woken
};

}  // namespace abacus

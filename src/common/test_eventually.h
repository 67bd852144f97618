// Eventually: the tests' way to wait for what other threads do, in real time, without
// asserting how long it took.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace abacus {

// Waits (real time) until `pred` holds; false after `limit`.
inline bool Eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds limit = std::chrono::milliseconds(15000)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred();
}

}  // namespace abacus

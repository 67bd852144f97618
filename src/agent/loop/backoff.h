// Backoff: how long the agent waits before calling an unreachable server again — exponential
// (0.1 s doubling to 5 s by default) with jitter, so that agents cut off together by a server
// restart do not all come back in the same instant.
#pragma once

#include <cstdint>
#include <random>

#include "common/clock.h"

namespace abacus::agent {

class Backoff {
 public:
  // `seed` 0 picks a random one.
  Backoff(Duration initial = std::chrono::milliseconds(100), Duration max = std::chrono::seconds(5),
          uint64_t seed = 0);

  // Returns the wait after one more consecutive failure: a uniform draw from [d/2, d] where d is
  // initial × 2^(failures so far), capped at max.
  Duration Next();
  // Forgets the failures (after a success).
  void Reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  Duration initial_, max_;
  int failures_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace abacus::agent

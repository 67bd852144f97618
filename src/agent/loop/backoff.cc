#include "agent/loop/backoff.h"

#include <algorithm>

namespace abacus::agent {

Backoff::Backoff(Duration initial, Duration max, uint64_t seed)
    : initial_(initial), max_(max), rng_(seed != 0 ? seed : std::random_device{}()) {}

Duration Backoff::Next() {
  Duration d = initial_;
  for (int i = 0; i < failures_ && d < max_; ++i) d *= 2;
  d = std::min(d, max_);
  ++failures_;
  std::uniform_int_distribution<int64_t> draw(d.count() / 2, d.count());
  return Duration(draw(rng_));
}

}  // namespace abacus::agent

// Identifiers for ledger objects: short, unique, prefixed by what they name ("wl-0qz81k2m7q").
#pragma once

#include <atomic>
#include <mutex>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/mutex.h"

namespace abacus {

class IdGenerator {
 public:
  virtual ~IdGenerator() = default;
  // Returns a new id "<prefix>-<suffix>"; never the same twice from one generator.
  virtual std::string Next(std::string_view prefix) = 0;
  // Tells the generator the largest id issued before it existed (a restart, an HA takeover),
  // so that a generator whose ids are ordered issues only larger ones. The default ignores it.
  virtual void Resume(std::string_view /*last_id*/) {}
};

// 10 random base-36 characters (~51 bits) from a per-thread CSPRNG-seeded engine.
class RandomIdGenerator final : public IdGenerator {
 public:
  std::string Next(std::string_view prefix) override;
};

// 10 base-36 characters that sort in issue order: 6 for the second (from 2020-01-01 UTC; good for
// 69 years), then 4 for a counter that starts each second at a random offset in its lower half
// (at least 839,808 ids a second; beyond that the generator borrows the next second). A store
// keyed by these ids appends at the end of its index instead of touching a random page per
// insert. Unique from one generator; a generator that Resumes after the largest id issued before
// it (the server does, from its ledger) only issues larger ones, whatever its clock says.
// Thread-safe.
class TimeOrderedIdGenerator final : public IdGenerator {
 public:
  std::string Next(std::string_view prefix) override;
  // Ids of another form (a RandomIdGenerator's, older servers') are ignored.
  void Resume(std::string_view last_id) override;

 private:
  Mutex mu_;
  int64_t second_ GUARDED_BY(mu_) = -1;
  uint32_t counter_ GUARDED_BY(mu_) = 0;
};

// Deterministic ids "<prefix>-000001", "<prefix>-000002", … for tests and the simulator.
class SequentialIdGenerator final : public IdGenerator {
 public:
  std::string Next(std::string_view prefix) override;

 private:
  std::atomic<uint64_t> next_{1};
};

// Returns true when `name` is a valid object name: 1–63 characters of [a-z0-9-_.],
// starting and ending with a letter or digit.
bool IsValidName(std::string_view name);

}  // namespace abacus

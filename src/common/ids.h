// Identifiers for ledger objects: short, random, prefixed by what they name ("wl-3k9x2m7q1a").
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace abacus {

class IdGenerator {
 public:
  virtual ~IdGenerator() = default;
  // Returns a new id "<prefix>-<suffix>"; never the same twice from one generator.
  virtual std::string Next(std::string_view prefix) = 0;
};

// 10 random base-36 characters (~51 bits) from a per-thread CSPRNG-seeded engine.
class RandomIdGenerator final : public IdGenerator {
 public:
  std::string Next(std::string_view prefix) override;
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

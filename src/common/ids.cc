#include "common/ids.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "common/mutex.h"

namespace abacus {
namespace {

constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";

// The calling thread's engine, seeded once from the system's random source.
std::mt19937_64& Engine() {
  thread_local std::mt19937_64 engine([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }());
  return engine;
}

}  // namespace

std::string RandomIdGenerator::Next(std::string_view prefix) {
  std::mt19937_64& engine = Engine();
  std::string id(prefix);
  id += '-';
  uint64_t bits = engine();
  for (int i = 0; i < 10; ++i) {
    id += kAlphabet[bits % 36];
    bits /= 36;
  }
  return id;
}

std::string TimeOrderedIdGenerator::Next(std::string_view prefix) {
  constexpr int64_t kEpoch = 1577836800;  // 2020-01-01T00:00:00Z
  constexpr uint32_t kCounterSpace = 36 * 36 * 36 * 36;
  std::mt19937_64& engine = Engine();
  int64_t second = 0;
  uint32_t counter = 0;
  {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count() - kEpoch;
    MutexLock lock(mu_);
    if (now > second_) {
      second_ = now;
      counter_ = static_cast<uint32_t>(engine() % (kCounterSpace / 2));
    } else if (counter_ + 1 >= kCounterSpace) {
      ++second_;  // this second's ids are spent: borrow the next one (ids keep growing)
      counter_ = static_cast<uint32_t>(engine() % (kCounterSpace / 2));
    } else {
      ++counter_;  // the clock may step back: ids still grow
    }
    second = second_;
    counter = counter_;
  }
  char suffix[10];
  uint64_t s = static_cast<uint64_t>(std::max<int64_t>(second, 0));
  for (int i = 5; i >= 0; --i, s /= 36) suffix[i] = kAlphabet[s % 36];
  for (int i = 9; i >= 6; --i, counter /= 36) suffix[i] = kAlphabet[counter % 36];
  std::string id(prefix);
  id += '-';
  id.append(suffix, sizeof suffix);
  return id;
}

void TimeOrderedIdGenerator::Resume(std::string_view last_id) {
  auto dash = last_id.rfind('-');
  if (dash == std::string_view::npos || last_id.size() - dash - 1 != 10) return;
  int64_t second = 0;
  uint32_t counter = 0;
  for (size_t i = dash + 1; i < last_id.size(); ++i) {
    char c = last_id[i];
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : -1;
    if (digit < 0) return;
    if (i < dash + 7) {
      second = second * 36 + digit;
    } else {
      counter = counter * 36 + static_cast<uint32_t>(digit);
    }
  }
  MutexLock lock(mu_);
  if (second > second_ || (second == second_ && counter > counter_)) {
    second_ = second;
    counter_ = counter;
  }
}

std::string SequentialIdGenerator::Next(std::string_view prefix) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%06llu",
                static_cast<unsigned long long>(next_.fetch_add(1, std::memory_order_relaxed)));
  std::string id(prefix);
  id += '-';
  id += buf;
  return id;
}

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace abacus

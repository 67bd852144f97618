#include "common/ids.h"

#include <cstdio>
#include <random>

namespace abacus {

std::string RandomIdGenerator::Next(std::string_view prefix) {
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  thread_local std::mt19937_64 engine([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }());
  std::string id(prefix);
  id += '-';
  uint64_t bits = engine();
  for (int i = 0; i < 10; ++i) {
    id += kAlphabet[bits % 36];
    bits /= 36;
  }
  return id;
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

// Buckets: items (dense ids) grouped by a small integer key, with O(1) move between keys and
// ordered iteration by key. The free-capacity indexes of the scheduler are made of these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace abacus::sched {

class Buckets {
 public:
  // `max_key` is the largest key used; ids are 0..num_ids-1; every id starts absent.
  Buckets(int32_t max_key, int32_t num_ids)
      : items_(static_cast<size_t>(max_key) + 1), key_(num_ids, -1), pos_(num_ids, -1) {}

  // Places `id` under `key` (moving it if present). `key` < 0 removes it.
  void Set(int32_t id, int32_t key) {
    if (key_[id] == key) return;
    if (key_[id] >= 0) {
      auto& old = items_[key_[id]];
      int32_t last = old.back();
      old[pos_[id]] = last;
      pos_[last] = pos_[id];
      old.pop_back();
    }
    key_[id] = key;
    if (key >= 0) {
      if (key > hi_used_) hi_used_ = key;
      pos_[id] = static_cast<int32_t>(items_[key].size());
      items_[key].push_back(id);
    } else {
      pos_[id] = -1;
    }
  }
  int32_t KeyOf(int32_t id) const { return key_[id]; }
  int32_t max_key() const { return static_cast<int32_t>(items_.size()) - 1; }
  const std::vector<int32_t>& At(int32_t key) const { return items_[key]; }

  // Visits ids with key in [lo, hi], keys ascending (or descending); stops when `visit`
  // returns true. Returns whether it stopped early.
  template <typename F>
  bool Visit(int32_t lo, int32_t hi, bool ascending, F&& visit) const {
    if (lo < 0) lo = 0;
    if (hi > hi_used_) hi = hi_used_;  // keys above were never used: nothing to visit there
    if (ascending) {
      for (int32_t k = lo; k <= hi; ++k) {
        for (int32_t id : items_[k]) {
          if (visit(id)) return true;
        }
      }
    } else {
      for (int32_t k = hi; k >= lo; --k) {
        for (int32_t id : items_[k]) {
          if (visit(id)) return true;
        }
      }
    }
    return false;
  }

 private:
  std::vector<std::vector<int32_t>> items_;
  std::vector<int32_t> key_;
  std::vector<int32_t> pos_;
  int32_t hi_used_ = -1;  // the largest key ever set (Visit skips the empty keys above it)
};

}  // namespace abacus::sched

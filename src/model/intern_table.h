// A process-wide table that gives each distinct name a small dense id (flavors, extended
// resources): lookups share a lock, the first sight of a name takes it exclusively; entries keep
// their addresses (a deque) and are never removed.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>

#include "common/check.h"
#include "common/mutex.h"

namespace abacus::model_internal {

template <typename T, typename Id>
class InternTable {
 public:
  // Returns the id of `name`, adding `value` under it on first sight; `full` is the check's message
  // when the ids ran out.
  Id Intern(const std::string& name, const T& value, const char* full) {
    {
      ReaderLock lock(mu_);
      auto it = ids_.find(name);
      if (it != ids_.end()) return it->second;
    }
    WriterLock lock(mu_);
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    ABACUS_CHECK(items_.size() < 65535, full);
    Id id = static_cast<Id>(items_.size());
    items_.push_back(value);
    ids_.emplace(name, id);
    return id;
  }
  // Returns the entry of `id`; `unknown` is the check's message for an id never handed out.
  const T& At(Id id, const char* unknown) const {
    ReaderLock lock(mu_);
    ABACUS_CHECK(id < items_.size(), unknown);
    return items_[id];
  }
  // How many entries there are.
  size_t size() const {
    ReaderLock lock(mu_);
    return items_.size();
  }

 private:
  mutable SharedMutex mu_;
  std::deque<T> items_ GUARDED_BY(mu_);
  std::unordered_map<std::string, Id> ids_ GUARDED_BY(mu_);
};

}  // namespace abacus::model_internal

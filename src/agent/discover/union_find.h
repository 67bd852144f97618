// A small union-find over string keys: devices joined by active links end up in one
// interconnect domain (NVLink, HCCS).
#pragma once

#include <map>
#include <string>

namespace abacus::agent {

class UnionFind {
 public:
  // Returns the representative of `key`, adding it when new.
  std::string Find(const std::string& key) {
    auto it = parent_.find(key);
    if (it == parent_.end()) {
      parent_[key] = key;
      return key;
    }
    if (it->second == key) return key;
    std::string root = Find(it->second);
    parent_[key] = root;
    return root;
  }
  // Joins the sets of `a` and `b` (the smaller key becomes the representative).
  void Union(const std::string& a, const std::string& b) {
    std::string ra = Find(a), rb = Find(b);
    if (ra == rb) return;
    if (rb < ra) std::swap(ra, rb);
    parent_[rb] = ra;
  }

 private:
  std::map<std::string, std::string> parent_;
};

}  // namespace abacus::agent

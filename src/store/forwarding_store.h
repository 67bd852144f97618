// ForwardingStore: a Store that passes every call on to another store, owned or borrowed. A
// wrapper derives from it and overrides only what it changes: FencedStore (a fence on every
// commit), the server's StoreViaCommitter (commits through the group committer), test doubles
// (a gate, a failing lease).
//
//   class CountingStore final : public ForwardingStore {
//    public:
//     using ForwardingStore::ForwardingStore;
//     void CommitGroup(...) override { ++commits; ForwardingStore::CommitGroup(...); }
//   };
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace abacus {

class ForwardingStore : public Store {
 public:
  // Forwards to `inner`, which must outlive this store.
  explicit ForwardingStore(Store& inner) : inner_(inner) {}
  // Forwards to `owned`, closed with this store.
  explicit ForwardingStore(std::unique_ptr<Store> owned) : owned_(std::move(owned)), inner_(*owned_) {}

  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override {
    inner_.CommitGroup(batches, results, statuses);
  }
  Result<std::optional<ObjectRecord>> Get(std::string_view kind, std::string_view key) override {
    return inner_.Get(kind, key);
  }
  Result<std::vector<ObjectRecord>> List(std::string_view kind) override { return inner_.List(kind); }
  Result<int64_t> Count(std::string_view kind) override { return inner_.Count(kind); }
  Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key, int64_t after_seq,
                                          size_t limit) override {
    return inner_.Events(kind, key, after_seq, limit);
  }
  Result<std::vector<JournalRecord>> Journal(std::string_view stream, int64_t after_seq, size_t limit) override {
    return inner_.Journal(stream, after_seq, limit);
  }
  Result<std::optional<std::string>> GetMeta(std::string_view key) override { return inner_.GetMeta(key); }
  Result<LeaseState> TryAcquireLease(std::string_view name, std::string_view holder, std::string_view address,
                                     Duration ttl) override {
    return inner_.TryAcquireLease(name, holder, address, ttl);
  }
  Status ReleaseLease(std::string_view name, std::string_view holder) override {
    return inner_.ReleaseLease(name, holder);
  }
  std::string Describe() const override { return inner_.Describe(); }
  StoreCopyAccess* copy_access() override { return inner_.copy_access(); }

 private:
  std::unique_ptr<Store> owned_;
  Store& inner_;
};

}  // namespace abacus

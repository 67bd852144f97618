// FencedStore: a Store whose every commit carries one lease fence (store/lease.h), so that all a
// leader writes — scheduling and controller decisions, node liveness, submissions, audit — is
// refused once another server has taken the lease over. Reads and the lease calls pass through.
#pragma once

#include <memory>

#include "store/store.h"

namespace abacus {

class FencedStore final : public Store {
 public:
  // Wraps `base` (owned); every batch without a fence of its own gets `fence`.
  FencedStore(std::unique_ptr<Store> base, LeaseFence fence);

  // Commits copies of the batches with the fence added (a batch that has one keeps it). A batch
  // refused by the fence reports Unavailable ("this server no longer holds the lease ...; retry"):
  // for the client of a deposed leader the write is worth retrying on the new one (HTTP 503),
  // unlike a FailedPrecondition of the request itself (409).
  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override;
  Result<std::optional<ObjectRecord>> Get(std::string_view kind, std::string_view key) override {
    return base_->Get(kind, key);
  }
  Result<std::vector<ObjectRecord>> List(std::string_view kind) override { return base_->List(kind); }
  Result<int64_t> Count(std::string_view kind) override { return base_->Count(kind); }
  Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key, int64_t after_seq,
                                          size_t limit) override {
    return base_->Events(kind, key, after_seq, limit);
  }
  Result<std::vector<JournalRecord>> Journal(std::string_view stream, int64_t after_seq, size_t limit) override {
    return base_->Journal(stream, after_seq, limit);
  }
  Result<std::optional<std::string>> GetMeta(std::string_view key) override { return base_->GetMeta(key); }
  Result<LeaseState> TryAcquireLease(std::string_view name, std::string_view holder, std::string_view address,
                                     Duration ttl) override {
    return base_->TryAcquireLease(name, holder, address, ttl);
  }
  Status ReleaseLease(std::string_view name, std::string_view holder) override {
    return base_->ReleaseLease(name, holder);
  }
  std::string Describe() const override { return base_->Describe(); }

  const LeaseFence& fence() const { return fence_; }

 private:
  std::unique_ptr<Store> base_;
  const LeaseFence fence_;
};

}  // namespace abacus

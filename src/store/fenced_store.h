// FencedStore: a Store whose every commit carries one lease fence (store/lease.h), so that all a
// leader writes — scheduling and controller decisions, node liveness, submissions, audit — is
// refused once another server has taken the lease over. Reads and the lease calls pass through.
#pragma once

#include <memory>

#include "store/forwarding_store.h"
#include "store/store.h"

namespace abacus {

class FencedStore final : public ForwardingStore {
 public:
  // Wraps `base` (owned); every batch without a fence of its own gets `fence`.
  FencedStore(std::unique_ptr<Store> base, LeaseFence fence);

  // Commits copies of the batches with the fence added (a batch that has one keeps it). A batch
  // refused by the fence reports Unavailable ("this server no longer holds the lease ...; retry"):
  // for the client of a deposed leader the write is worth retrying on the new one (HTTP 503),
  // unlike a FailedPrecondition of the request itself (409).
  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override;
  // None: a whole-store copy would write past the fence.
  StoreCopyAccess* copy_access() override { return nullptr; }

  const LeaseFence& fence() const { return fence_; }

 private:
  const LeaseFence fence_;
};

}  // namespace abacus

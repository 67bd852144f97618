#include "store/fenced_store.h"

#include <vector>

namespace abacus {

FencedStore::FencedStore(std::unique_ptr<Store> base, LeaseFence fence)
    : ForwardingStore(std::move(base)), fence_(std::move(fence)) {}

void FencedStore::CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                              std::span<Status> statuses) {
  std::vector<WriteBatch> fenced;
  fenced.reserve(batches.size());
  std::vector<const WriteBatch*> group;
  group.reserve(batches.size());
  for (const WriteBatch* batch : batches) {
    if (batch->fence()) {
      group.push_back(batch);
      continue;
    }
    fenced.push_back(*batch);
    fenced.back().Fence(fence_);
    group.push_back(&fenced.back());  // reserve() keeps the address stable
  }
  ForwardingStore::CommitGroup(group, results, statuses);
  for (Status& s : statuses) {
    if (s.code() == StatusCode::kFailedPrecondition && s.message().starts_with("fenced:")) {
      s = Unavailable("this server no longer holds the scheduling lease (" + s.message() + "); retry on the leader");
    }
  }
}

}  // namespace abacus

// StoreViaCommitter: a Store whose writes go through the server's one committer (server/committer.h)
// once one is attached, so that governance's own writes (users, tokens) share the request path's
// commits instead of competing with them for SQLite's single writer. Writes made on the
// committer's own thread (the audit chain it seals, its housekeeping) go straight to the store.
// Reads and the lease calls go to the store.
#pragma once

#include <atomic>

#include "server/committer.h"
#include "store/forwarding_store.h"
#include "store/store.h"

namespace abacus::server {

class StoreViaCommitter final : public ForwardingStore {
 public:
  explicit StoreViaCommitter(Store& base) : ForwardingStore(base) {}
  // From now on, commits go through `committer` (null: straight to the store). The committer
  // must outlive its use here.
  void Attach(Committer* committer) { committer_.store(committer); }

  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override {
    Committer* c = committer_.load();
    if (c == nullptr || c->OnCommitterThread()) return ForwardingStore::CommitGroup(batches, results, statuses);
    for (size_t i = 0; i < batches.size(); ++i) {
      statuses[i] = c->Commit(*batches[i], {}, i < results.size() ? results[i] : nullptr);
    }
  }
  // None: a whole-store copy would write past the committer.
  StoreCopyAccess* copy_access() override { return nullptr; }

 private:
  std::atomic<Committer*> committer_{nullptr};
};

}  // namespace abacus::server

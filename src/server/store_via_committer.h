// StoreViaCommitter: a Store whose writes go through the server's one committer (server/committer.h)
// once one is attached, so that governance's own writes (users, tokens) share the request path's
// commits instead of competing with them for SQLite's single writer. Writes made on the
// committer's own thread (the audit chain it seals, its housekeeping) go straight to the store.
// Reads go to the store.
#pragma once

#include <atomic>

#include "server/committer.h"
#include "store/store.h"

namespace abacus::server {

class StoreViaCommitter final : public Store {
 public:
  explicit StoreViaCommitter(Store& base) : base_(base) {}
  // From now on, commits go through `committer` (null: straight to the store). The committer
  // must outlive its use here.
  void Attach(Committer* committer) { committer_.store(committer); }

  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override {
    Committer* c = committer_.load();
    if (c == nullptr || c->OnCommitterThread()) return base_.CommitGroup(batches, results, statuses);
    for (size_t i = 0; i < batches.size(); ++i) {
      statuses[i] = c->Commit(*batches[i], {}, i < results.size() ? results[i] : nullptr);
    }
  }
  Result<std::optional<ObjectRecord>> Get(std::string_view kind, std::string_view key) override {
    return base_.Get(kind, key);
  }
  Result<std::vector<ObjectRecord>> List(std::string_view kind) override { return base_.List(kind); }
  Result<int64_t> Count(std::string_view kind) override { return base_.Count(kind); }
  Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key, int64_t after_seq,
                                          size_t limit) override {
    return base_.Events(kind, key, after_seq, limit);
  }
  Result<std::vector<JournalRecord>> Journal(std::string_view stream, int64_t after_seq, size_t limit) override {
    return base_.Journal(stream, after_seq, limit);
  }
  Result<std::optional<std::string>> GetMeta(std::string_view key) override { return base_.GetMeta(key); }
  std::string Describe() const override { return base_.Describe(); }

 private:
  Store& base_;
  std::atomic<Committer*> committer_{nullptr};
};

}  // namespace abacus::server

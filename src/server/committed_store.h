// CommittedStore: a Store whose writes join the server's group commits (GroupCommitter) once one
// is attached, so that a writer of its own (the audit chain) shares the fsyncs of the request
// path instead of competing with it for SQLite's single writer. Reads go to the store.
#pragma once

#include <atomic>

#include "store/group_commit.h"
#include "store/store.h"

namespace abacus::server {

class CommittedStore final : public Store {
 public:
  explicit CommittedStore(Store& base) : base_(base) {}
  // From now on, commits go through `committer` (null: straight to the store). The committer
  // must outlive its use here.
  void Attach(GroupCommitter* committer) { committer_.store(committer); }

  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override {
    GroupCommitter* c = committer_.load();
    if (c == nullptr) return base_.CommitGroup(batches, results, statuses);
    for (size_t i = 0; i < batches.size(); ++i) {
      statuses[i] = c->Submit(*batches[i], i < results.size() ? results[i] : nullptr);
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
  std::atomic<GroupCommitter*> committer_{nullptr};
};

}  // namespace abacus::server

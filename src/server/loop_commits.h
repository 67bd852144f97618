// LoopCommits: the scheduling loop's own commits in flight (issue 22.3: no synchronous fsync on
// the loop). The loop makes working copies of the records it changes, stages them in a batch,
// hands the batch to the committer (Committer::Start) and goes on with its turn. Each commit
// settles later on the loop thread, oldest first: its continuation swaps the copies into the
// ledger and publishes them, or, when the commit failed, forgets them (the ledger still holds
// what is durable). A step that is about to make a working copy of a record first settles the
// commits that change it (SettleTouching), or all of them (SettleAll): no copy is ever made from
// a record whose change is still in flight, so nothing is built on a change that may fail. When
// one fails, every commit still in flight is settled too, and then the failure hook runs once
// (it reloads what the loop keeps in memory beside the records: the usage intervals).
//
//   std::vector<std::string> ids = RecordsWrittenBy(batch);
//   commits.Add(committer.Start(std::move(batch), {}, wake), ids, [&](const Committer::Async& c) {
//     if (c.status.ok()) ...swap the copy in, publish...;
//   });
//   commits.SettleDone();        // each turn: the ones done, without waiting
//   commits.SettleTouching(RecordCommitId(kWorkloadKind, id));  // before a working copy of it
//   commits.SettleAll();         // before a cycle's snapshot, a command, a stop
//
// Loop thread only: no lock. A continuation may add commits (a command's next step) but must
// not settle: that would wait inside a settle and run later continuations before it ends.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/committer.h"

namespace abacus::server {

// The id a stored record is known by among the loop's commits in flight: its kind and key
// ("workload/w-1", "node/gpu-3", "idempotency/…").
inline std::string RecordCommitId(std::string_view kind, std::string_view key) {
  std::string id;
  id.reserve(kind.size() + 1 + key.size());
  id.append(kind).append("/").append(key);
  return id;
}

// The records `batch` writes (each Put and Delete, by RecordCommitId): what a commit of it
// changes. Events are not records.
std::vector<std::string> RecordsWrittenBy(const WriteBatch& batch);

class LoopCommits {
 public:
  using Settle = std::function<void(const Committer::Async& done)>;

  // Runs after a failed commit, once every commit in flight with it has settled.
  void SetAfterFailure(std::function<void()> hook) { after_failure_ = std::move(hook); }

  // Adds `commit`, which changes the records `ids` (RecordCommitId; RecordsWrittenBy its batch);
  // `settle` runs on the loop thread once it is
  // done and every commit added before it has settled.
  void Add(std::shared_ptr<const Committer::Async> commit, std::vector<std::string> ids, Settle settle);
  // Settles the commits at the front that are done, in order; never waits.
  void SettleDone();
  // Waits for every commit in flight and settles them, in order.
  void SettleAll();
  // Waits for and settles the commits up to the last one that changes record `id` (RecordCommitId;
  // none: returns at once).
  void SettleTouching(const std::string& id);
  // True when a commit in flight changes record `id`.
  bool Touches(const std::string& id) const { return touching_.count(id) != 0; }
  // Commits in flight.
  size_t size() const { return entries_.size(); }
  // Commits settled so far, and of those the ones that were not done yet when the loop needed
  // them (it waited); readable from any thread (/metrics).
  int64_t settled() const { return settled_.load(std::memory_order_relaxed); }
  int64_t waited() const { return waited_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::shared_ptr<const Committer::Async> commit;
    std::vector<std::string> ids;
    Settle settle;
  };
  // Waits for the oldest commit and settles it.
  void SettleFront();
  // After a failure: settles everything in flight, then runs the hook.
  void AfterSettling();

  std::deque<Entry> entries_;
  std::unordered_map<std::string, int> touching_;  // record id -> commits in flight changing it
  bool failed_ = false;                             // a commit failed since the hook last ran
  bool settling_ = false;                           // a continuation runs (it must not settle)
  std::function<void()> after_failure_;
  std::atomic<int64_t> settled_{0};
  std::atomic<int64_t> waited_{0};
};

}  // namespace abacus::server

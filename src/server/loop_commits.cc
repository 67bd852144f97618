#include "server/loop_commits.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "common/check.h"

namespace abacus::server {

std::vector<std::string> RecordsWrittenBy(const WriteBatch& batch) {
  std::vector<std::string> ids;
  ids.reserve(batch.ops().size());
  for (const WriteOp& op : batch.ops()) {
    if (const auto* put = std::get_if<PutOp>(&op)) {
      ids.push_back(RecordCommitId(put->kind, put->key));
    } else if (const auto* del = std::get_if<DeleteOp>(&op)) {
      ids.push_back(RecordCommitId(del->kind, del->key));
    }
  }
  return ids;
}

void LoopCommits::Add(std::shared_ptr<const Committer::Async> commit, std::vector<std::string> ids, Settle settle) {
  for (const std::string& id : ids) touching_[id]++;
  entries_.push_back(Entry{std::move(commit), std::move(ids), std::move(settle)});
}

void LoopCommits::SettleFront() {
  Entry e = std::move(entries_.front());
  entries_.pop_front();
  if (!e.commit->ready()) {
    waited_.fetch_add(1, std::memory_order_relaxed);
    e.commit->Wait();
  }
  settled_.fetch_add(1, std::memory_order_relaxed);
  for (const std::string& id : e.ids) {
    auto it = touching_.find(id);
    if (it != touching_.end() && --it->second <= 0) touching_.erase(it);
  }
  if (!e.commit->status.ok()) failed_ = true;
  if (e.settle) {
    settling_ = true;
    e.settle(*e.commit);
    settling_ = false;
  }
}

void LoopCommits::AfterSettling() {
  if (!failed_) return;
  while (!entries_.empty()) SettleFront();
  failed_ = false;
  if (after_failure_) after_failure_();
}

void LoopCommits::SettleDone() {
  ABACUS_CHECK(!settling_, "a commit's continuation settled the loop's commits (it must not wait)");
  while (!entries_.empty() && entries_.front().commit->ready()) SettleFront();
  AfterSettling();
}

void LoopCommits::SettleAll() {
  ABACUS_CHECK(!settling_, "a commit's continuation settled the loop's commits (it must not wait)");
  while (!entries_.empty()) SettleFront();
  AfterSettling();
}

void LoopCommits::SettleTouching(const std::string& id) {
  ABACUS_CHECK(!settling_, "a commit's continuation settled the loop's commits (it must not wait)");
  if (!Touches(id)) return;
  size_t last = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (std::find(entries_[i].ids.begin(), entries_[i].ids.end(), id) != entries_[i].ids.end()) last = i + 1;
  }
  for (size_t i = 0; i < last; ++i) SettleFront();
  AfterSettling();
}

}  // namespace abacus::server

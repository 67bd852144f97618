// QuotaState: per-queue usage against nominal quota, borrowing within the cohort tree and
// lending limits. Quantities are exact integers (millicores, bytes, milli-devices).
//
// For a queue q and resource r: nominal N, borrowing limit B (absent = unlimited),
// lending limit L (absent = N). The part G = N - L is guaranteed to q and never lent; the
// rest (N - G) goes into the lending pool of q's cohort tree. q's use of the pool is
// max(0, U - G) (+ all of its best-effort use). A request R is
//   Fit     when U + R <= N and the pool has room for q's extra pool use;
//   Preempt when U + R <= N but the pool is short: q's lent quota must be reclaimed;
//   Borrow  when N < U + R <= N + B, the pool has room and no ancestor cohort exceeds its own
//           borrowing limit;
//   NoFit   otherwise (over N + B, or the pool is short while borrowing).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/resources.h"
#include "sched/types.h"

namespace abacus::sched {

// Numbers behind a quota decision on one resource, for explain.
struct QuotaDetail {
  ResourceKey resource;
  int64_t needed = 0;
  int64_t nominal = 0;
  int64_t used = 0;
  std::optional<int64_t> borrowing_limit;
  int64_t borrowable = 0;  // free in the cohort's lending pool
  std::vector<std::pair<std::string, int64_t>> borrowed_by;  // queues above nominal, by amount
  // Set when an ancestor cohort's own borrowing limit is what blocks.
  std::string limiting_cohort;
  int64_t cohort_borrowing_limit = 0;
  int64_t cohort_borrowed = 0;  // what the cohort's subtree borrows now
  // Of `borrowable`, the part that is the queue's own unused lendable nominal quota.
  int64_t own_idle = 0;
  // Queues of the cohort tree whose lending limit keeps nominal quota back: name, lending limit, nominal.
  std::vector<std::tuple<std::string, int64_t, int64_t>> lending_limited;
  bool in_cohort = false;
};

struct QuotaCheck {
  FlavorMode mode = FlavorMode::kFit;
  // The resource that decided the mode (when not a plain fit) and the amount asked of it;
  // QuotaState::Detail turns it into numbers for explain only when needed.
  std::optional<ResourceKey> shortage;
  int64_t needed = 0;
  CohortIndex limiting_cohort = kNone;  // an ancestor cohort whose borrowing limit blocks
  // It would borrow, but the workload is non-preemptible: refused (CheckWorkload).
  bool borrow_refused = false;
};

class QuotaState {
 public:
  QuotaState(const std::vector<QueueInfo>& queues, const std::vector<CohortInfo>& cohorts);

  // Classifies `request` for queue `q`; best-effort (`borrowed_only`) work may only borrow.
  QuotaCheck Check(QueueIndex q, const ResourceVector& request, bool borrowed_only) const;
  // Records `usage` as held by queue `q`.
  void Add(QueueIndex q, const ResourceVector& usage, bool borrowed_only);
  // Returns `usage` held by queue `q`.
  void Remove(QueueIndex q, const ResourceVector& usage, bool borrowed_only);

  // Returns true when queue `q` uses more than its nominal quota of `r` (or holds best-effort
  // work using `r`): its work there runs on borrowed capacity.
  bool IsBorrowing(QueueIndex q, ResourceKey r) const;
  // Returns true when `q`'s regular (not best-effort) use of `r` is above its nominal quota.
  bool IsOverNominal(QueueIndex q, ResourceKey r) const;
  // True when `r` is limited for `q` (the queue lists it, or it is a device flavor).
  bool Limits(QueueIndex q, ResourceKey r) const;
  // Returns the resources queue `q` limits with their nominal amounts, in listed order.
  const std::vector<QuotaInfo>& quotas(QueueIndex q) const { return queues_[q].quotas; }
  // Returns queue `q` as given.
  const QueueInfo& queue(QueueIndex q) const { return queues_[q]; }
  int64_t used(QueueIndex q, ResourceKey r) const { return usage_[q].Get(r); }
  const ResourceVector& usage(QueueIndex q) const { return usage_[q]; }
  int64_t nominal(QueueIndex q, ResourceKey r) const;
  // Returns the free amount of `r` in the lending pool of `q`'s cohort tree.
  int64_t PoolFree(QueueIndex q, ResourceKey r) const;
  // Returns the numbers behind a decision on `r` for queue `q` asking `needed`.
  QuotaDetail Detail(QueueIndex q, ResourceKey r, int64_t needed,
                     CohortIndex limiting_cohort = kNone) const;
  // Returns the most of `r` queue `q` could ever hold with nothing else running: its nominal quota
  // plus what it may borrow (capped by its borrowing limit and by what the other queues of its
  // cohort tree can lend at most); `how` says which ("nominal 16 + borrowing limit 8").
  // INT64_MAX when `r` is not limited for `q`.
  int64_t MostEver(QueueIndex q, ResourceKey r, std::string* how) const;
  // Returns the root cohort of `q`, or kNone.
  CohortIndex Root(QueueIndex q) const { return root_of_queue_[q]; }
  // Queues sharing `q`'s cohort tree (q included).
  const std::vector<QueueIndex>& TreeQueues(QueueIndex q) const;

 private:
  const QuotaInfo* Entry(QueueIndex q, ResourceKey r) const;
  int64_t Guaranteed(const QuotaInfo& e) const;
  int64_t PoolUse(QueueIndex q, ResourceKey r, int64_t used, int64_t best_effort) const;

  std::vector<QueueInfo> queues_;
  std::vector<CohortInfo> cohorts_;
  std::vector<ResourceVector> usage_;       // all admitted use per queue
  std::vector<ResourceVector> best_effort_; // the best-effort part of usage_
  std::vector<CohortIndex> root_of_queue_;
  std::vector<std::vector<QueueIndex>> tree_queues_;  // per root cohort
  std::vector<std::vector<CohortIndex>> ancestors_;   // per queue: its cohort, parent, …, root
  std::vector<ResourceVector> pool_size_;   // per cohort: lendable amount in its subtree
  std::vector<ResourceVector> pool_used_;   // per cohort: pool use in its subtree
  std::vector<std::vector<QueueIndex>> lone_lists_;
};

// The quota rule for workload `w` asking `usage` in its queue: QuotaState::Check, and
// non-preemptible work never borrows — borrowed quota must stay reclaimable by its owner, and
// nothing could reclaim it from work that cannot be preempted (nominal quota is guaranteed).
// Its Borrow becomes NoFit with `borrow_refused`. The cycle and the victim search both ask it.
QuotaCheck CheckWorkload(const QuotaState& quota, const WorkloadInfo& w, const ResourceVector& usage);

}  // namespace abacus::sched

// UsageSync: keeps metering in step with the workload records (issue 22.1: usage sync, one
// room). Every task that holds an allocation has one open usage interval (src/meter/), staged
// into the same write batch as the workload transition that opens or closes it, so after a
// crash records and usage agree exactly; the fair share over time (FairShareBook) counts the
// same intervals. Loop thread only, except the fair share book (its own lock).
//
//   ABACUS_ASSIGN_OR_RETURN(auto sync, UsageSync::Open(store, clock, ledger, half_life));
//   sync->Stage(before, after, batch, now);   // in the transition's batch
//   if (!committed) sync->CommitFailed();
#pragma once

#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "meter/usage_ledger.h"
#include "server/fair_share_book.h"
#include "server/ledger.h"
#include "store/store.h"

namespace abacus::server {

class UsageSync {
 public:
  // Loads the usage ledger from `store`, closes the intervals no record holds any more and opens
  // those missing for held allocations (committed at once: the records are the truth), then
  // counts the fair share over time from what is stored. `ledger` (the records, their nodes) is
  // read on the loop thread only and must outlive it.
  static Result<std::unique_ptr<UsageSync>> Open(Store& store, const Clock& clock, const Ledger& ledger,
                                                 Duration fair_share_half_life);

  // Stages into `batch` the intervals the change of a workload from `before` (null: none) to
  // `after` closes (allocations it no longer holds, with the reason it ended) and opens (new
  // allocations, from its admission), at `now`. `ended` (optional): its tasks that had ended
  // before the change removed them (a BatchJob's slot released after its task succeeded; the
  // tasks of an attempt a requeue or retry ended), placed as in `before`'s attempt: when each
  // interval closes (its task's end as far as known, desired_tasks.h EndSeen) and, while the
  // workload holds on, with what reason.
  void Stage(const WorkloadRecord* before, const WorkloadRecord& after, WriteBatch& batch, Time now,
             const std::vector<PlacementRecord>* ended = nullptr);
  // A batch Stage staged into was not committed: what was staged and counted is undone by
  // reloading from the store.
  void CommitFailed();

  // The fair share over time the scheduling cycles and `abacus get shares` read.
  FairShareBook& shares() { return shares_; }
  const FairShareBook& shares() const { return shares_; }

 private:
  UsageSync(Store& store, const Ledger& ledger, Duration fair_share_half_life)
      : store_(store), ledger_(ledger), shares_(fair_share_half_life) {}
  // The reconciliation of Open (the fair share book is counted from the store after it).
  Status Reconcile(Time now);

  Store& store_;
  const Ledger& ledger_;
  std::unique_ptr<meter::UsageLedger> usage_;
  FairShareBook shares_;
};

}  // namespace abacus::server

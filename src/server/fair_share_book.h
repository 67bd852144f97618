// FairShareBook: the server's fair-share usage (sched/fair_share.h, docs/scheduler.md "Fair share
// over time") kept from the usage ledger, no time-series database: rebuilt from every stored
// usage interval at start (so it survives a restart), then counted as intervals open and close
// (O(1) each), read by every scheduling cycle in O(queues). Safe to call from several threads.
#pragma once

#include <mutex>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "meter/usage.h"
#include "sched/fair_share.h"
#include "sched/scheduler.h"

namespace abacus {
class Store;
}  // namespace abacus

namespace abacus::server {

class FairShareBook {
 public:
  explicit FairShareBook(Duration half_life) : half_life_(half_life), history_(half_life) {}

  // The half-life it was made with (fixed).
  Duration half_life() const { return half_life_; }
  // Replaces what is counted with every usage interval stored in `store` (O(history)); Internal
  // naming a bad document.
  Status Rebuild(Store& store);
  // Counts interval `iv` as it is now: open from its start, or closed over [start, end).
  void Count(const meter::UsageInterval& iv);
  // Stops counting open interval `iv` at `end`.
  void Close(const meter::UsageInterval& iv, Time end);
  // Sets snapshot->fair_share at snapshot->now (cleared when the half-life is 0: fair share off).
  void Fill(sched::Snapshot* snapshot) const;
  // Returns the share of each queue of `tenancy` (a snapshot with queues, cohorts and flavor
  // weights) at `now`, whatever the half-life.
  std::vector<sched::QueueShare> Shares(const sched::Snapshot& tenancy, Time now) const;

 private:
  const Duration half_life_;
  mutable Mutex mu_;
  sched::UsageHistory history_ GUARDED_BY(mu_);
};

}  // namespace abacus::server

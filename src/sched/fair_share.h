// Fair share that remembers (issue 26; Slurm's PriorityDecayHalfLife and sshare's fair-share
// factor). One copy of the rule for the server, the event simulator and scenario files.
//
//   usage    device-seconds per queue and flavor; a second used `a` ago counts 2^(-a/H) (H the
//            half-life; H = 0: usage is forgotten at once). Weighted per flavor like DRF
//            (flavor weight 1000 = 1), so an H100-second counts more than a T4-second.
//   share    weight / Σ weights of the queue's cohort siblings (queues with the same cohort; a
//            queue without a cohort is alone: share 1).
//   factor   2^(-usage_norm / share), usage_norm = decayed usage / Σ decayed usage of the
//            siblings (sshare's FairShare column): 1 unused, 0.5 using exactly its share, → 0
//            far above it.
// The scheduler uses the factor after guaranteed quota: queues whose head would borrow are
// ordered by it (higher first) and borrowers with the lowest factor are reclaimed first.
//
// UsageHistory is incremental: each start or stop of an allocation is O(1) (any order of
// times, exactly), and reading a queue's usage at `now` is O(flavors), so a cycle costs
// O(queues), never O(history).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "model/flavor.h"
#include "sched/types.h"

namespace abacus::sched {

// The Slurm default half-life (PriorityDecayHalfLife=7-0).
inline constexpr Duration kDefaultFairShareHalfLife = std::chrono::hours(24 * 7);

// Device-seconds of one flavor: raw (each second counts 1) and decayed.
struct FlavorUsage {
  double raw = 0;
  double decayed = 0;
};

class UsageHistory {
 public:
  explicit UsageHistory(Duration half_life = kDefaultFairShareHalfLife) : half_life_(half_life) {}

  Duration half_life() const { return half_life_; }
  // Counts `device_milli` of `flavor` held by `queue` from `start` on, until a Stop of the same.
  void Start(const std::string& queue, FlavorId flavor, int64_t device_milli, Time start);
  // Stops counting `device_milli` that a Start counted, from `end` on.
  void Stop(const std::string& queue, FlavorId flavor, int64_t device_milli, Time end);
  // Counts a closed allocation [start, end) (rebuilding history from the usage ledger).
  void Add(const std::string& queue, FlavorId flavor, int64_t device_milli, Time start, Time end);
  // Returns `queue`'s usage per flavor at `now` (not before the times given; earlier is read as
  // the latest time given).
  std::map<FlavorId, FlavorUsage> Usage(const std::string& queue, Time now) const;
  // Forgets everything.
  void Clear() { queues_.clear(); }

 private:
  struct Account {
    double raw = 0;      // device-seconds up to `at`
    double decayed = 0;  // decayed device-seconds as of `at`
    double devices = 0;  // held from `at` on
    Time at{};
    bool started = false;
  };
  // Moves `a` forward to `t` (no-op when t <= a.at).
  void Advance(Account& a, Time t) const;
  // Adds `devices` held over [from, a.at) to `a` (negative: removes), from <= a.at.
  void Backfill(Account& a, double devices, Time from) const;
  Account& At(const std::string& queue, FlavorId flavor, Time t);

  Duration half_life_;
  std::unordered_map<std::string, std::vector<Account>> queues_;  // by FlavorId
};

// One queue's fair share at a time (sshare's row).
struct QueueShare {
  std::string queue;
  std::string cohort;          // "" when it has none
  double raw_usage = 0;        // weighted device-seconds, undecayed
  double decayed_usage = 0;    // weighted device-seconds, decayed
  int64_t weight_milli = 1000;
  double share = 1;            // weight / Σ sibling weights
  double usage_norm = 0;       // decayed usage / Σ sibling decayed usage (0 when none used)
  double factor = 1;           // 2^(-usage_norm / share)
};

// Returns the fair share of each of `queues` (same order) at `now` from `history`, weighting
// flavors by `flavor_weight_milli` (absent: 1000) and leaving CPU-only use out.
std::vector<QueueShare> ComputeShares(const std::vector<QueueInfo>& queues, const std::vector<CohortInfo>& cohorts,
                                      const std::map<FlavorId, int64_t>& flavor_weight_milli,
                                      const UsageHistory& history, Time now);

struct Snapshot;

// Counts what admitted workload `w` holds (its placements' devices, by flavor) as used by
// `queue` from `at` on; StopWorkload ends it at `at`.
void StartWorkload(UsageHistory& history, const std::string& queue, const WorkloadInfo& w, Time at);
void StopWorkload(UsageHistory& history, const std::string& queue, const WorkloadInfo& w, Time at);

// Sets snapshot->fair_share from `history` at snapshot->now for its queues; clears it (fair
// share off) when the history's half-life is 0.
void SetFairShare(const UsageHistory& history, Snapshot* snapshot);

// Returns `device_seconds` as device-hours text with up to one decimal ("412", "0.5").
std::string DeviceHoursText(double device_seconds);

}  // namespace abacus::sched

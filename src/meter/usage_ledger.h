// UsageLedger: opens and closes usage intervals as tasks start and stop, and keeps them durable
// in the store (kind "usage", one document per interval, rewritten once when it closes).
//
// Restart rule: the server calls Checkpoint() periodically (meta "meter.checkpoint"); after a
// restart, Recover() closes every interval left open whose task is not running any more at
// the last time the server knew it was (checkpoint or the node's last heartbeat), with reason
// ServerRestart. An interval is closed once, so nothing is counted twice; what ran after the
// last checkpoint and before the crash is lost, at most one checkpoint period.
// Safe to call from several threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "meter/usage.h"

namespace abacus {
class Store;
class WriteBatch;
}  // namespace abacus

namespace abacus::meter {

struct RecoverResult {
  int closed = 0;  // open intervals closed with ServerRestart
  int kept = 0;    // open intervals whose task still runs
};

class UsageLedger {
 public:
  static constexpr std::string_view kKind = "usage";
  static constexpr std::string_view kCheckpointMeta = "meter.checkpoint";

  // Loads the open intervals from `store`; Internal when a stored interval is unreadable.
  // `store` and `clock` must outlive the ledger.
  static Result<std::unique_ptr<UsageLedger>> Load(Store& store, const Clock& clock);

  // Starts an interval for iv.task_id at iv.start (the clock's now when zero) and persists it.
  // Returns its id. FailedPrecondition when the task already has an open interval.
  Result<std::string> Open(UsageInterval iv);
  // Ends the open interval of `task_id` at `end` (not before its start) for `reason`.
  // NotFound when the task has no open interval.
  Status Close(std::string_view task_id, Time end, EndReason reason);
  // For a caller that commits usage together with its own records (the server: one batch per
  // decision, so records and usage never disagree after a crash):
  // Adds the document of a new open interval to `batch` and counts it open from now on; iv.start
  // must be set. FailedPrecondition when the task already has an open interval.
  Result<std::string> StageOpen(UsageInterval iv, WriteBatch& batch);
  // Adds the closed document of `task_id`'s open interval to `batch` and forgets it; NotFound
  // when it has none.
  Status StageClose(std::string_view task_id, Time end, EndReason reason, WriteBatch& batch);
  // Returns whether `task_id` has an open interval.
  bool IsOpen(std::string_view task_id) const;
  // Returns the open interval of `task_id`, nullopt when it has none.
  std::optional<UsageInterval> FindOpen(std::string_view task_id) const;
  // Rereads the open intervals from the store (after a staged batch failed to commit).
  Status Reload();

  // Persists the clock's now as the last time every open interval was known to be running.
  Status Checkpoint();
  // Returns the stored checkpoint, nullopt when none was written.
  Result<std::optional<Time>> LastCheckpoint() const;
  // After a restart: closes each open interval whose task is not in `running_task_ids` at
  // max(checkpoint, its node's heartbeat in `node_heartbeats`), kept within [start, now], with
  // ServerRestart; keeps the others open; then checkpoints `now`. Calling it again closes
  // nothing more.
  Result<RecoverResult> Recover(Time now, const std::set<std::string>& running_task_ids,
                                const std::map<std::string, Time>& node_heartbeats = {});

  // Returns the open intervals, ordered by task id.
  std::vector<UsageInterval> OpenIntervals() const;
  // Returns every stored interval overlapping [from, to), open ones included, by id.
  Result<std::vector<UsageInterval>> Read(Time from, Time to) const;

 private:
  struct OpenEntry {
    UsageInterval interval;
    std::optional<int64_t> version;  // store version of its document; unknown when staged
  };

  UsageLedger(Store& store, const Clock& clock) : store_(store), clock_(clock) {}
  // Closes `entry` in the store, then forgets it.
  Status CloseLocked(std::map<std::string, OpenEntry, std::less<>>::iterator it, Time end,
                     EndReason reason) REQUIRES(mu_);

  Store& store_;
  const Clock& clock_;
  mutable Mutex mu_;
  std::map<std::string, OpenEntry, std::less<>> open_ GUARDED_BY(mu_);  // by task id
};

// Returns every stored interval overlapping [from, to), by id; Internal naming a bad document.
Result<std::vector<UsageInterval>> ReadUsage(Store& store, Time from, Time to);

}  // namespace abacus::meter

// TaskUidPool: the uids an agent running as root gives its plain-process tasks (docs/agent.md,
// "Task users"; `abacus agent --task-uids FIRST-LAST`, none to opt out). Each running task holds
// one uid of the range (gid = uid) that no other task of this agent holds and that no process on
// the host runs as when it is handed out; it is the task's until Release, which the agent calls
// once the task's directory is gone. Uids are handed out round the range from a random start, so
// one just given back is not reused at once and two agents on one host rarely meet. After a
// restart the agent adopts the uids its previous life's tasks held (RecoverTaskUids: the owner
// of each task's work directory). Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "agent/runtime/task_user.h"
#include "common/mutex.h"
#include "common/status.h"

namespace abacus::agent {

struct UidRange {
  uint32_t first = 0;
  uint32_t last = 0;
  bool operator==(const UidRange&) const = default;
};

// The default range: above the ids of accounts, of systemd's dynamic users and of the usual
// container ranges (systemd-nspawn ends at 1879048191), below 2^31.
inline constexpr UidRange kDefaultTaskUids{1900000000, 1900065535};

// Parses "FIRST-LAST" (1 ≤ FIRST ≤ LAST ≤ 4294967294) or "none" (nullopt: tasks run as the
// agent's user); InvalidArgument naming the expected form.
Result<std::optional<UidRange>> ParseTaskUids(std::string_view text);
// "FIRST-LAST".
std::string FormatUidRange(UidRange range);

class TaskUidPool {
 public:
  // What a scan finds: the uids of a range some process runs as.
  using Scan = std::function<std::set<uint32_t>(uint32_t first, uint32_t last)>;
  // `in_use` scans for the uids some process runs as (default: UidsWithProcesses); tests inject
  // one. The first uid tried is `first_try`, else a random one of the range.
  explicit TaskUidPool(UidRange range, Scan in_use = UidsWithProcesses,
                       std::optional<uint32_t> first_try = std::nullopt);

  // Returns the user of `task_id`: the uid it holds, else the next free one of the range, in
  // turn round the range (a uid given back is the last to be reused). Free means held by no task
  // and run as by no process when last scanned: one scan of /proc finds the next kReadyUids
  // free uids at once, so a task start scans once in kReadyUids. ResourceExhausted (naming the
  // range and what to do) when every uid is taken.
  Result<TaskUser> Acquire(const std::string& task_id);
  static constexpr size_t kReadyUids = 64;
  // Makes `task_id` hold `uid` (a task of the previous life). InvalidArgument outside the range,
  // AlreadyExists when another task holds it; OK when `task_id` already holds it.
  Status Adopt(const std::string& task_id, uint32_t uid);
  // The user `task_id` holds, nullopt when none.
  std::optional<TaskUser> Held(const std::string& task_id) const;
  // Gives back the uid of `task_id` (nothing when it holds none).
  void Release(const std::string& task_id);
  size_t held() const;
  UidRange range() const { return range_; }

 private:
  UidRange range_;
  // Finds the next free uids after next_ (one scan) into ready_.
  void Refill() REQUIRES(mu_);

  Scan in_use_;
  mutable Mutex mu_;
  std::map<std::string, uint32_t> by_task_ GUARDED_BY(mu_);
  std::map<uint32_t, std::string> by_uid_ GUARDED_BY(mu_);
  uint32_t next_ GUARDED_BY(mu_);  // where the next search starts
  std::deque<uint32_t> ready_ GUARDED_BY(mu_);  // free when last scanned, in turn
};

// Returns, for each <tasks_dir>/<task id>/work owned by a uid of `range`, task id → that uid:
// what the tasks of a previous life held.
std::map<std::string, uint32_t> RecoverTaskUids(const std::string& tasks_dir, UidRange range);

// OK when every directory above `dir` (made absolute) lets others pass (mode o+x), so that a
// task user reaches its work directory under it; FailedPrecondition naming the first that does
// not, and the ways out.
Status CheckTraversable(const std::string& dir);

}  // namespace abacus::agent

// TaskTable: what the agent knows of its tasks in this life, and the reconciliation of the
// server's assignment against it (docs/agent-protocol.md: level-triggered).
//
// - An id is started at most once in this life: Reconcile marks it started before the caller
//   starts it, so a republished assignment (server restart, a new version) never starts it
//   again. The memory of an id lasts an hour after the task left the table.
// - Each task's last status is kept and re-reported (heartbeats, registration) until the task
//   is final (Exited/Lost), that status reached the server, and the task left the assignment.
// - What the task's probes say (SetProbes) is folded into each of its statuses: `ready` and
//   `live` while it runs or stops (`ready` false once it stops), `probeMessage` always.
// Thread-safe.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/loop/protocol.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace abacus::agent {

// Stop a task: `signal` to its process group, SIGKILL after `grace`.
struct StopOrder {
  std::string task_id;
  int signal = 15;
  Duration grace{};
};

// What to do after reading an assignment.
struct ReconcilePlan {
  std::vector<AssignedTask> start;  // `run` tasks not started in this life
  std::vector<StopOrder> stop;      // `stop` tasks and vanished ones that still run
};

class TaskTable {
 public:
  explicit TaskTable(const Clock& clock, Duration remember_started = std::chrono::hours(1))
      : clock_(clock), remember_started_(remember_started) {}

  // Compares `assignment` with the table. Tasks to start are marked started (and get an entry
  // without a status until Update). A `stop` for a task never started here is answered with
  // an Exited status (stopped, "stopped before it started"). A running task missing from the
  // assignment is stopped with SIGTERM and `vanished_grace`. Each task is ordered to stop once.
  ReconcilePlan Reconcile(const Assignment& assignment, Duration vanished_grace);

  // Records a task's new status (an entry is made for ids the table does not have: orphans).
  // The probe fields come from SetProbes, not from `status`. A status equal to the last one is
  // not sent again.
  void Update(const TaskStatus& status);

  // Records what the task's probes say. A change of `ready` or `live` is a status change (sent
  // again); a new message alone rides with the next report. Ignored for a task the table does
  // not know or whose status is final.
  void SetProbes(const std::string& task_id, const ProbeOutcome& outcome);

  // Records the address ("host:port") a task listens on; folded into each of its statuses.
  void SetAddress(const std::string& task_id, const std::string& address);

  // Returns the statuses the server has not been sent yet, and marks them sent.
  std::vector<TaskStatus> TakeUnsent();
  // The send of `statuses` failed: send them again (unless a newer status replaced them).
  void MarkUnsent(const std::vector<TaskStatus>& statuses);
  // `statuses` reached the server another way (registration): not unsent any more, unless a
  // newer status replaced them.
  void MarkSent(const std::vector<TaskStatus>& statuses);
  bool HasUnsent() const;

  // Every known status, for heartbeats and registration.
  std::vector<TaskStatus> All() const;
  // Stop orders for every task still running (shutdown), each once.
  std::vector<StopOrder> StopAll();
  // Fencing (no server for the node timeout): stop orders with each task's fencing signal and
  // grace for every task still running and not yet ordered to stop. Those tasks are reported
  // Lost (lostReason NodeLost, `why` as message) when they end, so the server requeues them.
  std::vector<StopOrder> FenceAll(const std::string& why);
  // Removes the tasks that are done (final, sent, out of the assignment) and returns their ids.
  std::vector<std::string> TakeDone();

  // True when `task_id` was started in this life (tests, logs).
  bool Started(const std::string& task_id) const;
  // True when no task runs or stops (every status is final).
  bool Idle() const;

 private:
  struct Entry {
    std::optional<TaskStatus> status;
    bool sent = true;
    bool assigned = false;  // listed in the latest assignment
    bool stop_ordered = false;
    int stop_signal = 15;
    Duration grace{};
    int fencing_signal = 15;
    Duration fencing_grace{};
    std::string fenced;  // not empty: fenced, why
    ProbeOutcome probes;
    std::string address;  // SetAddress
  };
  void SetSent(const std::vector<TaskStatus>& statuses, bool sent);
  std::optional<StopOrder> OrderStopLocked(const std::string& id, Entry& e, int signal, Duration grace) REQUIRES(mu_);

  const Clock& clock_;
  Duration remember_started_;
  mutable Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
  std::map<std::string, Time> started_ GUARDED_BY(mu_);  // value: when forgotten (max: live)
  std::deque<std::pair<Time, std::string>> forgotten_ GUARDED_BY(mu_);  // oldest first
};

}  // namespace abacus::agent

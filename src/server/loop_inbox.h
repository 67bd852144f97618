// LoopInbox: the one channel into the scheduling loop (issue 22.2, explicit channels). HTTP
// threads hand it workloads they committed (to put in the ledger), agents' task reports and
// commands to run on the loop; the loop takes everything at once each turn, and says when it
// has cycled past a point (WaitForCycle). Closing it stops the loop and refuses new commands.
//
//   inbox.Submit(std::move(records));              // an HTTP thread, after the commit
//   LoopInbox::Turn turn = inbox.Take(wait);       // the loop thread
//   { WriterLock l(state_mu); for (auto& r : inbox.TakeSubmitted()) ledger.Put(r); }
//   ...; inbox.Cycling(turn.seen_seq);  // the cycle's commit is in flight
//   ...; inbox.Cycled(turn.seen_seq);   // and done
//
// A submitted workload is always readable: it stays here until the loop moves it into the
// ledger under the lock readers hold while they look in both (lock order: the reader's state
// lock, then the inbox's).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/records.h"
#include "server/task_report.h"

namespace abacus::server {

class LoopInbox {
 public:
  using Command = std::function<void()>;

  // What the loop takes in one turn (submitted workloads: TakeSubmitted).
  struct Turn {
    bool submitted = false;  // workloads wait for TakeSubmitted
    std::vector<TaskReport> reports;
    std::deque<Command> commands;
    uint64_t seen_seq = 0;  // cycling past it answers every WaitForCycle begun before the turn
    bool stop = false;
  };

  // ---- senders (any thread)
  // Workloads committed by a submission, for the ledger; the next cycle considers them.
  void Submit(std::vector<WorkloadRecord> records);
  // Task statuses from an agent.
  void Report(std::vector<TaskReport> reports);
  // Runs `command` on the loop, in order; Unavailable once the inbox is closed.
  Status Run(Command command);
  // Blocks until the loop has taken everything sent so far and cycled after it (or closed).
  void WaitForCycle();
  // Stops the loop: its current turn ends with `stop`; commands are refused from now on.
  void Close();
  // Wakes the loop for a turn even with nothing to take (a commit of its own is done).
  void Nudge();

  // ---- readers: workloads committed but not yet in the ledger
  // Those whose id or name is `id_or_name`, oldest first.
  std::vector<WorkloadRecord> Matching(const std::string& id_or_name) const;
  // The one whose id is `id_or_name`, else the last whose name is; nullopt when none.
  std::optional<WorkloadRecord> FindSubmitted(const std::string& id_or_name) const;
  // All of them, oldest first.
  std::vector<WorkloadRecord> Submitted() const;
  // Commands sent and not yet taken by the loop (its backlog of writes; /metrics).
  size_t commands_waiting() const;

  // ---- the loop thread
  // Waits up to `wait` for something to take (or a stop), then takes it all but the submitted
  // workloads, which stay readable here until TakeSubmitted.
  Turn Take(Duration wait);
  // The submitted workloads, oldest first, gone from here: call it holding the lock readers hold
  // while they look here, and put them in the ledger before letting it go.
  std::vector<WorkloadRecord> TakeSubmitted();
  // Whether a WaitForCycle waits for a cycle past what `seen_seq` covered.
  bool CycleOwed(uint64_t seen_seq) const;
  // A cycle after the turn that saw `seen_seq` is committing: the waits it covers neither wake the
  // loop nor owe another cycle until Cycled answers them.
  void Cycling(uint64_t seen_seq);
  // The loop cycled after the turn that saw `seen_seq`: wakes the WaitForCycles it answers.
  void Cycled(uint64_t seen_seq);
  // On stop: the commands sent after the last turn (to be answered), and every wait released.
  std::deque<Command> TakeLast();

 private:
  bool HasWorkLocked() const REQUIRES(mu_);

  mutable Mutex mu_;
  std::condition_variable wake_;     // the loop: something to take
  std::condition_variable cycled_;   // WaitForCycle: the loop cycled
  std::vector<WorkloadRecord> submitted_ GUARDED_BY(mu_);
  std::vector<TaskReport> reports_ GUARDED_BY(mu_);
  std::deque<Command> commands_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  uint64_t sent_seq_ GUARDED_BY(mu_) = 0;     // submissions, commands and cycle waits sent
  uint64_t cycled_seq_ GUARDED_BY(mu_) = 0;   // of those, the ones a cycle came after
  uint64_t cycling_seq_ GUARDED_BY(mu_) = 0;  // of those, the ones a committing cycle covers
  bool nudged_ GUARDED_BY(mu_) = false;       // Nudge since the last Take
};

}  // namespace abacus::server

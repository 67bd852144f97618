// ControlPlane: the scheduling loop (the one writer of the ledger): its turns, the cycle and
// finishing preemptions.
#include "server/control_plane.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "common/nesting.h"
#include "common/thread_name.h"
#include "control/controller.h"
#include "govern/crypto.h"
#include "sched/claims.h"
#include "sched/explain.h"
#include "server/device_holders.h"
#include "server/elastic_units.h"
#include "server/fit_check.h"
#include "server/governance.h"
#include "server/node_history.h"
#include "server/node_liveness.h"
#include "server/preemption_journal.h"
#include "server/quota_view.h"
#include "server/reservations.h"
#include "server/reserved_pool.h"
#include "server/workload_update.h"
#include "store/data_folder_lock.h"
#include "store/fenced_store.h"
#include "tenancy/priority_class.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/secret_doc.h"
#include "workload/workload_codec.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// Counts a cycle's attempts: admitted, and inadmissible per pending reason (abacus_admission_attempts_total).
void CountAdmissionAttempts(const sched::CycleResult& result, LabeledMetrics& m) {
  std::array<int64_t, static_cast<size_t>(sched::kLastPendingCode) + 1> by_code{};
  for (const sched::PendingReason& pr : result.pending) by_code[static_cast<size_t>(pr.code)]++;
  m.CountAdmissionAttempts("admitted", "", static_cast<int64_t>(result.admissions.size()));
  for (size_t c = 0; c < by_code.size(); ++c) {
    m.CountAdmissionAttempts("inadmissible", std::string(sched::PendingCodeName(static_cast<sched::PendingCode>(c))), by_code[c]);
  }
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

// ---------------------------------------------------------------- the loop

void ControlPlane::Loop() {
  while (true) {
    // Sleep until there is work, or until the timer cycle is due.
    Duration wait = pacer_.UntilTimer(clock_.Now());
    LoopInbox::Turn turn = inbox_.Take(std::min<Duration>(wait, std::chrono::milliseconds(200)));
    std::deque<LoopInbox::Command>& commands = turn.commands;
    const uint64_t seen_seq = turn.seen_seq;
    // The loop's own commits the committer finished since the last turn: swapped in, published.
    commits_.SettleDone();
    if (turn.submitted) {
      WriterLock lock(state_mu_);  // readers look in the ledger, then the inbox, under it
      for (auto& r : inbox_.TakeSubmitted()) {
        pacer_.Arrived(r.id);
        feed_->Record(kWorkloadKind, r.id);  // now in the ledger (its commit may have published first)
        ledger_.PutWorkload(std::move(r));
      }
      pacer_.Changed();
    }
    // A command may free capacity or change the rules: every waiting workload is retried. Each
    // settles the loop's commits in flight it reads first (RunOnLoop: all of them) and may leave
    // its own commit in flight, answering once it settled (AnswerOnLoop).
    if (!commands.empty()) pacer_.RetryAll();
    for (auto& cmd : commands) cmd();
    ProcessTaskReports(turn.reports, nullptr, LoopWrite::kInFlight);
    CheckNodeLiveness();
    TickControllers();
    MaintainReservations();  // nothing unless a reservation drains (reservations_api.cc)
    ProgressDrains();  // nothing unless a node is Draining (fleet.cc)
    if (steps_.idempotency_purge.Due(clock_.Now())) {
      if (auto purged = PurgeExpiredIdempotencyKeys(*store_, steps_.idempotency_purge.last()); !purged.ok()) {
        ABACUS_LOG_WARN("expired idempotency keys not purged: {}", purged.status().ToString());
      }
    }
    // What this step committed is in the ledger now: watchers may read it.
    feed_->Publish();
    if (turn.stop) {
      commits_.SettleAll();
      feed_->Publish();
      // Answer commands queued after the last turn.
      for (auto& cmd : inbox_.TakeLast()) cmd();
      commits_.SettleAll();  // and answer those that committed
      return;
    }
    FinishPreemptions();
    // Coalesce: after a change wait at least min_cycle_gap (and 4x the last cycle's cost,
    // so that a big ledger does not starve ingestion); otherwise cycle on the timer. The timer
    // cycle retries every parked workload (aging, time-based rules); it runs at most once per
    // cycle_interval and keeps its own cost under 5% of the loop (cycle_pacer.h; one policy
    // with the event simulator: sched/cycle_kind.h).
    CyclePacer::Verdict next = pacer_.Check(clock_.Now(), std::chrono::steady_clock::now(), inbox_.CycleOwed(seen_seq));
    if (next.cycle) {
      RunCycle(seen_seq);  // its decisions are published once committed (CycleCommitted)
    } else if (next.back_off > Duration(0)) {
      std::this_thread::sleep_for(std::min<Duration>(next.back_off, std::chrono::milliseconds(50)));
    }
  }
}

void ControlPlane::FinishPreemptions() {
  // Tasks on agent nodes end when their agent reports them stopped (ProcessTaskReports). On
  // simulated nodes nothing runs: a preempted workload has stopped once its checkpoint grace is
  // over, and is requeued.
  if (steps_.preempting.empty()) return;
  Time now = clock_.Now();
  std::vector<std::string> done;
  for (const auto& id : steps_.preempting) {
    const WorkloadRecord* r = ledger_.FindWorkload(id);
    if (r == nullptr || r->state != WorkloadState::kPreempting) {
      done.push_back(id);
      continue;
    }
    bool on_agent = false;
    for (const auto& p : r->placements) {
      const NodeRecord* n = ledger_.FindNode(p.node);
      on_agent |= n != nullptr && n->agent;
    }
    if (on_agent) continue;
    int64_t grace = 0;
    if (const TrainingSpec* t = r->spec.training(); t != nullptr && t->checkpoint) grace = t->checkpoint->grace_seconds;
    if (now - r->preempted_at >= std::chrono::seconds(grace)) done.push_back(id);
  }
  if (done.empty()) return;
  commits_.SettleAll();  // the requeue is a working copy of what is durable
  for (const auto& id : done) {
    WorkloadRecord* r = ledger_.FindWorkload(id);
    if (r == nullptr || r->state != WorkloadState::kPreempting) {
      steps_.preempting.erase(id);
      continue;
    }
    // A working copy, committed and then swapped in: readers never see the requeue before it
    // is durable. Each requeue's commit starts and the loop goes on (the workloads a preemption
    // stopped together reach the disk together); a requeue still in flight at the next turn is
    // settled by the SettleAll above, and its record then reads Requeued.
    WorkloadRecord stopped = *r;
    stopped.placements.clear();
    stopped.group_flavors.clear();
    stopped.preempted_at = Time{};
    stopped.admitted_at = Time{};
    stopped.requeues++;
    // Typed, for metering (usage_sync.cc): the operator's reason (fleet.h), else Preempted.
    stopped.requeue_reason =
        stopped.evict_reason == RequeueReason::kNone ? RequeueReason::kPreempted : stopped.evict_reason;
    CommitTransitionOnLoop(stopped, WorkloadState::kRequeued, "Requeued",
                           json({{"reason", RequeueReasonName(stopped.requeue_reason)}}), {}, nullptr,
                           [this, id = id](const Status& st) {
                             if (!st.ok()) {
                               ABACUS_LOG_ERROR("requeue {}: {}", id, st.ToString());
                               return;  // still Preempting: tried again next turn
                             }
                             steps_.preempting.erase(id);
                             pacer_.RetryAll();
                           });
  }
}

// One cycle's snapshot, its decisions, and what assuming them changed: working copies of the
// records it changes (the ledger keeps the committed records until CommitCycle swaps the copies
// in, so no reader sees a decision before it is durable), the batch that records the decisions,
// the Put of each record (its version after the commit), the audit entries and the ids to
// publish. One write path, as every other write: working copy → batch → commit → swap → publish.
struct ControlPlane::CycleWork {
  Time now{};
  bool full = false;
  SnapshotIndex index;
  sched::Snapshot snapshot;
  sched::CycleResult result;
  WriteBatch batch;
  std::vector<std::pair<std::string, OpRef>> puts;
  std::vector<govern::AuditRecord> decisions;
  std::vector<std::string> changed;
  std::set<std::string> grown;  // elastic workloads given units this cycle

  // The record as this cycle sees it: its working copy, else the ledger's; null if unknown.
  const WorkloadRecord* Current(const Ledger& ledger, const std::string& id) const {
    auto it = working_.find(id);
    return it != working_.end() ? &it->second : ledger.FindWorkload(id);
  }
  // The working copy of record `id`, made from the ledger's on first use; null if unknown.
  WorkloadRecord* Edit(const Ledger& ledger, const std::string& id) {
    if (auto it = working_.find(id); it != working_.end()) return &it->second;
    const WorkloadRecord* committed = ledger.FindWorkload(id);
    if (committed == nullptr) return nullptr;
    order_.push_back(id);
    return &working_.emplace(id, *committed).first->second;
  }
  // True when this cycle changes record `id`.
  bool Touched(const std::string& id) const { return working_.count(id) != 0; }
  // Stages one Put per changed record, in the order first changed.
  void StagePuts() {
    for (const auto& id : order_) {
      const WorkloadRecord& r = working_.at(id);
      puts.emplace_back(id, batch.PutJson(kWorkloadKind, id, ToJson(r), r.version).LastOp());
    }
  }
  // Hands the working copies over (after their commit), each with the version it was given.
  std::vector<WorkloadRecord> TakeCommitted(const CommitResult& committed) {
    std::vector<WorkloadRecord> out;
    out.reserve(puts.size());
    for (const auto& [id, put] : puts) {
      WorkloadRecord& r = working_.at(id);
      r.version = committed.AssignedTo(put);
      out.push_back(std::move(r));
    }
    working_.clear();
    return out;
  }

  // A batch's new slots get their array tasks now, not at the next controller tick.
  std::vector<std::pair<std::string, json>> FillSlots(ControlPlane& cp, WorkloadRecord& r) {
    std::vector<std::pair<std::string, json>> events;
    if (r.spec.batch() != nullptr) cp.RunController(r, events, batch, decisions, now);
    return events;
  }
  void AppendEvents(const WorkloadRecord& r, const std::vector<std::pair<std::string, json>>& events) {
    for (const auto& [type, details] : events) batch.AppendEventJson(kWorkloadKind, r.id, type, details, now);
  }

 private:
  std::map<std::string, WorkloadRecord> working_;
  std::vector<std::string> order_;
};

void ControlPlane::RunCycle(uint64_t seen_seq) {
  // Decide on what is durable: the loop's commits in flight settle first (loop_commits.h), so
  // every record in the snapshot is committed and no decision builds on a change that may fail.
  commits_.SettleAll();
  auto start = std::chrono::steady_clock::now();
  auto work = std::make_shared<CycleWork>();
  CycleWork& w = *work;
  w.now = clock_.Now();
  // A full cycle retries every waiting workload; a fresh one only those submitted since the last
  // cycle: the others were tried against the same capacity and rules, and parked. A bounded
  // cycle (capacity was freed) retries the first waiting workloads of each queue: with thousands
  // waiting, only the heads can use what a finished task left (sched/cycle_kind.h, shared with
  // the event simulator).
  const CyclePacer::Owed owed = pacer_.Begin(w.now, std::chrono::steady_clock::now());
  w.full = owed.full();
  // 1. Snapshot (the loop is the only writer: no lock needed to read the ledger here).
  w.snapshot = ledger_.BuildSnapshot(w.now, w.index, sched::ScopeOf(owed.kind, options_.bounded_cycle_per_queue),
                                     &owed.arrived);
  usage_->shares().Fill(&w.snapshot);
  // 2. Decide.
  w.result = sched::Schedule(w.snapshot, options_.scheduler);
  {
    // Gang holds persist: the gangs holding nodes now are in every following snapshot.
    std::unordered_set<std::string> holding;
    for (const auto& res : w.result.reservations) holding.insert(res.workload_id);
    ledger_.SetHolding(std::move(holding));
  }
  // 3. Assume the decisions on working copies of the records (the ledger is not changed: no lock).
  AssumeAdmissions(w);
  ReleaseStartedClaims(w);
  FillGrownUnits(w);
  AssumePreemptions(w);
  NoteNeverFits(w);
  if (w.full) {
    KeepPendingReasons(w);
  } else {
    WriterLock lock(state_mu_);
    KeepPendingReasons(w);
  }
  // 4. Start the commit, with the audit entry of every decision (both or neither); the loop goes
  // on. 5. Once committed, the copies are swapped in and published to the agents
  // (CycleCommitted; simulated nodes need nothing).
  const size_t admitted = w.result.admissions.size(), preempted = w.result.preemptions.size(),
               pending = w.result.pending.size(), changed = w.changed.size();
  CommitCycle(std::move(work), seen_seq);
  auto cost = std::chrono::steady_clock::now() - start;
  pacer_.Ended(std::chrono::duration_cast<Duration>(cost), owed);
  metrics_.cycle_seconds.Observe(std::chrono::duration<double>(cost).count());
  metrics_.cycles.fetch_add(1);
  if (changed != 0) {
    ABACUS_LOG_INFO("cycle: {} admitted, {} preempted, {} pending ({:.1f} ms)", admitted, preempted, pending,
                    std::chrono::duration<double, std::milli>(cost).count());
  }
}

// Admits each admitted workload on its working copy (state, placements, events, usage), or
// gives an admitted unit of an elastic workload its place.
void ControlPlane::AssumeAdmissions(CycleWork& w) {
  const Time now = w.now;
  for (const sched::Admission& a : w.result.admissions) {
    if (const SnapshotIndex::Slice* slice = w.index.SliceAt(a.workload)) {
      const WorkloadRecord* cur = w.Current(ledger_, slice->record_id);
      if (cur == nullptr || PlacedUnits(*cur).count(slice->unit) != 0 ||
          (cur->state != WorkloadState::kAdmitted && cur->state != WorkloadState::kRunning)) {
        continue;
      }
      WorkloadRecord* r = w.Edit(ledger_, cur->id);
      w.grown.insert(r->id);
      AddUnit(w.snapshot, a, slice->unit, *r, w.batch, now);
      continue;
    }
    const WorkloadRecord* cur = w.Current(ledger_, w.index.workload_ids[a.workload]);
    if (cur == nullptr || !cur->waiting()) continue;
    WorkloadRecord* r = w.Edit(ledger_, cur->id);
    (void)Transition(r->state, WorkloadState::kAdmitted);
    Ledger::ApplyAdmission(w.snapshot, a, *r);
    for (auto& p : r->placements) p.version = InitialVersion(*r, UnitOf(*r, p));
    std::vector<std::pair<std::string, json>> controller_events = w.FillSlots(*this, *r);
    r->admitted_at = now;
    if (ToMicros(r->first_admitted_at) == 0) r->first_admitted_at = now;
    r->message.clear();
    std::set<std::string> nodes;
    for (const auto& p : r->placements) nodes.insert(p.node);
    json where = json::array();
    for (const auto& n : nodes) where.push_back(n);
    w.batch.AppendEvent(kWorkloadKind, r->id, "Admitted",
                        EventJson(WorkloadState::kAdmitted, a.borrowing ? "admitted on borrowed quota" : "admitted",
                                  {{"flavors", r->group_flavors}, {"borrowing", a.borrowing}})
                            .dump(),
                        now);
    w.batch.AppendEvent(kWorkloadKind, r->id, "Placed",
                        EventJson(WorkloadState::kAdmitted, "placed on " + std::to_string(nodes.size()) + " node(s)",
                                  {{"nodes", where}, {"tasks", r->placements.size()}})
                            .dump(),
                        now);
    StageOutsidePoolEvent(*r, PlacedUnits(*r), ledger_, w.batch, now);
    w.AppendEvents(*r, controller_events);
    usage_->Stage(ledger_.FindWorkload(r->id), *r, w.batch, now);
    w.changed.push_back(r->id);
    metrics_.decision_seconds.Observe(Seconds(now - r->submitted));
    metrics_.labeled.ObserveWait(r->spec.queue, Seconds(now - r->submitted));
  }
}

// A preemptor that started (a workload or a unit of one) no longer claims what its victims gave
// back (sched/claims.h).
void ControlPlane::ReleaseStartedClaims(CycleWork& w) {
  for (const sched::Admission& a : w.result.admissions) {
    for (const auto& victim_id : ledger_.ClaimsOf(w.index.workload_ids[a.workload])) {
      // One write per record per cycle: a victim written already this cycle keeps its claim
      // until the next admission of its preemptor's clears it (the scheduler ignores a claim
      // whose preemptor is not waiting).
      if (w.Touched(victim_id)) continue;
      WorkloadRecord* v = w.Edit(ledger_, victim_id);
      if (v == nullptr) continue;
      v->yields_to.clear();
      v->yield_count = 0;  // not published: nothing to run
    }
  }
}

// Records the elastic workloads that were given units this cycle.
void ControlPlane::FillGrownUnits(CycleWork& w) {
  for (const auto& id : w.grown) {
    WorkloadRecord* r = w.Edit(ledger_, id);
    w.AppendEvents(*r, w.FillSlots(*this, *r));
    usage_->Stage(ledger_.FindWorkload(id), *r, w.batch, w.now);
    w.changed.push_back(r->id);
  }
}

// Starts each preemption: the victim turns Preempting and claims what it frees for its
// preemptor, with its events and the evidence journal's line.
void ControlPlane::AssumePreemptions(CycleWork& w) {
  const Time now = w.now;
  for (const sched::Preemption& p : w.result.preemptions) {
    const WorkloadRecord* cur = w.Current(ledger_, w.index.workload_ids[p.victim]);
    if (cur == nullptr || !CanTransition(cur->state, WorkloadState::kPreempting)) continue;
    if (w.grown.count(cur->id) != 0) continue;  // it grew this cycle: the next cycle decides again
    WorkloadRecord* r = w.Edit(ledger_, cur->id);
    (void)Transition(r->state, WorkloadState::kPreempting);
    metrics_.labeled.CountPreemption(std::string(sched::PreemptionReasonName(p.reason)));
    r->preempted_at = now;
    r->message = "preempted for " + p.preemptor_id + " (" + std::string(sched::PreemptionReasonName(p.reason)) + ")";
    // What it frees is claimed by its preemptor (sched/claims.h); count repeats for the guard.
    r->yield_count = sched::YieldCountAfter(r->yields_to, r->yield_count, p.preemptor_id);
    r->yields_to = p.preemptor_id;  // the ledger indexes the claim when the copy is swapped in
    if (r->yield_count >= sched::kChurnLimit) {
      w.batch.AppendEvent(kWorkloadKind, r->id, "PreemptionChurnStopped",
                          EventJson(WorkloadState::kPreempting,
                                    "preempted " + std::to_string(r->yield_count) + " times in a row for " +
                                        p.preemptor_id + " without it starting; from now on it waits until " +
                                        p.preemptor_id + " has started",
                                    {{"preemptor", p.preemptor_id}, {"count", r->yield_count}})
                              .dump(),
                          now);
    }
    w.batch.AppendEvent(kWorkloadKind, r->id, "Preempted",
                        EventJson(WorkloadState::kPreempting, r->message,
                                  {{"preemptor", p.preemptor_id},
                                   {"reason", sched::PreemptionReasonName(p.reason)},
                                   {"graceSeconds", p.grace_seconds}})
                            .dump(),
                        now);
    // For the evidence report: who gave back what, to whom.
    const SnapshotIndex::Slice* by_slice = w.index.SliceAt(p.preemptor);
    const WorkloadRecord* by = ledger_.FindWorkload(by_slice != nullptr ? by_slice->record_id : p.preemptor_id);
    AppendPreemption(w.batch, *r, sched::PreemptionReasonName(p.reason), p.preemptor_id,
                     by != nullptr ? by->spec.queue : "", now);
    w.changed.push_back(r->id);
  }
}

// What can never run says so once, as an event the user sees in `abacus events`/describe
// (explain carries the same reason) (under state_mu_).
void ControlPlane::NoteNeverFits(CycleWork& w) {
  for (const sched::PendingReason& pr : w.result.pending) {
    if (pr.code != sched::PendingCode::kInvalid) continue;
    auto prev = ledger_.pending_reasons().find(pr.workload_id);
    if (prev != ledger_.pending_reasons().end() && prev->second.code == sched::PendingCode::kInvalid) continue;
    const WorkloadRecord* r = ledger_.FindWorkload(pr.workload_id);
    if (r == nullptr) continue;
    w.batch.AppendEvent(kWorkloadKind, r->id, "NeverFits", EventJson(r->state, pr.message).dump(), w.now);
  }
}

// The waiting workloads' reasons. After a partial cycle, under state_mu_: the workloads it tried
// get this cycle's reason, the parked ones keep the reason of the cycle that last tried them.
// After a full cycle, without it: every waiting workload gets its reason anew; the maps are built
// outside the lock and swapped in, and the old ones freed after it (with tens of thousands
// waiting, filling them under the lock stalled every submission for milliseconds).
void ControlPlane::KeepPendingReasons(CycleWork& w) {
  if (!w.full) {
    auto& reasons = ledger_.pending_reasons();
    auto& ledger_reasons = ledger_.ledger_reasons();
    for (const auto& id : w.index.workload_ids) reasons.erase(id);
    for (const auto& [id, why] : w.index.unschedulable) ledger_reasons.erase(id);
    for (auto& pr : w.result.pending) reasons[pr.workload_id] = std::move(pr);
    for (auto& [id, why] : w.index.unschedulable) ledger_reasons[id] = why;
    return;
  }
  std::unordered_map<std::string, sched::PendingReason> reasons;
  std::unordered_map<std::string, std::string> ledger_reasons;
  reasons.reserve(w.result.pending.size());
  for (auto& pr : w.result.pending) {
    std::string id = pr.workload_id;
    reasons.insert_or_assign(std::move(id), std::move(pr));
  }
  for (auto& [id, why] : w.index.unschedulable) ledger_reasons[id] = why;
  WriterLock lock(state_mu_);
  ledger_.pending_reasons().swap(reasons);
  ledger_.ledger_reasons().swap(ledger_reasons);
}

// Starts the commit of the cycle's batch with the audit entry of every decision that touches a
// user's work (both or neither); CycleCommitted finishes the cycle once it is done.
void ControlPlane::CommitCycle(std::shared_ptr<CycleWork> work, uint64_t seen_seq) {
  CycleWork& w = *work;
  if (governance_) {
    for (const auto& id : w.changed) {
      const WorkloadRecord* r = w.Current(ledger_, id);
      if (r == nullptr) continue;
      bool preempted = r->state == WorkloadState::kPreempting;
      std::string where;
      for (const auto& p : r->placements) where += (where.empty() ? "" : ",") + p.node;
      w.decisions.push_back(DecisionRecord("scheduler", preempted ? "preempt" : "admit", "workload", r->id,
                                           r->spec.tenant(), preempted ? "Running" : "Pending",
                                           preempted ? r->message : "Admitted on " + where));
    }
  }
  w.StagePuts();
  if (w.batch.empty()) {
    steps_.staged.Settle(false, metrics_.labeled);
    CycleCommitted(w, nullptr, seen_seq);
    return;
  }
  // What the controllers staged for this batch is counted when it commits.
  StagedActions staged = std::exchange(steps_.staged, StagedActions{});
  inbox_.Cycling(seen_seq);  // the waits this cycle covers are answered once it is committed
  WriteBatch batch = std::move(w.batch);
  CommitOnLoop(std::move(batch), std::move(w.decisions),
               [this, work = std::move(work), seen_seq, staged = std::move(staged)](const Committer::Async& done) mutable {
                 staged.Settle(done.status.ok(), metrics_.labeled);
                 CycleCommitted(*work, &done, seen_seq);
               });
}

// Finishes a cycle whose commit is `done` (null: it had nothing to commit): swaps the working
// copies in and publishes them, or, when the commit failed, forgets them (the ledger still holds
// the committed records; the failure hook reloads the usage staged with them). Then the change
// feed is published and the cycle's WaitForCycles answered.
void ControlPlane::CycleCommitted(CycleWork& w, const Committer::Async* done, uint64_t seen_seq) {
  const bool committed = done != nullptr && done->status.ok();
  if (done != nullptr && !committed) {
    ABACUS_LOG_ERROR("scheduling decisions not committed, dropped: {}", done->status.ToString());
    pacer_.Changed();
  } else if (committed) {
    std::vector<WorkloadRecord> records = w.TakeCommitted(done->result);
    {
      WriterLock lock(state_mu_);
      for (WorkloadRecord& r : records) ledger_.PutWorkload(std::move(r));
    }
    metrics_.admitted.fetch_add(static_cast<int64_t>(w.result.admissions.size()));
    metrics_.preempted.fetch_add(static_cast<int64_t>(w.result.preemptions.size()));
    PublishCycle(w);
  }
  if (done == nullptr || committed) CountAdmissionAttempts(w.result, metrics_.labeled);
  feed_->Publish();  // the cycle's decisions
  inbox_.Cycled(seen_seq);
}

// Hands each committed change to its agents; a preempting workload is watched until it stops.
void ControlPlane::PublishCycle(const CycleWork& w) {
  for (const auto& id : w.changed) {
    const WorkloadRecord* r = ledger_.FindWorkload(id);
    if (r == nullptr) continue;
    if (r->state == WorkloadState::kPreempting) steps_.preempting.insert(id);
    Publish(*r);
  }
}

}  // namespace abacus::server

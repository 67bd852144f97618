#include "server/usage_sync.h"

#include <map>
#include <set>

#include "common/log.h"
#include "server/desired_tasks.h"
#include "server/placement_hold.h"
#include "server/task_ids.h"

namespace abacus::server {
namespace {

// Why the allocations of a workload that stopped holding quota ended.
meter::EndReason EndReasonFor(const WorkloadRecord& after) {
  switch (after.state) {
    case WorkloadState::kSucceeded: return meter::EndReason::kSucceeded;
    case WorkloadState::kFailed: return meter::EndReason::kFailed;
    case WorkloadState::kCancelled: return meter::EndReason::kCancelled;
    default: break;
  }
  // Back to wait: the Requeue decision's typed reason (records.h), never the message text.
  switch (after.requeue_reason) {
    case RequeueReason::kPreempted: return meter::EndReason::kPreempted;
    case RequeueReason::kDrained: return meter::EndReason::kDrained;  // abacus drain (fleet.h)
    case RequeueReason::kRequeued:
    case RequeueReason::kSuspended: return meter::EndReason::kRequeued;  // abacus requeue, suspend
    case RequeueReason::kNodeLost:
    case RequeueReason::kAgentRestart: return meter::EndReason::kNodeLost;
    case RequeueReason::kRetry:
    case RequeueReason::kDeviceError:
    case RequeueReason::kInterrupted:
    case RequeueReason::kOther: return meter::EndReason::kFailed;  // a retry, or another infrastructure failure
    case RequeueReason::kNone: break;
  }
  return meter::EndReason::kPreempted;  // sent back without a requeue (resized on simulated nodes)
}

std::map<std::string, const PlacementRecord*> Allocations(const WorkloadRecord& r) {
  std::map<std::string, const PlacementRecord*> out;
  if (!r.holds_quota()) return out;
  for (const auto& p : r.placements) out[TaskIdOf(r, p)] = &p;
  return out;
}

// Why one task stopped holding while its workload holds on, from its placement as it ended (null:
// it had not ended): its exit (Succeeded, Failed), its node (NodeLost), else the server took it
// away (ScaledDown: a scale-down, a replica moved, a slot stopped).
meter::EndReason PartEndReason(const PlacementRecord* p) {
  if (p == nullptr) return meter::EndReason::kScaledDown;
  if (p->phase == "Exited" && !p->stop_requested) {
    return p->exit_code == 0 && p->signal == 0 && !p->oom_killed ? meter::EndReason::kSucceeded
                                                                 : meter::EndReason::kFailed;
  }
  if (p->phase == "Lost") return p->lost_reason == "DeviceError" ? meter::EndReason::kFailed : meter::EndReason::kNodeLost;
  return meter::EndReason::kScaledDown;
}

// The placement of `task` as it ended: in `after` when it is still there, else among `ended`
// (the change removed it; placements of `before`'s attempt: a requeue or retry starts the next
// one, whose task ids differ); null when it had not ended.
const PlacementRecord* EndedAs(const WorkloadRecord& before, const WorkloadRecord& after, const std::string& task,
                               const std::vector<PlacementRecord>* ended) {
  for (const PlacementRecord& p : after.placements) {
    if (TaskEnded(p) && TaskIdOf(after, p) == task) return &p;
  }
  if (ended != nullptr) {
    for (const PlacementRecord& p : *ended) {
      if (TaskIdOf(before, p) == task) return &p;
    }
  }
  return nullptr;
}

// When a task stopped holding: the time its agent saw its process exit, for a task that exited
// (within [start, now]: an agent's clock ahead of the server's bills no future), else `now`, when
// the server released it. A report held up while the server was down would otherwise bill the
// outage to the task's tenant (the probe of 2026-12-07: a 6 s job billed 10.5 s).
Time ReleasedAt(const PlacementRecord* ended_as, Time start, Time now) {
  return ended_as == nullptr ? now : EndSeen(*ended_as, start, now).value_or(now);
}

}  // namespace

Result<std::unique_ptr<UsageSync>> UsageSync::Open(Store& store, const Clock& clock, const Ledger& ledger,
                                                   Duration fair_share_half_life) {
  std::unique_ptr<UsageSync> sync(new UsageSync(store, ledger, fair_share_half_life));
  ABACUS_ASSIGN_OR_RETURN(sync->usage_, meter::UsageLedger::Load(store, clock));
  ABACUS_RETURN_IF_ERROR(sync->Reconcile(clock.Now()));
  // Fair share over time: rebuilt from the usage ledger (replacing what Reconcile counted), so a
  // restart remembers what ran.
  ABACUS_RETURN_IF_ERROR(sync->shares_.Rebuild(store));
  return sync;
}

void UsageSync::Stage(const WorkloadRecord* before, const WorkloadRecord& after, WriteBatch& batch, Time now,
                      const std::vector<PlacementRecord>* ended) {
  auto had = before != nullptr ? Allocations(*before) : std::map<std::string, const PlacementRecord*>{};
  auto has = Allocations(after);
  for (const auto& [task, p] : had) {
    if (has.count(task) != 0 || !usage_->IsOpen(task)) continue;
    std::optional<meter::UsageInterval> open = usage_->FindOpen(task);
    const PlacementRecord* ended_as = EndedAs(*before, after, task, ended);  // `had` is not empty: `before` is set
    const Time end = ReleasedAt(ended_as, open ? open->start : now, now);
    // One task of a workload that holds on: why that task ended (a BatchJob's part that
    // succeeded is not "scaled down"); the workload's reason once it holds nothing.
    const meter::EndReason reason = after.holds_quota() ? PartEndReason(ended_as) : EndReasonFor(after);
    Status st = usage_->StageClose(task, end, reason, batch);
    if (!st.ok()) ABACUS_LOG_WARN("usage of {}: {}", task, st.ToString());
    if (st.ok() && open) shares_.Close(*open, end);
  }
  for (const auto& [task, p] : has) {
    if (usage_->IsOpen(task)) continue;
    meter::UsageInterval iv;
    iv.workload_id = after.id;
    iv.task_id = task;
    iv.tenant = after.spec.tenant();
    iv.project = after.spec.project;
    iv.queue = after.spec.queue;
    iv.priority_class = after.spec.priority_class;
    iv.kind = std::string(WorkloadKindName(after.spec.kind()));
    if (auto m = after.spec.labels.find("model"); m != after.spec.labels.end()) iv.model = m->second;
    iv.user = after.submitted_by;
    iv.node = p->node;
    if (const NodeRecord* n = ledger_.FindNode(p->node)) {
      iv.cluster = n->node.cluster;
      iv.pool = n->node.pool;
    }
    PlacementHold hold = HoldOf(after, *p);  // the rule the queue list and /metrics count by
    iv.flavor = std::move(hold.flavor);
    iv.device_milli = hold.device_milli;
    iv.devices = std::move(hold.devices);
    iv.device_memory_bytes = hold.device_memory_bytes;
    iv.cpu_milli = hold.cpu_milli;
    iv.memory_bytes = hold.memory_bytes;
    iv.extended = *hold.extended;
    // A task placed with the admission holds from the admission on; one placed later in a
    // workload that already held quota (a replica's next run after a restart, a rollout or a
    // rollback, a scale-up, a replica moved off a lost node) holds from now, not from the
    // workload's first admission.
    const bool admitted_before = before != nullptr && before->holds_quota();
    iv.start = !admitted_before && ToMicros(after.admitted_at) != 0 ? after.admitted_at : now;
    meter::UsageInterval counted = iv;
    auto st = usage_->StageOpen(std::move(iv), batch);
    if (!st.ok()) ABACUS_LOG_WARN("usage of {}: {}", task, st.status().ToString());
    if (st.ok()) shares_.Count(counted);
  }
}

void UsageSync::CommitFailed() {
  Status st = usage_->Reload();
  if (!st.ok()) ABACUS_LOG_ERROR("usage ledger reload: {}", st.ToString());
  // What was counted for the batch that failed is undone by recounting what the store holds.
  Status rebuilt = shares_.Rebuild(store_);
  if (!rebuilt.ok()) ABACUS_LOG_ERROR("fair share usage rebuild: {}", rebuilt.ToString());
}

Status UsageSync::Reconcile(Time now) {
  // Records are the truth: an interval open for an allocation that no longer exists closes when
  // its workload released it (or now), one missing for a held allocation opens at admission.
  WriteBatch batch;
  std::set<std::string> held;
  for (const auto& [id, r] : ledger_.workloads()) {
    for (const auto& [task, p] : Allocations(r)) held.insert(task);
  }
  int closed = 0, opened = 0;
  for (const meter::UsageInterval& iv : usage_->OpenIntervals()) {
    if (held.count(iv.task_id) != 0) continue;
    Time end = now;
    meter::EndReason reason = meter::EndReason::kServerRestart;
    if (const WorkloadRecord* r = ledger_.FindWorkload(iv.workload_id)) {
      if (ToMicros(r->finished_at) != 0) {
        end = r->finished_at;
        reason = EndReasonFor(*r);
      }
    }
    ABACUS_RETURN_IF_ERROR(usage_->StageClose(iv.task_id, end, reason, batch));
    shares_.Close(iv, end);
    ++closed;
  }
  for (const auto& [id, r] : ledger_.workloads()) {
    if (!r.holds_quota()) continue;
    size_t before = batch.ops().size();
    Stage(nullptr, r, batch, now);
    opened += static_cast<int>(batch.ops().size() - before);
  }
  if (batch.empty()) return Status::OK();
  ABACUS_LOG_INFO("usage reconciled with the ledger: {} interval(s) closed, {} opened", closed, opened);
  return store_.Commit(batch);
}

}  // namespace abacus::server

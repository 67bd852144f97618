// ControlPlane: what task reports mean for workloads (on the loop thread).
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "govern/crypto.h"
#include "server/control_plane.h"
#include "server/desired_tasks.h"
#include "server/evaluation_archive.h"
#include "server/node_history.h"
#include "server/task_ids.h"
#include "server/task_logs.h"

namespace abacus::server {

using nlohmann::json;

namespace {

// The TaskEnded event of task `task_id` (placement `p` of `w`, just Exited or Lost): where and
// how it ran, so that every task that ran — each array task, each attempt — stays described
// (`abacus describe`) after its slot runs the next one.
json TaskEndedEvent(const WorkloadRecord& w, const PlacementRecord& p, const std::string& task_id) {
  json d = {{"task", task_id},  {"node", p.node},           {"attempt", w.attempt()},
            {"phase", p.phase}, {"exitCode", p.exit_code}};
  if (p.index >= 0) d["index"] = p.index;
  if (p.signal != 0) d["signal"] = p.signal;
  if (p.oom_killed) d["oomKilled"] = true;
  if (!p.lost_reason.empty()) d["lostReason"] = p.lost_reason;
  if (ToMicros(p.started_at) != 0) d["startedUs"] = ToMicros(p.started_at);
  if (ToMicros(p.finished_at) != 0) d["finishedUs"] = ToMicros(p.finished_at);
  std::string what = p.phase == "Lost" ? "lost (" + p.lost_reason + ")"
                     : p.oom_killed    ? "OOM-killed"
                     : p.signal != 0   ? "killed by signal " + std::to_string(p.signal)
                                       : "exited " + std::to_string(p.exit_code);
  return EventJson(w.state, "task " + task_id + (p.index >= 0 ? " (array task " + std::to_string(p.index) + ")" : "") +
                                " " + what + " on " + p.node,
                   std::move(d));
}

}  // namespace

void ControlPlane::ProcessTaskReports(const std::vector<TaskReport>& reports, const std::vector<std::string>* also,
                                      LoopWrite how) {
  if (reports.empty() && (also == nullptr || also->empty())) return;
  Time now = clock_.Now();
  std::map<std::string, WorkloadRecord> next;  // working copies, by id
  std::set<std::string> touched;               // those whose tasks changed
  std::map<std::string, std::vector<json>> ended;  // by workload id: a TaskEnded event per task that ended
  for (const TaskReport& rep : reports) {
    auto ref = ParseTaskId(rep.task_id);
    if (!ref.ok()) continue;
    auto it = next.find(ref->workload_id);
    if (it == next.end()) {
      SettleRecord(kWorkloadKind, ref->workload_id);  // a working copy of what is durable
      const WorkloadRecord* cur = ledger_.FindWorkload(ref->workload_id);
      if (cur == nullptr || ref->attempt != cur->attempt()) continue;  // stale: an earlier attempt
      it = next.emplace(cur->id, *cur).first;
    }
    WorkloadRecord& w = it->second;
    for (PlacementRecord& p : w.placements) {
      if (p.group != ref->group || p.replica != ref->replica || p.run != ref->run || p.node != rep.node) continue;
      bool probes_changed = (rep.ready && rep.ready != p.ready) || (rep.live && rep.live != p.live) ||
                            (rep.readiness_run && *rep.readiness_run != p.readiness_run) ||
                            (rep.liveness_run && *rep.liveness_run != p.liveness_run);
      if (rep.ready) p.ready = rep.ready;
      if (rep.live) p.live = rep.live;
      if (rep.readiness_run) p.readiness_run = *rep.readiness_run;
      if (rep.liveness_run) p.liveness_run = *rep.liveness_run;
      if (!rep.address.empty() && rep.address != p.address && !TaskEnded(p)) {
        p.address = rep.address;
        probes_changed = true;  // stored with the report, like a probe change
      }
      const std::string_view phase = wire::TaskPhaseName(rep.phase);  // the placement stores the name
      if (TaskEnded(p) || p.phase == phase) {
        if (probes_changed) touched.insert(w.id);
        break;
      }
      if (rep.phase == wire::TaskPhase::kStopping && p.phase.empty()) p.started_at = rep.started_at;
      p.phase = phase;
      if (rep.phase == wire::TaskPhase::kRunning) p.started_at = rep.started_at;
      if (wire::IsFinal(rep.phase)) {
        if (ToMicros(p.started_at) == 0) p.started_at = rep.started_at;
        p.finished_at = rep.finished_at;
        p.exit_code = rep.exit_code;
        p.signal = rep.signal;
        p.oom_killed = rep.oom_killed;
        p.stopped = rep.stopped;
        p.message = rep.message;
        p.lost_reason =
            rep.phase == wire::TaskPhase::kLost ? (rep.lost_reason.empty() ? "AgentRestart" : rep.lost_reason) : "";
        p.results = rep.results;
        p.results_error = rep.results_error;
        ended[w.id].push_back(TaskEndedEvent(w, p, rep.task_id));
      }
      touched.insert(w.id);
      break;
    }
  }
  if (also != nullptr) {
    for (const auto& id : *also) {
      if (next.count(id) != 0) continue;
      SettleRecord(kWorkloadKind, id);
      if (const WorkloadRecord* cur = ledger_.FindWorkload(id)) next.emplace(id, *cur);
    }
  }
  CommitReconciledOnLoop(std::move(next), touched, std::move(ended), now, nullptr, [](const Status&) {});
  if (how == LoopWrite::kSettled) commits_.SettleAll();
}

void ControlPlane::CommitReconciledOnLoop(std::map<std::string, WorkloadRecord> next,
                                          const std::set<std::string>& touched,
                                          std::map<std::string, std::vector<json>> ended, Time now,
                                          PendingRequestAudit* audit, Written then) {
  // Decide (the kind's controller), then commit every changed workload with its events in one
  // batch.
  std::vector<std::string> changed;
  std::vector<OpRef> puts;  // changed[i]'s Put: its version after the commit
  WriteBatch batch;
  std::vector<govern::AuditRecord> decisions;  // committed with the batch
  for (auto& [id, w] : next) {
    std::vector<std::pair<std::string, json>> events;
    std::vector<PlacementRecord> ended_parts;  // as they ended, before the controller removes any
    for (const PlacementRecord& p : w.placements) {
      if (TaskEnded(p)) ended_parts.push_back(p);
    }
    bool decided = RunController(w, events, batch, decisions, now);
    if (touched.count(id) == 0 && !decided) continue;
    puts.push_back(batch.PutJson(kWorkloadKind, w.id, ToJson(w), w.version).LastOp());
    usage_->Stage(ledger_.FindWorkload(id), w, batch, now, &ended_parts);
    for (const json& e : ended[id]) batch.AppendEventJson(kWorkloadKind, w.id, "TaskEnded", e, now);
    for (auto& [type, details] : events) batch.AppendEventJson(kWorkloadKind, w.id, type, details, now);
    changed.push_back(id);
  }
  if (changed.empty()) {
    steps_.staged.Settle(false, metrics_.labeled);
    return then(Status::OK());
  }
  // The loop goes on while the batch commits (loop_commits.h); once it is done the copies move
  // into the ledger and are published, or are forgotten when it failed (the agents report again
  // with their next heartbeat; the failure hook reloads the usage staged with them).
  auto copies = std::make_shared<std::map<std::string, WorkloadRecord>>(std::move(next));
  StagedActions staged = std::exchange(steps_.staged, StagedActions{});
  CommitForRequestOnLoop(audit, std::move(batch), std::move(decisions),
                         [this, copies, changed = std::move(changed), puts = std::move(puts),
                          staged = std::move(staged), then = std::move(then)](const Committer::Async& done) mutable {
                           staged.Settle(done.status.ok(), metrics_.labeled);
                           if (!done.status.ok()) {
                             ABACUS_LOG_ERROR("task reports not committed: {}", done.status.ToString());
                             return then(done.status);
                           }
                           bool freed = false;
                           {
                             WriterLock lock(state_mu_);
                             for (size_t i = 0; i < changed.size(); ++i) {
                               WorkloadRecord& w = copies->at(changed[i]);
                               w.version = done.result.AssignedTo(puts[i]);
                               if (const WorkloadRecord* cur = ledger_.FindWorkload(w.id)) {
                                 const bool held = cur->holds_quota();
                                 // units removed (elastic_units.h)
                                 const bool shrank = w.placements.size() < cur->placements.size();
                                 if ((held && !w.holds_quota()) || shrank) freed = true;
                               }
                               if (w.state != WorkloadState::kPreempting) steps_.preempting.erase(w.id);
                               ledger_.PutWorkload(std::move(w));  // the working copy moves in (and into the holder index)
                             }
                           }
                           for (const auto& id : changed) Publish(*ledger_.FindWorkload(id));
                           pacer_.Changed();
                           if (freed) pacer_.Freed();
                           then(Status::OK());
                         });
}

}  // namespace abacus::server

// ControlPlane: operator control of nodes, workloads and queues (server/fleet.h). Everything runs
// on the loop thread (RunOnLoop): the change is committed with its event (and the request's audit
// entry), then put in the ledger; a stop goes to the agents through Publish.
#include <charconv>
#include <functional>
#include <set>

#include "common/log.h"
#include "common/mutex.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"
#include "server/desired_tasks.h"
#include "server/elastic_units.h"
#include "server/fleet.h"
#include "server/node_history.h"

namespace abacus::server {

using nlohmann::json;

std::string_view WorkloadControlName(WorkloadControl c) {
  switch (c) {
    case WorkloadControl::kHold: return "hold";
    case WorkloadControl::kRelease: return "release";
    case WorkloadControl::kSuspend: return "suspend";
    case WorkloadControl::kResume: return "resume";
    case WorkloadControl::kRequeue: return "requeue";
  }
  return "hold";
}

std::string HoldCode(const WorkloadRecord& r) {
  if (r.hold == "Suspended") return "Suspended";
  if (!r.hold.empty()) return "Held";
  return "QueueSuspended";
}

namespace {

std::string StateName(const WorkloadRecord& r) { return std::string(WorkloadStateName(r.state)); }

// Moves `r` (Admitted or Running) to Preempting for an operator: its tasks get the checkpoint
// signal and grace (desired_tasks.h), and once they stopped it is requeued with `reason`.
Status StopForOperator(WorkloadRecord& r, RequeueReason reason, const std::string& message, Time now) {
  ABACUS_RETURN_IF_ERROR(Transition(r.state, WorkloadState::kPreempting));
  r.preempted_at = now;
  r.evict_reason = reason;
  r.message = message;
  return Status::OK();
}

}  // namespace

void ControlPlane::CommitWorkloadControlOnLoop(WorkloadRecord next, const std::string& event, json details,
                                               PendingRequestAudit* audit, Written then) {
  Time now = clock_.Now();
  const WorkloadRecord* cur = ledger_.FindWorkload(next.id);
  WriteBatch batch;
  const OpRef put = batch.PutJson(kWorkloadKind, next.id, ToJson(next), next.version).LastOp();
  usage_->Stage(cur, next, batch, now);
  batch.AppendEventJson(kWorkloadKind, next.id, event, EventJson(next.state, next.message, std::move(details)), now);
  const std::string id = next.id;
  CommitRecordOnLoop(std::move(batch), put, std::move(next), audit, [this, id, then = std::move(then)](const Status& st) {
    if (st.ok()) {
      const WorkloadRecord& r = *ledger_.FindWorkload(id);
      if (r.state == WorkloadState::kPreempting) steps_.preempting.insert(r.id);
      Publish(r);
      pacer_.RetryAll();
    }
    then(st);
  });
}

// ---------------------------------------------------------------- nodes

Result<NodeView> ControlPlane::CordonNode(const std::string& name, bool cordon, const std::string& by,
                                          const std::string& reason, RequestContext* context) {
  ABACUS_RETURN_IF_ERROR(AnswerOnLoop<Status>(context, [this, name, cordon, by, reason](const LoopReply<Status>& reply) {
    commits_.SettleAll();  // a node change reads what is durable
    CordonOnLoop(name, cordon, by, reason, reply.audit(), [reply](const Status& st) { reply(st); });
  }));
  return GetNode(name);
}

void ControlPlane::CordonOnLoop(const std::string& name, bool cordon, const std::string& by, const std::string& reason,
                                PendingRequestAudit* audit, Written then) {
  const NodeRecord* n = ledger_.FindNode(name);
  if (n == nullptr) return then(NotFound("node '" + name + "' not found (abacus get nodes lists them)"));
  NodeRecord next = *n;
  if (cordon) {
    if (n->cordon.state != NodeState::kReady) return then(Status::OK());  // already
    next.cordon = NodeCordonRecord{NodeState::kCordoned, clock_.Now(), Time{}, false, by, reason};
  } else {
    if (n->cordon.state == NodeState::kReady && n->health.probation.empty()) {
      return then(Status::OK());  // not cordoned, no device waiting out its probation
    }
    next.cordon = NodeCordonRecord{};
    ClearHealthOnUncordon(next);  // an operator's word ends a device's probation too
    steps_.draining_nodes.erase(name);
  }
  CommitNodeOnLoop(std::move(next), cordon ? "Cordoned" : "Uncordoned", {{"by", by}, {"reason", reason}}, audit,
                   std::move(then));
}

bool DrainStopsNow(const Ledger& ledger, const WorkloadRecord& w, const NodeRecord& n, Time now) {
  if (n.cordon.state != NodeState::kDraining) return false;
  const PriorityClass* pc = ledger.config().FindPriorityClass(w.spec.priority_class);
  const bool preemptible = pc != nullptr && pc->preemptible;
  return preemptible || n.cordon.requeue_all || now >= n.cordon.deadline;
}

Result<NodeView> ControlPlane::DrainNode(const std::string& name, const DrainOrder& order,
                                         RequestContext* context) {
  if (order.grace.count() < 0) return InvalidArgument("grace: must not be negative");
  ABACUS_RETURN_IF_ERROR(RunOnLoop(context, [this, name, order](PendingRequestAudit* audit) -> Result<json> {
                           ABACUS_RETURN_IF_ERROR(DrainOnLoop(name, order, audit));
                           return json::object();
                         })
                             .status());
  return GetNode(name);
}

Status ControlPlane::DrainOnLoop(const std::string& name, const DrainOrder& order, PendingRequestAudit* audit) {
  const NodeRecord* n = ledger_.FindNode(name);
  if (n == nullptr) return NotFound("node '" + name + "' not found (abacus get nodes lists them)");
  if (n->cordon.state == NodeState::kDrained) return Status::OK();  // nothing left
  NodeRecord next = *n;
  Time now = clock_.Now();
  // A second drain may shorten the grace or ask for all at once; never lengthen it.
  Time deadline = now + order.grace;
  if (n->cordon.state == NodeState::kDraining && n->cordon.deadline < deadline) deadline = n->cordon.deadline;
  next.cordon = NodeCordonRecord{NodeState::kDraining,
                                 n->cordon.state == NodeState::kDraining ? n->cordon.since : now,
                                 deadline,
                                 order.requeue_all || n->cordon.requeue_all,
                                 order.by,
                                 order.reason};
  const int64_t grace_s = std::chrono::duration_cast<std::chrono::seconds>(order.grace).count();
  ABACUS_RETURN_IF_ERROR(CommitNode(std::move(next), "DrainStarted",
                                    {{"by", order.by},
                                     {"reason", order.reason},
                                     {"graceSeconds", grace_s},
                                     {"requeueAll", order.requeue_all}},
                                    audit));
  steps_.draining_nodes.insert(name);
  ProgressDrains(true);
  commits_.SettleAll();  // the drain's answer shows what it stopped, and Drained for an empty node
  return Status::OK();
}

void ControlPlane::ProgressDrains(bool force) {
  if (steps_.draining_nodes.empty()) return;
  Time now = clock_.Now();
  if (!steps_.drains.Due(now, force)) return;
  commits_.SettleAll();  // what follows makes working copies of durable records
  // 1) Per Draining node, the workloads that hold something there, and those to stop now:
  // preemptible ones, every one with --requeue, every one once the grace is over.
  std::map<std::string, std::vector<std::string>> to_stop;  // workload id → nodes
  std::set<std::string> settle;                             // elastic workloads: only units there
  std::vector<std::string> drained;
  std::map<std::string, bool> holding;  // node → something holds there
  for (auto it = steps_.draining_nodes.begin(); it != steps_.draining_nodes.end();) {
    const NodeRecord* n = ledger_.FindNode(*it);
    if (n == nullptr || n->cordon.state != NodeState::kDraining) {
      it = steps_.draining_nodes.erase(it);
    } else {
      holding[*it] = false;
      ++it;
    }
  }
  if (holding.empty()) return;
  for (const auto& [id, r] : ledger_.workloads()) {
    if (!r.holds_quota()) continue;
    for (const auto& p : r.placements) {
      auto h = holding.find(p.node);
      if (h == holding.end()) continue;
      h->second = true;
      if (r.state == WorkloadState::kPreempting) continue;  // on its way out
      if (!DrainStopsNow(ledger_, r, *ledger_.FindNode(p.node), now)) continue;
      // A service's replica (a batch's slot) leaves alone, replaced elsewhere (SettleUnits); other
      // work leaves whole.
      if (IsElastic(r) && (r.state == WorkloadState::kAdmitted || r.state == WorkloadState::kRunning)) {
        settle.insert(id);
      } else {
        to_stop[id].push_back(p.node);
      }
    }
  }
  // 2) Stop them (checkpoint signal first), each requeued as Drained once its tasks ended. Each
  // stop's commit starts and the next one goes on (a node's workloads reach the disk together).
  for (const auto& [id, nodes] : to_stop) {
    const WorkloadRecord* cur = ledger_.FindWorkload(id);
    if (cur == nullptr || !CanTransition(cur->state, WorkloadState::kPreempting)) continue;
    WorkloadRecord next = *cur;
    const NodeRecord* n = ledger_.FindNode(nodes.front());
    std::string message = "node " + nodes.front() + " is draining (by " + n->cordon.by +
                          (n->cordon.reason.empty() ? "" : ": " + n->cordon.reason) + "); requeued once stopped";
    if (!StopForOperator(next, RequeueReason::kDrained, message, now).ok()) continue;
    CommitWorkloadControlOnLoop(std::move(next), "Draining", {{"node", nodes.front()}}, nullptr,
                                [node = nodes.front(), id = id](const Status& st) {
                                  if (!st.ok()) ABACUS_LOG_ERROR("drain of {}: {} not stopped: {}", node, id, st.ToString());
                                });
  }
  if (!settle.empty()) {
    std::vector<std::string> ids(settle.begin(), settle.end());
    ProcessTaskReports({}, &ids, LoopWrite::kSettled);  // SettleUnits stops and removes the units on draining nodes
  }
  // 3) A node where nothing holds anything any more is Drained (its commit starts; the loop goes
  // on, and the next step that reads the node settles it).
  for (const auto& [name, held] : holding) {
    if (held) continue;
    NodeRecord next = *ledger_.FindNode(name);
    next.cordon.state = NodeState::kDrained;
    json details = {{"by", next.cordon.by}};
    CommitNodeOnLoop(std::move(next), "Drained", std::move(details), nullptr, [this, name = name](const Status& st) {
      if (!st.ok()) {
        ABACUS_LOG_ERROR("drain of {}: not marked Drained: {}", name, st.ToString());
        return;
      }
      steps_.draining_nodes.erase(name);
      ABACUS_LOG_INFO("node {} drained", name);
    });
  }
}

// ---------------------------------------------------------------- workloads

Result<WorkloadView> ControlPlane::ControlWorkload(const std::string& id_or_name, WorkloadControl what,
                                                  const std::string& by, RequestContext* context) {
  using Answer = Result<WorkloadView>;
  return AnswerOnLoop<Answer>(context, [this, id_or_name, what, by](const LoopReply<Answer>& reply) {
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return reply(NotFound("workload '" + id_or_name + "' not found"));
    const std::string id = found->id;
    SettleRecord(kWorkloadKind, id);  // a working copy of what is durable
    WorkloadRecord next = *ledger_.FindWorkload(id);
    const std::string name = next.spec.name;
    const std::string verb(WorkloadControlName(what));
    if (IsTerminal(next.state)) {
      return reply(FailedPrecondition("workload " + name + " (" + next.id + ") is " + StateName(next) +
                                      ": nothing to " + verb));
    }
    std::string event;
    json details = {{"by", by}};
    switch (what) {
      case WorkloadControl::kHold:
        if (!next.waiting()) {
          return reply(FailedPrecondition("workload " + name + " is " + StateName(next) +
                                          ": hold keeps waiting work out of scheduling; to stop it and keep it out, run "
                                          "`abacus suspend " + name + "`"));
        }
        if (next.hold == "Held") return reply(View(next));
        if (next.hold == "Suspended") {
          return reply(FailedPrecondition("workload " + name + " is suspended: `abacus resume " + name + "` ends that"));
        }
        next.hold = "Held";
        next.hold_by = by;
        next.message = "held by " + by;
        event = "Held";
        break;
      case WorkloadControl::kRelease:
        // Released already (or never held): nothing to do, as a second hold or suspend.
        if (next.hold.empty()) return reply(View(next));
        if (next.hold != "Held") {
          return reply(FailedPrecondition("workload " + name + " is not held but suspended: run `abacus resume " +
                                          name + "`"));
        }
        next.hold.clear();
        next.hold_by.clear();
        next.message = "released by " + by;
        event = "Released";
        break;
      case WorkloadControl::kSuspend:
        if (next.hold == "Suspended") return reply(View(next));
        next.hold = "Suspended";
        next.hold_by = by;
        next.message = "suspended by " + by;
        if (next.state == WorkloadState::kAdmitted || next.state == WorkloadState::kRunning) {
          Status st = StopForOperator(next, RequeueReason::kSuspended,
                                      "suspended by " + by + "; stopping (checkpoint signal first)", clock_.Now());
          if (!st.ok()) return reply(st);
        }
        event = "Suspended";
        break;
      case WorkloadControl::kResume:
        if (next.hold.empty()) return reply(View(next));  // resumed already, or never suspended
        if (next.hold != "Suspended") {
          return reply(FailedPrecondition("workload " + name + " is not suspended but held: run `abacus release " +
                                          name + "`"));
        }
        next.hold.clear();
        next.hold_by.clear();
        next.message = "resumed by " + by;
        event = "Resumed";
        break;
      case WorkloadControl::kRequeue:
        // Waiting already, or on its way back (a requeue asked twice): what was asked holds.
        if (next.waiting() || next.state == WorkloadState::kPreempting) return reply(View(next));
        if (next.state != WorkloadState::kAdmitted && next.state != WorkloadState::kRunning) {
          return reply(FailedPrecondition("workload " + name + " is " + StateName(next) +
                                          ": only Admitted or Running work can be requeued"));
        }
        Status st = StopForOperator(next, RequeueReason::kRequeued,
                                    "requeued by " + by + "; stopping (checkpoint signal first)", clock_.Now());
        if (!st.ok()) return reply(st);
        event = "RequeueRequested";
        break;
    }
    CommitWorkloadControlOnLoop(next, event, details, reply.audit(), AnswerWithView(*this, id, reply));
  });
}

Result<WorkloadView> ControlPlane::SetWorkloadPriority(const std::string& id_or_name,
                                                      const std::string& priority, const std::string& by,
                                                      RequestContext* context) {
  if (priority.empty()) return InvalidArgument("priority: expected an integer or a priority class name");
  std::optional<int32_t> value;
  if (priority.find_first_not_of("-0123456789") == std::string::npos) {
    int32_t v = 0;
    auto [end, ec] = std::from_chars(priority.data(), priority.data() + priority.size(), v);
    if (ec != std::errc() || end != priority.data() + priority.size()) {
      return InvalidArgument("priority: '" + priority + "' is not a 32-bit integer");
    }
    value = v;
  }
  using Answer = Result<WorkloadView>;
  return AnswerOnLoop<Answer>(context, [this, id_or_name, priority, value, by](const LoopReply<Answer>& reply) {
    commits_.SettleAll();  // it reads the priority classes an apply may change
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return reply(NotFound("workload '" + id_or_name + "' not found"));
    const std::string id = found->id;
    WorkloadRecord next = *found;
    if (IsTerminal(next.state)) {
      return reply(FailedPrecondition("workload " + next.spec.name + " is " + StateName(next) +
                                      ": its priority no longer matters"));
    }
    const PriorityClass* old_pc = ledger_.config().FindPriorityClass(next.spec.priority_class);
    json details = {{"by", by},
                    {"from", next.priority ? json(*next.priority) : json(old_pc != nullptr ? old_pc->value : 0)},
                    {"fromClass", next.spec.priority_class}};
    if (value) {
      next.priority = *value;
    } else {
      const PriorityClass* pc = ledger_.config().FindPriorityClass(priority);
      if (pc == nullptr) {
        std::string known;
        for (const PriorityClass* c : ledger_.config().AllPriorityClasses()) known += (known.empty() ? "" : ", ") + c->name;
        return reply(InvalidArgument("priority: no priority class '" + priority + "' (known: " + known +
                                     "); give a class name or an integer"));
      }
      next.spec.priority_class = pc->name;
      next.priority.reset();
    }
    if (next.priority == found->priority && next.spec.priority_class == found->spec.priority_class) {
      return AnswerWithView(*this, id, reply)(Status::OK());  // already so: no change, no event
    }
    const PriorityClass* new_pc = ledger_.config().FindPriorityClass(next.spec.priority_class);
    details["to"] = next.priority ? *next.priority : (new_pc != nullptr ? new_pc->value : 0);
    details["toClass"] = next.spec.priority_class;
    next.message = "priority set to " + details["to"].dump() + " by " + by;
    CommitWorkloadControlOnLoop(next, "PriorityChanged", details, reply.audit(), AnswerWithView(*this, id, reply));
  });
}

// ---------------------------------------------------------------- queues

std::string QueueNotFound(const std::string& queue) {
  return "queue '" + queue + "' not found (abacus get queues lists them)";
}

Result<QueueSuspendView> ControlPlane::SuspendQueue(const std::string& queue, bool suspend,
                                                    const std::string& by, RequestContext* context) {
  using Answer = Result<QueueSuspendView>;
  return AnswerOnLoop<Answer>(context, [this, queue, suspend, by](const LoopReply<Answer>& reply) {
    commits_.SettleAll();  // it reads the queues an apply may change
    if (ledger_.config().FindQueue(queue) == nullptr) {
      return reply(NotFound(QueueNotFound(queue)));
    }
    auto cur = ledger_.suspended_queues().find(queue);
    const bool is = cur != ledger_.suspended_queues().end();
    Time now = clock_.Now();
    QueueSuspension s = is ? cur->second : QueueSuspension{by, now};
    const QueueSuspendView out{queue, suspend ? std::optional<QueueSuspension>(s) : std::nullopt};
    if (is == suspend) return reply(out);
    WriteBatch batch;
    if (suspend) {
      batch.PutJson(kQueueSuspensionKind, queue, json({{"by", by}, {"sinceUs", ToMicros(now)}}));
    } else {
      batch.Delete(kQueueSuspensionKind, queue);
    }
    batch.AppendEventJson("queue", queue, suspend ? "Suspended" : "Resumed", json({{"by", by}}), now);
    CommitForRequestOnLoop(reply.audit(), std::move(batch), {}, [this, out, reply](const Committer::Async& done) {
      if (!done.status.ok()) return reply(done.status);
      {
        WriterLock lock(state_mu_);
        ledger_.SetQueueSuspended(out.queue, out.suspension);
      }
      pacer_.Changed();
      pacer_.RetryAll();
      reply(out);
    });
  });
}

Result<StoredEventsView> ControlPlane::NodeEvents(const std::string& name) const {
  {
    ReaderLock lock(state_mu_);
    if (ledger_.FindNode(name) == nullptr) return NotFound("node '" + name + "' not found (abacus get nodes lists them)");
  }
  ABACUS_ASSIGN_OR_RETURN(auto events, store_->Events(kNodeKind, name));
  return StoredEventsView{name, std::move(events)};
}

}  // namespace abacus::server

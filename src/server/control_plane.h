// ControlPlane: the server's core, without HTTP. It owns the store, the in-memory ledger and the
// scheduling loop, and commits through governance's one committer (DESIGN §2; the rooms and
// their arrows: docs/architecture.md §2; its options: control_plane_options.h):
//
//   - HTTP threads validate a request and persist a submission through the Committer (a write
//     is acknowledged only after its transaction commits), then hand it to the loop's inbox;
//     other writes (cancel, scale, apply, node changes, registration) run as commands on the
//     loop thread, the only writer of the ledger, which starts their commit and answers once it
//     settled (docs/concurrency.md).
//   - The loop drains the inbox and commands, and runs a scheduling cycle when something
//     changed (coalesced: at most one cycle per min_cycle_gap) and on a timer. Decisions are
//     made on working copies of the records, committed in one batch, and swapped into the
//     ledger and published once durable; a failed commit leaves the ledger as it was.
//   - Readers take a shared lock on the ledger; newly submitted workloads not yet ingested by
//     the loop are visible through the inbox, so a client reads its own writes.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "common/blocking_region.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/mutex.h"
#include "control/controller.h"
#include "meter/price_list.h"
#include "meter/usage_ledger.h"
#include "sched/scheduler.h"
#include "server/agent_answers.h"
#include "server/agent_telemetry.h"
#include "server/assignments.h"
#include "server/audit_watch.h"
#include "server/auth.h"
#include "server/change_feed.h"
#include "server/store_via_committer.h"
#include "server/task_report.h"
#include "server/device_health.h"
#include "server/fair_share_book.h"
#include "server/fencing.h"
#include "server/fleet.h"
#include "server/governance.h"
#include "server/idempotency.h"
#include "server/ledger.h"
#include "server/control_plane_options.h"
#include "server/cycle_pacer.h"
#include "server/loop_commits.h"
#include "server/loop_inbox.h"
#include "server/loop_steps.h"
#include "server/usage_sync.h"
#include "server/metrics.h"
#include "server/read_views.h"
#include "server/secrets.h"
#include "server/write_views.h"
#include "store/data_folder_lock.h"
#include "store/store.h"
#include "workload/label_selector.h"
#include "wire/agent_protocol.h"
#include "wire/task_phase.h"

namespace abacus::server {

// Query filters of GET /api/v1/workloads.
struct WorkloadFilter {
  std::string queue, state, project, tenant, kind, name;
  std::string user;         // submitted by this user (submittedBy)
  LabelSelector selector;   // ?labelSelector= (-l)
  const std::unordered_set<std::string>* ids = nullptr;  // only these ids (a watch's changes); null: all
  size_t limit = 1000;
  std::function<bool(const Workload&)> visible;  // the caller's view (governance); null: all
};

// The message of a queue's 404 on the queue routes (POST /api/v1/queues/Q/suspend, …): the same
// for a missing queue and for one the caller may not see.
std::string QueueNotFound(const std::string& queue);

class ControlPlane {
 public:
  // Opens the store, rebuilds the ledger, loads or creates the tokens, and starts the
  // committer and the loop.
  static Result<std::unique_ptr<ControlPlane>> Open(const ControlPlaneOptions& options);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Stops the loop (finishing the command in progress), drains the committer and closes the
  // store. Idempotent.
  void Shutdown();
  // Stops the scheduling loop and the controllers (finishing the step in progress) and leaves
  // the rest running until Shutdown: a leader that lost its lease (HA) stops deciding at once
  // while its HTTP requests in flight finish. Idempotent.
  void StopLoop();

  // ---- writes; each returns only after its transaction committed.
  // Submits every workload document of `body` (YAML, or JSON when `json_body`); all or none.
  // InvalidArgument carries one "FILE:LINE: field: message" line per problem.
  // `caller`: the HTTP caller, authorized per workload (null: a trusted in-process caller);
  // admission policies apply to every caller. A keyed `request` (server/idempotency.h) that
  // repeats an earlier one of the same user returns the first answer and submits nothing.
  // `dry_run` (?dryRun=1, issue 23): every check of a submission (documents, references, roles,
  // admission policies, names), then where each workload would go if the scheduler ran now
  // ("dryRun" in each item: DryRunExplain), storing nothing.
  // `context`: the HTTP request served (request_context.h; null: none): its audit entry commits
  // with the workloads, and it learns what was submitted, replayed or audited. The same for the
  // `context` of every write below.
  // Returns the workloads submitted (with a dry run, where each would go; a repeat, the first
  // answer: Keyed::encoded).
  Result<Keyed<SubmitView>> Submit(std::string_view body, bool json_body, const std::string& filename,
                                   const govern::Principal* caller, const IdempotentRequest& request,
                                   bool dry_run, RequestContext* context);
  // Applies tenancy documents (tenants, projects, cohorts, queues, priority classes, flavors,
  // pools); returns what it did to each (kind, name, action).
  // Also User and AdmissionPolicy documents (governance), in the same commit. `caller`: the
  // HTTP caller, authorized per document (null: a trusted in-process caller). A keyed
  // `request` that repeats an earlier one returns its first answer and applies nothing.
  // `dry_run`: every check of an apply, then each document's action and its diff against what
  // the server holds (AppliedView::diff, [{path, from, to}]), storing nothing. `only_kind`
  // (a per-kind route's, "Queue"): a document of another kind is refused, naming its line.
  Result<Keyed<std::vector<AppliedView>>> Apply(std::string_view body, bool json_body,
                                                const std::string& filename,
                                                const govern::Principal* caller,
                                                const IdempotentRequest& request, bool dry_run,
                                                RequestContext* context, std::string_view only_kind = {});
  // Where `records` (not stored) would go if a scheduling cycle ran now with every workload the
  // ledger holds: one DryRunView (admitted with placements, or pending with a reason) per
  // record, in order (dry_run.cc). Runs on the loop; changes nothing.
  Result<std::vector<DryRunView>> DryRunExplain(const std::vector<WorkloadRecord>& records);
  // AlreadyExists as ClaimNames would answer for `records`, without claiming the names.
  Status CheckNamesFree(const std::vector<WorkloadRecord>& records);
  // Cancels a workload (id or name); returns its view. FailedPrecondition when it already
  // finished. A keyed `request` that repeats an earlier one returns its first answer
  // (Keyed::encoded), even once finished.
  Result<Keyed<WorkloadView>> Cancel(const std::string& id_or_name, const std::string& reason,
                                     const IdempotentRequest& request, RequestContext* context);
  // Scales an InferenceService (replicas) or a BatchJob (parallelism); returns its view. A keyed
  // `request` that repeats an earlier one returns its first answer and scales nothing again.
  Result<Keyed<WorkloadView>> Scale(const std::string& id_or_name, int32_t replicas,
                                    const IdempotentRequest& request, RequestContext* context);
  // A tenant admin's answer to an Experiment's pending temporary quota request
  // (POST /workloads/{id}/quota): its controller grants or rejects it at once. FailedPrecondition
  // when the workload asks none or the request is not pending. Returns the workload's view.
  Result<WorkloadView> DecideTemporaryQuota(const std::string& id_or_name, bool approve,
                                            const std::string& by, RequestContext* context);
  // Keeps the metric samples of an InferenceService's replicas for its autoscaler
  // (POST /workloads/{id}/metrics): {"metric", "value", "replica"} or {"samples": [...]};
  // samples older than two minutes are dropped. Returns how many were taken.
  Result<MetricsAcceptedView> ReportMetrics(const std::string& id_or_name, const nlohmann::json& body);
  // Adds or replaces a node (simulated ones come from --demo or the API); returns its record
  // as stored.
  Result<NodeRecord> PutNode(const nlohmann::json& body, RequestContext* context);
  // Updates the mutable fields of a workload that exists (workload_update.h) to those of the
  // one workload document `body` (PUT), or of its document merged with the JSON `body` (PATCH,
  // RFC 7386, `merge_patch`), or to revision `rollback_to` (0: the one before the newest;
  // -1: no rollback). Admission policies apply as on submit; the event `Updated` and the audit
  // entry carry the diff. Returns the view with the diff, revision and whether unchanged; with
  // immutable fields changed, InvalidArgument and their paths in `*immutable` (the API answers
  // 422). `dry_run`: the same checks and diff (UpdateView::dry_run), nothing stored.
  Result<UpdateView> UpdateWorkload(const std::string& id_or_name, std::string_view body, bool json_body,
                                    bool merge_patch, int32_t rollback_to, const govern::Principal* caller,
                                    std::vector<std::string>* immutable, bool dry_run,
                                    RequestContext* context);
  // The revisions of a workload, oldest first (read_views.h); NotFound.
  Result<RevisionsView> Revisions(const std::string& id_or_name) const;

  // ---- operator control (fleet.cc, server/fleet.h); `by` is the user who asks (audited).
  // Cordons (`cordon`) or uncordons a node, agent-run or simulated: a cordoned node takes no new
  // work; what runs there keeps running. Uncordoning also ends a drain. NotFound for no node.
  // Returns the node's view.
  Result<NodeView> CordonNode(const std::string& name, bool cordon, const std::string& by,
                              const std::string& reason, RequestContext* context);
  // Drains a node (cordon, then requeue its work: preemptible work at once, the rest once it
  // ended or the grace passed; every workload at once with `order.requeue_all`); the node is
  // Drained when no workload holds anything there. Returns the node view.
  Result<NodeView> DrainNode(const std::string& name, const DrainOrder& order,
                             RequestContext* context);
  // hold/release, suspend/resume and requeue of one workload (WorkloadControl); returns its view.
  // FailedPrecondition, saying what to do instead, when the state does not allow it.
  Result<WorkloadView> ControlWorkload(const std::string& id_or_name, WorkloadControl what,
                                      const std::string& by, RequestContext* context);
  // Sets a workload's priority: an integer replaces its class's value, a priority class name
  // replaces the class; returns its view. InvalidArgument for neither; FailedPrecondition once
  // it finished.
  Result<WorkloadView> SetWorkloadPriority(const std::string& id_or_name, const std::string& priority,
                                          const std::string& by, RequestContext* context);
  // Suspends (`suspend`) or resumes a queue: a suspended queue admits nothing new; its running
  // work keeps running. Returns the queue's suspension. NotFound for no queue.
  Result<QueueSuspendView> SuspendQueue(const std::string& queue, bool suspend, const std::string& by,
                                        RequestContext* context);

  // ---- reads
  // The id of the workload a WORKLOAD argument names, looking only at those `visible` accepts
  // (null: all): an id, else the one active workload of that name, else (none active) the latest
  // of that name when all of them are of one project. NotFound when none is visible;
  // FailedPrecondition listing the ids when the name is ambiguous (workload_names.cc).
  Result<std::string> ResolveWorkload(const std::string& id_or_name,
                                      const std::function<bool(const Workload&)>& visible) const;
  // Returns the workload an id or name names (ledger or inbox) with its status; NotFound.
  Result<WorkloadView> GetWorkload(const std::string& id_or_name) const;
  // Calls `use` once with the workloads `filter` matches, under the shared state lock: the rows
  // point at the ledger's records, valid only during the call (read_views.h).
  void ListWorkloads(const WorkloadFilter& filter,
                     const std::function<void(const WorkloadListView&)>& use) const;
  // GET /api/v1/workloads/W/explain: where the workload stands and why; NotFound.
  Result<ExplainView> Explain(const std::string& id_or_name) const;
  // GET /api/v1/workloads/W/events: the workload's stored events, oldest first; NotFound.
  Result<StoredEventsView> Events(const std::string& id_or_name) const;
  // The log of one task of a workload: `task` is a task id, "GROUP.REPLICA" or empty (the first
  // task of the latest attempt); `stream` stdout or stderr; at most the last `tail_bytes`.
  Result<TaskLogView> Logs(const std::string& id_or_name, const std::string& task = "",
                           const std::string& stream = "stdout", int64_t tail_bytes = 1 << 20) const;

  // ---- agents (docs/agent-protocol.md); `node` is the node of the caller's credential.
  // Registers or re-registers a node run by an agent; returns its credential. A node registered
  // by an agent is registered again only with its credential (`"credential"` in the request):
  // FailedPrecondition otherwise (docs/agent-protocol.md). `context`: the request (null: none).
  Result<wire::RegisterAnswer> RegisterAgent(const nlohmann::json& request, RequestContext* context);
  // Revokes an agent node's credential (POST /api/v1/nodes/{name}/reset, admins): a replaced
  // machine may then register under its name with the join token. NotFound; FailedPrecondition
  // for a node no agent runs. `context`: the request (null: none).
  Result<NodeResetAnswer> ResetNode(const std::string& name, RequestContext* context);
  // Queues task status reports for the loop; answers at once (agents re-report until the task
  // leaves their assignment, so nothing is lost if the server stops before the commit).
  Result<AgentStatusAnswer> AgentStatus(const std::string& node, const nlohmann::json& body);
  // Records liveness, device health and utilization, and re-reported task statuses.
  Status AgentHeartbeat(const std::string& node, const nlohmann::json& body);
  // Appends shipped task output to DATA/logs/<task id>.<stream>; the stored size, with the
  // conflict set when the offset is past it.
  Result<AgentLogsAnswer> AgentLogs(const std::string& node, const nlohmann::json& body);
  // The node's assignment: at once when its version differs from `after`, else after a change
  // or `timeout`.
  Result<AssignmentBoard::Answer> WaitAssignments(const std::string& node, uint64_t after,
                                                  std::chrono::milliseconds timeout);
  // Wakes every long poll and watch (before the HTTP server stops).
  void WakePollers();
  // What changed, for watches (change_feed.h, watch_api.cc).
  ChangeFeed& feed() const { return *feed_; }
  // ---- metering (reports_api.cc)
  struct ReportQuery {
    std::string from, to;  // RFC 3339 or dates; default: the last 30 days
    std::string by;        // grouping, e.g. "tenant,flavor,day"
    std::string format;    // table|csv|json (evidence: md|html|json)
    std::string prices;    // price list name; default: "default", or the only one
    double threshold = -1; // idle report: utilization below this is idle (default 0.05)
    // labelSelector (k=v,k!=v,k,!k): only the rows of workloads whose labels match; quotas,
    // capacity and the inventory are not workload rows and stay whole.
    std::string label_selector;
    // The tenants whose rows the report holds (null: all); rows are kept by the tenant that
    // owns them (the workload's, the queue's).
    std::function<bool(const std::string& tenant)> tenant_visible;
  };
  struct ReportOutput {
    std::string content_type;
    std::string body;
  };
  // Renders report `kind`: usage, wait, failures, idle, shortages, borrowing or evidence.
  Result<ReportOutput> Report(const std::string& kind, const ReportQuery& query) const;
  // Price lists applied so far.
  std::vector<meter::PriceList> ListPriceLists() const;

  // Device utilization last reported per node and device index (0..1).
  AgentTelemetry::Utilization DeviceUtilization() const { return telemetry_.DeviceUtilization(); }
  // Returns every node (read_views.h) with its devices; each device carries its allocated milli,
  // the agent's last reported utilization (when any), and its holders as `visible` sees them
  // (device_holders.h; the rest as hidden sums; null `visible`: every workload is seen).
  std::vector<NodeView> ListNodes(const std::function<bool(const Workload&)>& visible = nullptr) const;
  // Returns the node `name` as ListNodes sees it; NotFound when there is none.
  Result<NodeView> GetNode(const std::string& name,
                           const std::function<bool(const Workload&)>& visible = nullptr) const;
  // GET /api/v1/nodes/{name}/events: the node's stored events, oldest first.
  Result<StoredEventsView> NodeEvents(const std::string& name) const;
  // Returns every device of every node with its allocated milli, naming no holder.
  std::vector<DeviceView> ListDevices() const;
  // Returns every flavor configured or found on a node, by name, with its devices and free milli.
  std::vector<FlavorView> ListFlavors() const;
  // Returns every queue with its workload counts, quota use and borrowing now.
  std::vector<QueueView> ListQueues() const;
  // GET /api/v1/shares (shares_api.h): every queue's fair share over time, like sshare.
  SharesView ListShares() const;
  // Returns the queue `name` as ListQueues sees it; NotFound when there is none.
  Result<QueueView> GetQueue(const std::string& name) const;
  // kind: "tenant", "project", "cohort", "priorityclass", "pool", "cluster", "reservation"
  ConfigListView ListConfig(const std::string& kind) const;
  // DELETE /api/v1/reservations/NAME (reservations_api.cc): removes a reservation (audited);
  // NotFound when there is none. Maintenance nodes it cordoned are uncordoned. Returns
  // {Reservation, name, deleted}.
  Result<AppliedView> DeleteReservation(const std::string& name, RequestContext* context);
  // The declared clusters and those agents registered into, with nodes, pools and devices per
  // flavor ({total, allocatedMilli, unhealthy}).
  std::vector<ClusterView> ListClusters() const;
  // The object of `kind` that `name` names ("TENANT/NAME" or NAME for projects), alone in the
  // list; NotFound.
  Result<ConfigListView> GetConfig(const std::string& kind, const std::string& name) const;
  std::string RenderMetrics() const;

  // Runs `f` with the ledger under the shared lock (tests, views).
  template <typename F>
  auto Read(F&& f) const {
    ReaderLock lock(state_mu_);
    return f(ledger_);
  }
  // Blocks until the loop has ingested everything submitted so far and run a cycle after it.
  void WaitForCycle() { inbox_.WaitForCycle(); }

  // Users, tokens, roles, audit chain, admission policies, rate limits (governance.h).
  Governance& governance() { return *governance_; }
  const Governance& governance() const { return *governance_; }
  SecretVault& secrets() { return *secrets_; }
  ServerMetrics& metrics() { return metrics_; }
  // The background audit chain check (tests run a check with CheckNow).
  AuditWatch& audit_watch() { return *audit_watch_; }
  Store& store() { return *store_; }
  const std::string& data_dir() const { return options_.data_dir; }
  bool ready() const { return ready_.load(); }

 private:
  explicit ControlPlane(const ControlPlaneOptions& options);

  // Records what a committed `batch` changed in the feed (published by the loop).
  void RecordChanges(const WriteBatch& batch, const CommitResult* result);
  // Runs `fn(reply)` on the loop thread for `context` (null: no request) and waits for the
  // answer it gives through `reply` (a LoopReply<R>, holding the request's pending audit entry):
  // at once, or from the continuation of a commit it started (CommitForRequestOnLoop), so that
  // the loop goes on while that commit is on disk. `fn` settles the loop's commits it reads first.
  template <typename R, typename F>
  R AnswerOnLoop(RequestContext* context, F fn);
  // Runs `fn` (Result<T>(PendingRequestAudit*)) on the loop thread for `context` (null: no
  // request), after every commit of the loop in flight settled, and waits for its result.
  template <typename F>
  auto RunOnLoop(RequestContext* context, F fn) -> std::invoke_result_t<F&, PendingRequestAudit*>;
  // Runs `fn` (Result<T>()), which commits nothing for a request, on the loop thread and waits.
  template <typename F>
  auto RunOnLoop(F fn) -> std::invoke_result_t<F&>;
  void Loop();
  // One scheduling cycle, in named steps (control_plane_loop.cc): settle the loop's commits in
  // flight, snapshot, decide, assume the decisions on working copies of the records (admissions,
  // claims released, units grown, preemptions, reasons) and start their commit with their audit
  // entries; once it is done (CycleCommitted, later on the loop) the copies are swapped in and
  // published, and the WaitForCycles of the turn that saw `seen_seq` are answered.
  void RunCycle(uint64_t seen_seq);
  struct CycleWork;  // one cycle's snapshot, decisions and the batch that records them
  void AssumeAdmissions(CycleWork& w);
  void ReleaseStartedClaims(CycleWork& w);
  void FillGrownUnits(CycleWork& w);
  void AssumePreemptions(CycleWork& w);
  void NoteNeverFits(CycleWork& w);
  void KeepPendingReasons(CycleWork& w);
  void CommitCycle(std::shared_ptr<CycleWork> w, uint64_t seen_seq);
  void CycleCommitted(CycleWork& w, const Committer::Async* done, uint64_t seen_seq);
  void PublishCycle(const CycleWork& w);
  // Starts the commit of `batch` with `decisions`, without waiting: every record the batch writes
  // is in flight until `settle` runs on the loop once it is done, after the loop's earlier commits
  // (and after the change feed has the batch when it committed); loop thread only (loop_commits.h).
  void CommitOnLoop(WriteBatch batch, std::vector<govern::AuditRecord> decisions, LoopCommits::Settle settle);
  // Settles the loop's commits up to the last one that writes record `key` of `kind` (a working
  // copy of it is then of what is durable); loop thread only.
  void SettleRecord(std::string_view kind, std::string_view key) { commits_.SettleTouching(RecordCommitId(kind, key)); }
  // What a loop write that does not wait calls once, on the loop: at once when it started no
  // commit (an error, nothing to change), else when its commit settled.
  using Written = std::function<void(const Status&)>;
  // Starts the commit of `batch` for a request and goes on: `audit`'s entry (its pending entry,
  // null: none; it must outlive the commit, as a LoopReply keeps it) goes with `batch` unless an
  // earlier commit claimed it (ClaimRequestAudit; a failed commit frees it again), and so do
  // `decisions` (the controllers' entries); `then` runs on the loop once settled.
  void CommitForRequestOnLoop(PendingRequestAudit* audit, WriteBatch batch,
                              std::vector<govern::AuditRecord> decisions, LoopCommits::Settle then);
  void FinishPreemptions();

  using TaskReport = server::TaskReport;  // task_report.h
  // Whether a loop step waits for its commit (kSettled: the caller reads the result next) or
  // goes on while it commits (kInFlight: the loop's own turn).
  enum class LoopWrite { kSettled, kInFlight };
  // Applies task reports to their workloads (Started, Succeeded, Failed, retries, requeues),
  // commits them in one batch and republishes the assignments once committed; loop thread only.
  // `also`: workloads to reconcile without a report (the controller tick).
  void ProcessTaskReports(const std::vector<TaskReport>& reports, const std::vector<std::string>* also,
                          LoopWrite how);
  // ProcessTaskReports' second half, for working copies already made (by id; `touched`: those
  // changed before their controller runs, `ended`: their TaskEnded events): runs each copy's
  // controller and starts the commit of every changed one, with its events and decisions, for
  // the request `audit` (null: none); once settled the copies move into the ledger and are
  // published. `then` runs with the outcome, at once when nothing changed. Loop only.
  void CommitReconciledOnLoop(std::map<std::string, WorkloadRecord> next, const std::set<std::string>& touched,
                              std::map<std::string, std::vector<nlohmann::json>> ended, Time now,
                              PendingRequestAudit* audit, Written then);
  // Queues the statuses `node`'s agent sent (status report or heartbeat) for the loop;
  // the answer lists the task ids that name no task.
  AgentStatusAnswer QueueTaskStatuses(const std::string& node, const std::vector<wire::TaskStatus>& tasks);
  // ---- controllers (controllers.cc)
  // Whether any task of `r` is placed on an agent node (the others never run).
  bool HasAgentTasks(const WorkloadRecord& r) const;
  control::WorkloadView ViewOf(const WorkloadRecord& r) const;
  control::Signals SignalsFor(const WorkloadRecord& r, Time now) const;
  // Runs the kind's controller on `w` and applies its decisions to it (events into `events`,
  // journal entries into `batch`, audit entries into `decisions`, which commit with `batch`);
  // true when `w` changed.
  bool RunController(WorkloadRecord& w, std::vector<std::pair<std::string, nlohmann::json>>& events,
                     WriteBatch& batch, std::vector<govern::AuditRecord>& decisions, Time now);
  bool ApplyDecision(WorkloadRecord& w, const control::Decision& d,
                     std::vector<std::pair<std::string, nlohmann::json>>& events, WriteBatch& batch,
                     std::vector<govern::AuditRecord>& decisions, Time now);
  // After the decisions: runs again the units whose restart is due (a new run on the same node,
  // or no placement when the node is gone), removes units beyond what `w` wants once their tasks
  // ended (scale-down, released batch slots) and asks ended extra units to stop; true when `w`
  // changed.
  bool SettleUnits(WorkloadRecord& w, std::vector<std::pair<std::string, nlohmann::json>>& events, Time now);
  // Adds unit `unit` of elastic workload `r` where admission `a` of its slice placed it, with
  // its ReplicaPlaced event (loop thread, under state_mu_).
  void AddUnit(const sched::Snapshot& snapshot, const sched::Admission& a, int32_t unit, WorkloadRecord& r,
               WriteBatch& batch, Time now);

  // Reconciles every workload with tasks on agents once a second (time-based rules).
  void TickControllers();
  // Moves every Draining node on: requeues the work the drain may stop now, and marks the node
  // Drained once nothing holds anything there (fleet.cc); `force` skips the once-a-second pace.
  void ProgressDrains(bool force = false);
  // Starts the commit of `next`, a changed copy of a ledger workload, with event `event` (its
  // details plus state and message) and goes on; once it settled it is in the ledger and
  // published (fleet.cc), and `then` runs. `audit`: the pending entry of the request it serves
  // (null: none). Loop only.
  void CommitWorkloadControlOnLoop(WorkloadRecord next, const std::string& event, nlohmann::json details,
                                   PendingRequestAudit* audit, Written then);
  // Marks agent nodes silent past node_timeout NotReady and fails over their tasks once each
  // task's fencing grace has passed too; loop only.
  void CheckNodeLiveness();
  // Agent node `cur` NotReady since `now`, committed with its NotReady event (`reason`
  // AgentShutdown or NodeSilent, `message`); `then` once committed. The one rule of both; loop only.
  void MarkNotReady(const NodeRecord& cur, Time now, const std::string& reason, const std::string& message,
                    PendingRequestAudit* audit, Written then);
  // Reports Lost the tasks of NotReady agent nodes whose fencing grace ended by `now`; loop only.
  void FailOverFencedTasks(Time now);
  // Reports Lost every unfinished task on `node` that `keep` does not accept, ended at
  // `last_known` (when they were last known to run; nullopt: now); loop only.
  void FailOverNodeTasks(const std::string& node, const std::string& why, const std::string& lost_reason,
                         const std::function<bool(const WorkloadRecord&, const PlacementRecord&)>& keep,
                         std::optional<Time> last_known = std::nullopt);
  // Reports Lost every unfinished task on `node` that holds a device now gone or unhealthy.
  void FailOverTasksOnBadDevices(const std::string& node);
  // Uncordons the nodes a deleted maintenance reservation `name` cordoned, each committed before
  // the next. A loop command (it settles what is in flight), not a continuation.
  void UncordonReservationNodes(const std::string& name);
  // After an agent registered `node` (committed): applies the task statuses it sent, then fails
  // over what the server thought ran there but the agent no longer runs (lost at `last_heard`,
  // the previous agent's last call: its tasks died with it), and what holds a bad device. A loop
  // command (it settles what is in flight), not a continuation.
  void ReconcileRegisteredTasks(const std::string& node, std::vector<TaskReport> reported, Time last_heard);
  // Device health (device_health.h): the event's details of `outcome`; its metrics, log lines and
  // audit entries once committed; and, on the loop, the probations and health cordons that ended.
  void AddHealthDetails(const NodeRecord& n, const HealthOutcome& outcome, nlohmann::json& details) const;
  void NoteHealthOutcome(const NodeRecord& n, const HealthOutcome& outcome);
  void SettleNodeHealth(Time now);
  // CordonNode's and DrainNode's work on the loop thread (fleet.cc); also for rules that drain
  // (maintenance reservations). `audit`: the pending entry of the request served (null: none).
  // Cordon's `then` runs once its commit settled (at once when nothing changes).
  void CordonOnLoop(const std::string& name, bool cordon, const std::string& by, const std::string& reason,
                    PendingRequestAudit* audit, Written then);
  Status DrainOnLoop(const std::string& name, const DrainOrder& order, PendingRequestAudit* audit);
  // Maintenance reservations (reservations_api.cc): drains the nodes of each `drain: true`
  // reservation from its drainGrace before the window, uncordons them after it; loop only.
  void MaintainReservations();
  // Commits a node record and its event (with `audit`, the pending entry of the request served,
  // null: none) and puts it in the ledger; loop thread only. The OnLoop form does not wait:
  // `then` runs once it settled.
  void CommitNodeOnLoop(NodeRecord node, const std::string& event, nlohmann::json details,
                        PendingRequestAudit* audit, Written then);
  Status CommitNode(NodeRecord node, const std::string& event, nlohmann::json details,
                    PendingRequestAudit* audit);
  // Price lists: load at start; stage applied PriceList documents; pick one for a report
  // (requires state_mu_ shared).
  Status LoadPriceLists();
  Status StagePriceLists(const std::vector<ExtensionDocument>& docs, WriteBatch& batch,
                         std::vector<AppliedView>& out, std::vector<meter::PriceList>& applied);
  const meter::PriceList* PickPriceList(const std::string& name, Status& problem) const;
  // Republishes `r`'s tasks to the agents.
  void Publish(const WorkloadRecord& r);
  void TouchNode(const std::string& node);
  // Commits `batch` through the one committer, with its audit entries sealed into the same
  // commit (one transaction for all: Governance::CommitAudited): `entry`, then `decisions` (the
  // scheduler's and controllers' decisions the batch carries out). Times it for the metrics;
  // fills versions.
  Status Commit(const WriteBatch& batch, CommitResult* result, std::optional<govern::AuditRecord> entry = std::nullopt,
                std::vector<govern::AuditRecord> decisions = {});
  // Claims "project/name" of each of `records` as an active workload name (workload_names.cc):
  // AlreadyExists naming the active workload that holds one, or when two share one; nothing
  // claimed then. ReleaseNames undoes the claims of a submission that did not commit.
  Status ClaimNames(const std::vector<WorkloadRecord>& records);
  void ReleaseNames(const std::vector<WorkloadRecord>& records);
  // Whether workload `id` (a claimed name's) is not finished: in the ledger and not terminal, or
  // not in the ledger yet (inbox, or committed on its way there).
  bool IsActiveWorkload(const std::string& id) const;
  // Returns a copy of the record by id or name from the ledger or the inbox.
  std::optional<WorkloadRecord> FindRecord(const std::string& id_or_name) const;
  // What the read model computes of `r` beside the record; requires state_mu_ held (shared).
  WorkloadStatusView StatusOf(const WorkloadRecord& r) const;
  // StatusOf's elastic part alone (nullopt unless elastic and holding quota): Explain's list.
  std::optional<ElasticStatusView> ElasticStatusOf(const WorkloadRecord& r) const;
  // `r`'s view, the answer of the writes that change one workload; requires state_mu_ held
  // (shared).
  WorkloadView View(const WorkloadRecord& r) const;
  // Runs `change` on the loop for `keyed` (whose first Check found no repeat): checked again
  // there, so that a repeat that waited behind its first request gets the first answer; `change`
  // stages the key with its answer (IdempotentWrite::Stage). A repeat is noted for the audit.
  // A keyed write's first check, off the loop: the first answer when `request` repeats an earlier
  // one (noted in the request's audit), else nullopt with `*keyed` ready to stage the key with
  // the change (an unkeyed request stages nothing).
  Result<std::optional<nlohmann::json>> BeginKeyed(const IdempotentRequest& request,
                                                   std::shared_ptr<IdempotentWrite>* keyed, RequestContext* context);
  // RunKeyedOnLoop's work, untyped: runs `change` (which keeps its own answer and calls its
  // Written once, when its commit settled) on the loop; the first answer when the request
  // repeated meanwhile, else nullopt (or `change`'s error).
  using KeyedChange = std::function<void(PendingRequestAudit*, Written)>;
  // The answer of a change to one workload, given once on the loop.
  using WorkloadViewDone = std::function<void(Result<WorkloadView>)>;
  // Scale's change on the loop: an error when it started no commit, else OK and `done` answers
  // once the commit settled (control_plane_writes.cc).
  Status ScaleOnLoop(const std::string& id_or_name, int32_t replicas, IdempotentWrite& keyed,
                     PendingRequestAudit* audit, const WorkloadViewDone& done);
  Result<std::optional<nlohmann::json>> RunKeyedCommand(RequestContext* context,
                                                        std::shared_ptr<IdempotentWrite> keyed, KeyedChange change);
  // `change` (void(PendingRequestAudit*, std::function<void(Result<T>)> done), calling `done`
  // once: at once, or when its commit settled) run by RunKeyedCommand: its answer, or the first
  // answer of a repeat (Keyed::encoded). Defined in control_plane_writes.cc, its only user.
  template <typename T, typename F>
  Result<Keyed<T>> RunKeyedOnLoop(RequestContext* context, std::shared_ptr<IdempotentWrite> keyed, F change);
  // Starts the commit of `batch`, whose op `put` writes `next` (a changed copy of the ledger
  // workload next.id), for the request `audit` (null: none) and goes on; once it committed, on
  // the loop, `next` becomes that record with the version the commit gave it (the ledger marked
  // changed), then `then` runs with the outcome. A failed commit leaves the record as it was (the
  // staged usage is reloaded: LoopCommits' failure hook). Loop only.
  void CommitRecordOnLoop(WriteBatch batch, OpRef put, WorkloadRecord next, PendingRequestAudit* audit,
                          Written then, std::vector<govern::AuditRecord> decisions = {});
  // Moves a copy of `r` (the record as the change sees it) to `to`, committing it with an event
  // (and what `stage` adds to the batch, given the record as it will be) through
  // CommitRecordOnLoop; `then` runs once, at once when the transition is illegal. A workload
  // that ends gives back its temporary quota grants (the controller's RevokeQuota, reason
  // WorkloadEnded, audited as quota-revoke), as one that ends by its controller does. Loop only.
  void CommitTransitionOnLoop(const WorkloadRecord& r, WorkloadState to, const std::string& event,
                              nlohmann::json details, const std::function<void(WriteBatch&, const WorkloadRecord&)>& stage,
                              PendingRequestAudit* audit, Written then);
  // Runs the loop write `start` (an OnLoop form, given its `then`) and settles it now: for a loop
  // step that reads its outcome next. Not from a commit's continuation (loop_commits.h).
  Status WriteNow(const std::function<void(Written)>& start);

  ControlPlaneOptions options_;
  const Clock& clock_;
  TimeOrderedIdGenerator default_ids_;
  IdGenerator& ids_;
  std::unique_ptr<DataFolderLock> data_lock_;   // outlives store_: released after the store closes
  std::unique_ptr<DataFolderLock> store_lock_;  // the SQLite store's folder, when not data_lock_'s
  PostgresWriterLock pg_lock_;                 // a PostgreSQL store's single-writer lock
  std::unique_ptr<Store> store_;
  std::unique_ptr<Authorizer> authorizer_;
  TokenAuthorizer* tokens_ = nullptr;  // authorizer_, when it is the token authorizer
  std::unique_ptr<StoreViaCommitter> governance_store_;  // the store as governance writes it
  std::unique_ptr<Governance> governance_;
  std::unique_ptr<AuditWatch> audit_watch_;  // the background chain check
  std::unique_ptr<SecretVault> secrets_;
  std::unique_ptr<AssignmentBoard> board_;
  std::unique_ptr<ChangeFeed> feed_;  // committed changes, published by the loop (watches)
  std::unique_ptr<UsageSync> usage_;  // usage intervals and the fair share over time (usage_sync.h)
  LoopSteps steps_;  // loop thread only: preempting, draining, staged actions, periodic checks (loop_steps.h)
  // Autoscaling metric samples per workload (POST /api/v1/workloads/{id}/metrics), the last 10 min.
  AgentTelemetry telemetry_;  // agents' last-heard times, device utilization, service metrics
  // Written by the loop under state_mu_ exclusively; read by the loop without it, by others under it
  // shared. Not GUARDED_BY: the analysis cannot express "the one writer reads unlocked".
  std::map<std::string, meter::PriceList> price_lists_;
  mutable Mutex logs_mu_;  // serializes appends to task log files
  // "project/name" → id of the workload that claimed it at submit; a claim whose workload
  // finished is dropped when the name is claimed again (workload_names.cc).
  Mutex names_mu_;
  std::unordered_map<std::string, std::string> active_names_ GUARDED_BY(names_mu_);
  mutable ServerMetrics metrics_;
  std::atomic<bool> ready_{false};

  mutable SharedMutex state_mu_;
  // Written only by the loop thread, under state_mu_ exclusively; the loop reads it without the
  // lock, other threads under state_mu_ shared. Not GUARDED_BY for that reason (single writer).
  Ledger ledger_;

  LoopInbox inbox_;  // submissions, task reports and commands for the loop (loop_inbox.h)
  LoopCommits commits_;  // loop thread only: the loop's own commits in flight (loop_commits.h)
  CyclePacer pacer_;  // loop thread only: what the next cycle owes and when (cycle_pacer.h)
  std::thread loop_thread_;
  Mutex stop_loop_mu_;  // serializes joining loop_thread_
  std::once_flag shutdown_once_;
};

}  // namespace abacus::server

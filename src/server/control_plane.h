// ControlPlane: the server's core, without HTTP. It owns the store, the group committer, the
// in-memory ledger and the scheduling loop (DESIGN §2):
//
//   - HTTP threads validate a request, persist it through the GroupCommitter (a write is
//     acknowledged only after its transaction commits), then hand it to the loop: a new
//     workload goes into the inbox; other writes (cancel, scale, apply, node registration)
//     run as commands on the loop thread, which is the only writer of the ledger.
//   - The loop drains the inbox and commands, and runs a scheduling cycle when something
//     changed (coalesced: at most one cycle per min_cycle_gap) and on a timer. Decisions are
//     assumed in memory, committed to the store in one batch, then published; when the commit
//     fails they are rolled back in memory.
//   - Readers take a shared lock on the ledger; newly submitted workloads not yet ingested by
//     the loop are visible through the inbox, so a client reads its own writes.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "sched/scheduler.h"
#include "server/auth.h"
#include "server/ledger.h"
#include "server/metrics.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace abacus::server {

struct ControlPlaneOptions {
  std::string data_dir = ".abacus";
  std::string store_url;                   // empty: sqlite://DATA/abacus.db
  const Clock* clock = nullptr;            // SystemClock when null
  IdGenerator* ids = nullptr;              // RandomIdGenerator when null
  Duration cycle_interval = std::chrono::seconds(1);        // timer cycle
  Duration min_cycle_gap = std::chrono::milliseconds(20);   // coalescing window
  size_t max_queued_commits = 4096;        // beyond: ResourceExhausted (HTTP 429)
  sched::SchedulerConfig scheduler;
};

// Query filters of GET /api/v1/workloads.
struct WorkloadFilter {
  std::string queue, state, project, tenant, kind, name;
  size_t limit = 1000;
};

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

  // ---- writes; each returns only after its transaction committed.
  // Submits every workload document of `body` (YAML, or JSON when `json_body`); all or none.
  // InvalidArgument carries one "FILE:LINE: field: message" line per problem.
  Result<std::vector<nlohmann::json>> Submit(std::string_view body, bool json_body, const std::string& filename);
  // Applies tenancy documents (tenants, projects, cohorts, queues, priority classes, flavors,
  // pools); returns [{kind, name, action}].
  Result<nlohmann::json> Apply(std::string_view body, bool json_body, const std::string& filename);
  // Cancels a workload (id or name); FailedPrecondition when it already finished.
  Result<nlohmann::json> Cancel(const std::string& id_or_name, const std::string& reason);
  // Scales an InferenceService (replicas) or a BatchJob (parallelism).
  Result<nlohmann::json> Scale(const std::string& id_or_name, int32_t replicas);
  // Adds or replaces a node (simulated ones come from --demo or the API).
  Result<nlohmann::json> PutNode(const nlohmann::json& body);

  // ---- reads
  Result<nlohmann::json> GetWorkload(const std::string& id_or_name) const;
  nlohmann::json ListWorkloads(const WorkloadFilter& filter) const;
  Result<nlohmann::json> Explain(const std::string& id_or_name) const;
  Result<nlohmann::json> Events(const std::string& id_or_name) const;
  // NotFound "no logs: task not started" until agents run tasks (issue 6).
  Result<nlohmann::json> Logs(const std::string& id_or_name) const;
  nlohmann::json ListNodes() const;
  Result<nlohmann::json> GetNode(const std::string& name) const;
  nlohmann::json ListDevices() const;
  nlohmann::json ListFlavors() const;
  nlohmann::json ListQueues() const;
  Result<nlohmann::json> GetQueue(const std::string& name) const;
  // kind: "tenant", "project", "cohort", "priorityclass", "pool"
  nlohmann::json ListConfig(const std::string& kind) const;
  Result<nlohmann::json> GetConfig(const std::string& kind, const std::string& name) const;
  std::string RenderMetrics() const;

  // Runs `f` with the ledger under the shared lock (tests, views).
  template <typename F>
  auto Read(F&& f) const {
    std::shared_lock lock(state_mu_);
    return f(ledger_);
  }
  // Blocks until the loop has ingested everything submitted so far and run a cycle after it.
  void WaitForCycle();

  const Authorizer& authorizer() const { return *authorizer_; }
  ServerMetrics& metrics() { return metrics_; }
  Store& store() { return *store_; }
  const std::string& data_dir() const { return options_.data_dir; }
  bool ready() const { return ready_.load(); }

 private:
  explicit ControlPlane(const ControlPlaneOptions& options);

  // Runs `fn` on the loop thread and waits for its result.
  Result<nlohmann::json> RunOnLoop(std::function<Result<nlohmann::json>()> fn);
  void Loop();
  void RunCycle();
  void FinishPreemptions();
  // Commits `batch` through the committer, timing it; fills versions.
  Status Commit(const WriteBatch& batch, CommitResult* result);
  // Returns a copy of the record by id or name from the ledger or the inbox.
  std::optional<WorkloadRecord> FindRecord(const std::string& id_or_name) const;
  nlohmann::json View(const WorkloadRecord& r) const;  // requires state_mu_ held (shared)
  // Moves `r` to `to`, committing the record and an event; loop thread only.
  Status CommitTransition(WorkloadRecord& r, WorkloadState to, const std::string& event,
                          nlohmann::json details);

  ControlPlaneOptions options_;
  const Clock& clock_;
  RandomIdGenerator default_ids_;
  IdGenerator& ids_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<GroupCommitter> committer_;
  std::unique_ptr<Authorizer> authorizer_;
  mutable ServerMetrics metrics_;
  std::atomic<bool> ready_{false};

  mutable std::shared_mutex state_mu_;
  Ledger ledger_;  // GUARDED_BY(state_mu_) for readers; written only by the loop thread

  mutable std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  std::condition_variable cycle_cv_;
  std::vector<WorkloadRecord> inbox_;                 // GUARDED_BY(loop_mu_)
  std::deque<std::function<void()>> commands_;        // GUARDED_BY(loop_mu_)
  bool stopping_ = false;                             // GUARDED_BY(loop_mu_)
  uint64_t submitted_seq_ = 0;                        // GUARDED_BY(loop_mu_)
  uint64_t cycled_seq_ = 0;                           // GUARDED_BY(loop_mu_)
  bool dirty_ = true;                                 // loop thread only
  Time last_cycle_{};                                 // loop thread only
  Duration last_cycle_cost_{0};                       // loop thread only
  std::thread loop_thread_;
  std::once_flag shutdown_once_;
};

}  // namespace abacus::server

// Scenario files (tests/scenarios/*.scn): a small line-oriented text format that describes a
// cluster (flavors, nodes, pools), tenancy (cohorts, queues), workloads, and steps — run a
// scheduling cycle, advance time, finish workloads — with the decisions expected after each
// cycle. docs/scenarios.md is the reference. The scenario test driver and the simulator both
// read it with ParseScenario and run it with ScenarioRunner over sched::Schedule.
//
// Parsing collects every problem as "FILE:LINE: message" (abacus::Diagnostics) instead of
// stopping at the first; running reports each failed expectation with its FILE:LINE and the
// decisions the cycle actually made.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "sched/health_rule.h"
#include "sched/scheduler.h"

namespace abacus::sim {

// Scenario time 0 ("now 0s", "submit=0s"): 2026-01-01T00:00:00Z.
Time ScenarioEpoch();

// One task's explicit place in a `running ... on=NODE:DEV,DEV;NODE:DEV` line.
struct ScenarioTaskPlace {
  std::string node;
  std::vector<int> devices;  // device indexes on the node (DeviceInfo::index)
};

// One `expect` line.
struct ScenarioExpect {
  enum class Kind : uint8_t {
    kAdmitted,      // admitted by the last cycle (optionally: nodes, borrowing, flavor, devices)
    kNotAdmitted,   // not admitted by the last cycle
    kPending,       // left pending by the last cycle (optionally: code, text in DescribePending)
    kPreempted,     // chosen as a victim by the last cycle (optionally: by, reason, grace)
    kNotPreempted,  // not a victim in the last cycle
    kReserved,      // holds a gang reservation after the last cycle (optionally: node count, nodes)
    kNotReserved,
    kExplain,       // DescribePending of the workload contains every text
    kCount,         // numbers of admissions / pending / preemptions / reservations
    kOrder,         // the listed workloads were admitted in this relative order
    kRunning,       // admitted and not evicting in the current state (optionally: nodes)
    kEvicting,      // admitted and being evicted in the current state
    kNode,          // a node's current state (optionally) and its devices out of service (optionally)
  };
  Kind kind = Kind::kAdmitted;
  int line = 0;
  std::string text_as_written;  // the whole line, for failure messages
  std::string workload;
  std::vector<std::string> nodes;                  // admitted/running/reserved on exactly these (as a set)
  std::optional<bool> borrowing;
  std::string flavor;                              // every group of the admission uses it
  std::vector<ScenarioTaskPlace> devices;          // per task in placement order
  std::optional<sched::PendingCode> code;
  std::vector<std::string> texts;                  // substrings of DescribePending
  std::string by;                                  // preemptor
  std::optional<sched::PreemptionReason> reason;
  std::optional<int64_t> grace_seconds;
  std::optional<int32_t> node_count;               // reserved nodes=N
  std::optional<int32_t> priority;                 // admitted priority=N (effective priority)
  std::map<std::string, int64_t> counts;           // admitted, pending, preempted, reserved
  std::vector<std::string> order;
  std::string node;                                // kNode
  std::optional<NodeState> node_state;             // kNode: Ready, Cordoned, …
  std::optional<std::vector<int>> unhealthy;       // kNode: exactly these device indexes not healthy
};

// One step, run in file order.
struct ScenarioStep {
  enum class Kind : uint8_t {
    kSubmit,   // `workload`: a pending workload arrives
    kRunning,  // `running`: an admitted workload, at explicit places or placed at once
    kNow,      // `now T` / `now +D`
    kCycle,    // `cycle`: one Schedule(); admissions become running, victims evicting
    kFinish,   // `finish W...`: the workloads stop and leave
    kRequeue,  // `requeue W...`: the workloads stop and go back to pending
    kConfig,   // `config ...`
    kExpect,
    kFault,     // `fault node=N device=I reason="…"`: the device is reported Unhealthy
    kRecover,   // `recover node=N device=I`: the device is reported Healthy again
    kUncordon,  // `uncordon N`: an operator's uncordon (ends the health rule's cordon and probation)
  };
  Kind kind = Kind::kCycle;
  int line = 0;
  sched::WorkloadInfo workload;                 // kSubmit, kRunning (flavors resolved)
  std::vector<std::string> patterns;            // per group: the flavor pattern as written
  std::vector<ScenarioTaskPlace> places;        // kRunning with on=
  std::optional<std::string> running_flavor;    // kRunning with on=: flavor=… when several match
  Time time{};                                  // kNow
  std::vector<std::string> names;               // kFinish, kRequeue
  sched::SchedulerConfig config;                // kConfig: the whole config after the line
  ScenarioExpect expect;                        // kExpect
  std::string node;                             // kFault, kRecover, kUncordon
  int32_t device = 0;                           // kFault, kRecover: the device index on the node
  std::string reason;                           // kFault
};

struct Scenario {
  std::string file;
  std::string known_bug;        // from a "# known-bug: TEXT" line: the driver skips the scenario
  std::string title;            // the first comment line, if any
  sched::Snapshot cluster;      // nodes, queues, cohorts, flavor weights, pool tenants; no workloads
  sched::SchedulerConfig config;  // before any `config` line
  sched::HealthPolicy health;     // the `health` line: the server's health rule's thresholds
  std::vector<ScenarioStep> steps;
};

// Parses a scenario from `text`; `file` names it in diagnostics. InvalidArgument listing every
// "FILE:LINE: message" on error.
Result<Scenario> ParseScenario(std::string_view text, const std::string& file);
// Reads and parses the scenario file at `path`.
Result<Scenario> LoadScenario(const std::string& path);

// What one run found.
struct ScenarioOutcome {
  std::vector<std::string> failures;  // each "FILE:LINE: …" with the actual decisions
  std::vector<std::string> trace;     // with tracing on: "FILE:LINE: cycle" and its decisions, per cycle
  int cycles = 0;
  int expectations = 0;
  bool ok() const { return failures.empty(); }
};

// Runs a scenario step by step. The state is a sched::Snapshot that the steps change the way the
// server would: admissions become admitted workloads, victims are marked evicting until a
// `finish`/`requeue` step removes them.
class ScenarioRunner {
 public:
  // With `trace`, every cycle's decisions are kept in outcome().trace (for authoring scenarios).
  explicit ScenarioRunner(const Scenario& scenario, bool trace = false);

  // Runs every remaining step; returns what failed.
  ScenarioOutcome RunAll();
  // Runs one step; returns false when none is left.
  bool Step();

  const sched::Snapshot& state() const { return state_; }
  // The result of the last `cycle` step (empty before the first).
  const sched::CycleResult& last_cycle() const { return last_; }
  const ScenarioOutcome& outcome() const { return outcome_; }

 private:
  void Run(const ScenarioStep& step);
  void Submit(const ScenarioStep& step);
  void AddRunning(const ScenarioStep& step);
  void RunCycle(const ScenarioStep& step);
  void Stop(const ScenarioStep& step, bool requeue);
  // Device health (sched/health_rule.h), the server's rule over the snapshot's nodes.
  void ReportHealth(const ScenarioStep& step);
  void Uncordon(const ScenarioStep& step);
  void SettleHealth(int line);  // at a `now` step (the server settles every second)
  sched::NodeHealth& HealthOf(int32_t node);
  void ApplyHealth(int32_t node, const sched::HealthOutcome& outcome, int line);
  void RequeueOffBadDevices(int32_t node);
  void Requeue(sched::WorkloadInfo& w);
  void Check(const ScenarioStep& step);
  void Fail(int line, const std::string& message);
  int32_t Find(const std::string& name) const;
  std::string Where(int line) const;

  const Scenario& scenario_;
  size_t next_ = 0;
  sched::Snapshot state_;
  sched::SchedulerConfig config_;
  // Fair share (config fairShareHalfLife=…): usage of what ran, as the server keeps it.
  sched::UsageHistory history_{Duration(0)};
  // Counts or stops counting workload `w`'s holdings at the current time.
  void Hold(const sched::WorkloadInfo& w, bool start);
  std::map<int32_t, sched::NodeHealth> health_;  // nodes a fault or recovery touched
  sched::CycleResult last_;
  bool cycled_ = false;
  bool trace_ = false;
  ScenarioOutcome outcome_;
};

// Runs `scenario` to the end (ScenarioRunner::RunAll).
ScenarioOutcome RunScenario(const Scenario& scenario, bool trace = false);

// Renders the decisions of a cycle for people: admissions (nodes, devices, flavor, borrowing),
// preemptions, reservations and every pending reason (DescribePending).
std::string DescribeCycle(const sched::Snapshot& snapshot, const sched::CycleResult& result);

}  // namespace abacus::sim

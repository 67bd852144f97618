// The metering scenario shared by the meter tests (times in March 2026, UTC):
//   train-a (nlp)     4 × A100, 8 cores, 64Gi: Mar 1 08:00–16:00 Preempted, Mar 2 00:00–02:00
//   notebook (vision) 500 milli of one A100, 2 cores, 16Gi: Mar 1 10:00–14:00 Cancelled
//   infer (vision)    two replicas, 1 × T4, 4 cores, 8Gi each, from Mar 1 20:00; the server
//                     checkpoints at 23:00 and crashes; at the restart (Mar 2 01:00) replica 0
//                     is gone (closed at 23:00, ServerRestart), replica 1 runs on until 03:00.
// Prices: A100 2.00/h, 3.00/h from Mar 1 12:00; gpu/* 1.00/h; core-hour 0.04; GiB-hour 0.01.
#pragma once

#include <string>
#include <vector>

#include "meter/evidence.h"
#include "meter/price_list.h"
#include "meter/report_inputs.h"
#include "meter/usage.h"

namespace abacus::meter::scenario {

inline constexpr char kA100[] = "gpu/nvidia/A100-80G";
inline constexpr char kT4[] = "gpu/nvidia/T4";

// Returns 2026-03-`day` `hour`:`minute` UTC.
inline Time T(int day, int hour, int minute = 0) {
  return FromMicros((1'772'323'200LL + (day - 1) * 86'400LL + hour * 3600LL + minute * 60LL) * 1'000'000);
}

// Returns an open interval of one task; devices are indices 0..n-1 (or {0} for a share).
inline UsageInterval Task(std::string workload, std::string task, std::string tenant, std::string queue,
                          std::string kind, std::string node, std::string flavor, int64_t device_milli,
                          int64_t cores, int64_t mem_gib, Time start) {
  UsageInterval iv;
  iv.workload_id = std::move(workload);
  iv.task_id = std::move(task);
  iv.tenant = tenant;
  iv.project = tenant + "/main";
  iv.queue = std::move(queue);
  iv.kind = std::move(kind);
  iv.model = iv.kind == "TrainingJob" ? "llama" : "";
  iv.priority_class = "training";
  iv.node = std::move(node);
  iv.cluster = "east";
  iv.pool = "default";
  iv.flavor = std::move(flavor);
  iv.device_milli = device_milli;
  for (int64_t i = 0; i < std::max<int64_t>(1, device_milli / 1000); ++i) iv.devices.push_back(static_cast<int>(i));
  iv.cpu_milli = cores * 1000;
  iv.memory_bytes = mem_gib << 30;
  iv.start = start;
  return iv;
}

inline UsageInterval Closed(UsageInterval iv, Time end, EndReason reason) {
  iv.end = end;
  iv.end_reason = reason;
  iv.id = iv.task_id + "@" + std::to_string(ToMicros(iv.start));
  return iv;
}

inline UsageInterval TrainA(Time start) {
  return Task("train-a", "a-0", "nlp", "nlp-train", "TrainingJob", "gpu-1", kA100, 4000, 8, 64, start);
}
inline UsageInterval Notebook() {
  return Task("notebook", "nb-0", "vision", "vision-exp", "Experiment", "gpu-2", kA100, 500, 2, 16, T(1, 10));
}
inline UsageInterval Infer(int replica) {
  return Task("infer", "inf-" + std::to_string(replica), "vision", "vision-serve", "InferenceService",
              "gpu-3", kT4, 1000, 4, 8, T(1, 20));
}

// The intervals the scenario must leave in the ledger, closed.
inline std::vector<UsageInterval> ScenarioIntervals() {
  return {Closed(TrainA(T(1, 8)), T(1, 16), EndReason::kPreempted),
          Closed(TrainA(T(2, 0)), T(2, 2), EndReason::kSucceeded),
          Closed(Notebook(), T(1, 14), EndReason::kCancelled),
          Closed(Infer(0), T(1, 23), EndReason::kServerRestart),
          Closed(Infer(1), T(2, 3), EndReason::kScaledDown)};
}

inline PriceList ScenarioPrices() {
  PriceList p;
  p.name = "default";
  p.currency = "USD";
  p.devices = {{kA100, 2'000'000, T(1, 0) - std::chrono::hours(24 * 59)},
               {kA100, 3'000'000, T(1, 12)},
               {"gpu/*", 1'000'000, Time{}}};
  p.cpu = {{40'000, Time{}}};
  p.memory = {{10'000, Time{}}};
  return p;
}

// The window of the scenario: Mar 1 00:00 to Mar 3 00:00.
inline ReportWindow ScenarioWindow() { return ReportWindow{T(1, 0), T(3, 0), T(3, 0)}; }

// Owns everything an EvidenceInput points at (the evidence test and the meter bench).
struct EvidenceData {
  std::vector<InventoryRow> inventory;
  std::vector<CapacitySpan> capacity;
  std::vector<QueueQuota> quotas;
  std::vector<UsageInterval> intervals;
  std::vector<WorkloadSummary> workloads;
  std::vector<PreemptionEvent> preemptions;
  std::vector<UtilizationSample> samples;
  std::vector<ShortageInterval> shortages;
  std::vector<AuditEntrySummary> audit;
  PriceList prices;

  // Returns an input over this data for `window`, generated at its end, the chain verified.
  EvidenceInput Input(const ReportWindow& window, Duration max_sample_gap) const {
    EvidenceInput in;
    in.window = window;
    in.generated_at = window.to;
    in.inventory = inventory;
    in.capacity = capacity;
    in.quotas = quotas;
    in.intervals = intervals;
    in.workloads = workloads;
    in.preemptions = preemptions;
    in.utilization = samples;
    in.max_sample_gap = max_sample_gap;
    in.shortages = shortages;
    in.audit = audit;
    in.audit_chain = {true, true, static_cast<int64_t>(audit.size()), ""};
    in.prices = &prices;
    return in;
  }
};

}  // namespace abacus::meter::scenario

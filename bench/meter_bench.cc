// meter_bench: times each metering report over a synthetic month (March 2026) of usage for
// 10,000 workloads on 250 nodes × 8 devices, with hourly utilization samples per device.
// Prints one line per report (best of 3 runs); it never passes or fails.
//   abacus_meter_bench [WORKLOADS] [--html FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "meter/evidence.h"
#include "meter/meter_test_util.h"
#include "meter/reports.h"
#include "meter/usage_ledger.h"
#include "store/store.h"

namespace {

using namespace abacus;
using namespace abacus::meter;
using std::chrono::hours;
using std::chrono::minutes;

constexpr int kNodes = 250;
constexpr int kDevicesPerNode = 8;
const Time kMonth = FromMicros(1'772'323'200'000'000);  // 2026-03-01T00:00:00Z
const Time kMonthEnd = kMonth + hours(24 * 31);
const char* kFlavors[] = {"gpu/nvidia/A100-80G", "gpu/nvidia/H100-80G", "gpu/nvidia/T4", "npu/huawei/Ascend910B"};
const char* kKinds[] = {"TrainingJob", "InferenceService", "Experiment", "Evaluation", "BatchJob"};
const char* kReasons[] = {"OOMKilled", "ExitCode", "NodeLost", "Timeout"};

using Data = scenario::EvidenceData;

Data Generate(int workloads) {
  std::mt19937_64 rng(42);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  Data d;
  for (int q = 0; q < 20; ++q) {
    for (const char* f : kFlavors) {
      d.quotas.push_back({"queue-" + std::to_string(q), "tenant-" + std::to_string(q % 10),
                          "cohort-" + std::to_string(q % 4), f, 16000, std::nullopt});
    }
  }
  for (int f = 0; f < 4; ++f) d.inventory.push_back({"east", "default", kFlavors[f], kNodes / 4, kNodes * 2, kNodes * 2});
  // Every node existed the whole month (meter/capacity.h): one span per node.
  for (int n = 0; n < kNodes; ++n) {
    d.capacity.push_back({"node-" + std::to_string(n), kFlavors[n % 4], 8, kMonth, std::nullopt, NodeCondition::kUp});
  }
  d.prices.name = "bench";
  d.prices.devices = {{kFlavors[0], 2'500'000, Time{}}, {kFlavors[0], 2'000'000, kMonth + hours(24 * 15)},
                      {kFlavors[1], 4'000'000, Time{}}, {"gpu/*", 800'000, Time{}}, {"npu/*", 1'500'000, Time{}}};
  d.prices.cpu = {{40'000, Time{}}};
  d.prices.memory = {{5'000, Time{}}};
  for (int w = 0; w < workloads; ++w) {
    WorkloadSummary s;
    s.id = "wl-" + std::to_string(w);
    int q = pick(20);
    s.queue = "queue-" + std::to_string(q);
    s.tenant = "tenant-" + std::to_string(q % 10);
    s.project = s.tenant + "/p" + std::to_string(pick(3));
    s.kind = kKinds[pick(5)];
    s.flavor = kFlavors[pick(4)];
    s.model = "model-" + std::to_string(pick(12));
    s.submitted = kMonth + minutes(pick(31 * 24 * 60 - 600));
    s.admitted = s.submitted + std::chrono::seconds(pick(7200));
    int tasks = 1 + pick(4);
    int64_t milli = std::array<int64_t, 5>{500, 1000, 2000, 4000, 8000}[pick(5)];
    Time start = *s.admitted;
    Time end = std::min(kMonthEnd, start + minutes(10 + pick(3 * 24 * 60)));
    bool preempted = pick(10) == 0;
    for (int run = 0; run < (preempted ? 2 : 1); ++run) {
      Time a = run == 0 ? start : start + (end - start) / 2 + minutes(30);
      Time b = run == 0 && preempted ? start + (end - start) / 2 : end;
      if (a >= b) continue;
      for (int t = 0; t < tasks; ++t) {
        UsageInterval iv;
        iv.workload_id = s.id;
        iv.task_id = s.id + "-" + std::to_string(t);
        iv.id = iv.task_id + "@" + std::to_string(ToMicros(a));
        iv.tenant = s.tenant;
        iv.project = s.project;
        iv.queue = s.queue;
        iv.priority_class = "training";
        iv.kind = s.kind;
        iv.model = s.model;
        iv.node = "node-" + std::to_string(pick(kNodes));
        iv.cluster = "east";
        iv.pool = "default";
        iv.flavor = s.flavor;
        iv.device_milli = milli;
        int first = pick(kDevicesPerNode - static_cast<int>(std::max<int64_t>(1, milli / 1000)) + 1);
        for (int64_t i = 0; i < std::max<int64_t>(1, milli / 1000); ++i) iv.devices.push_back(first + static_cast<int>(i));
        iv.cpu_milli = 8000;
        iv.memory_bytes = int64_t{64} << 30;
        iv.start = a;
        iv.end = b;
        iv.end_reason = run == 0 && preempted ? EndReason::kPreempted : EndReason::kSucceeded;
        d.intervals.push_back(std::move(iv));
      }
      if (run == 0 && preempted) {
        d.preemptions.push_back({b, "Reclaim", s.id, s.tenant, s.queue, s.flavor, milli * tasks, "", ""});
      }
    }
    s.finished = end;
    s.state = pick(8) == 0 ? "Failed" : "Succeeded";
    if (s.state == "Failed") s.failure_reason = kReasons[pick(4)];
    if (s.kind == std::string("InferenceService") && pick(3) == 0) {
      Time a = start + hours(pick(48));
      d.shortages.push_back({s.id, s.id, s.tenant, s.queue, s.flavor, 3, 1, a, a + minutes(5 + pick(120))});
    }
    d.workloads.push_back(std::move(s));
  }
  for (int n = 0; n < kNodes; ++n) {
    for (int dev = 0; dev < kDevicesPerNode; ++dev) {
      for (Time t = kMonth; t < kMonthEnd; t += hours(1)) {
        d.samples.push_back({"node-" + std::to_string(n), dev, t, static_cast<double>(pick(100)) / 100.0});
      }
    }
  }
  for (int i = 0; i < 2000; ++i) {
    d.audit.push_back({kMonth + minutes(pick(31 * 24 * 60)), "user u" + std::to_string(pick(9)),
                       i % 3 ? "create" : "cancel", "workload", "wl-" + std::to_string(i)});
  }
  return d;
}

// Runs `f` three times; prints the best time and the size of its last result.
void Time3(const char* name, const std::function<size_t()>& f) {
  double best = 1e300;
  size_t size = 0;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    size = f();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms);
  }
  std::printf("%-38s %9.1f ms  (%zu)\n", name, best, size);
}

size_t Rows(const Result<Table>& t) { return t.ok() ? t->rows.size() : 0; }

}  // namespace

int main(int argc, char** argv) {
  int workloads = 10'000;
  std::string html_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--html") == 0 && i + 1 < argc) {
      html_path = argv[++i];
    } else {
      workloads = std::atoi(argv[i]);
    }
  }
  Data d = Generate(workloads);
  std::printf("%d workloads, %zu usage intervals, %zu utilization samples, %zu shortages\n", workloads,
              d.intervals.size(), d.samples.size(), d.shortages.size());
  const ReportWindow month{kMonth, kMonthEnd, kMonthEnd};
  auto by = [](const char* text) { return ParseGrouping(text).value(); };

  // The store round trip: what a report pays to read a month of intervals from SQLite.
  std::string dir = (std::filesystem::temp_directory_path() / "abacus-meter-bench").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = OpenStore("sqlite://" + dir + "/bench.db?synchronous=normal");
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  for (size_t i = 0; i < d.intervals.size(); i += 1000) {
    WriteBatch batch;
    for (size_t j = i; j < std::min(d.intervals.size(), i + 1000); ++j) {
      batch.Put(std::string(UsageLedger::kKind), d.intervals[j].id, UsageToJson(d.intervals[j]).dump());
    }
    if (!(*store)->Commit(batch).ok()) return 1;
  }
  Time3("read intervals from sqlite", [&] { return ReadUsage(**store, kMonth, kMonthEnd)->size(); });

  Time3("usage --by tenant", [&] { return Rows(UsageReport(d.intervals, {month, by("tenant"), &d.prices})); });
  Time3("usage --by flavor,day", [&] { return Rows(UsageReport(d.intervals, {month, by("flavor,day"), &d.prices})); });
  Time3("usage --by tenant,project,queue,week",
        [&] { return Rows(UsageReport(d.intervals, {month, by("tenant,project,queue,week"), &d.prices})); });
  Time3("usage --by model,cluster,kind,month",
        [&] { return Rows(UsageReport(d.intervals, {month, by("model,cluster,kind,month"), &d.prices})); });
  Time3("wait --by queue,flavor", [&] { return Rows(WaitReport(d.workloads, {month, by("queue,flavor")})); });
  Time3("failures --by kind", [&] { return Rows(FailureReport(d.workloads, {month, by("kind")})); });
  Time3("idle --by tenant,workload", [&] {
    return Rows(IdleReport(d.intervals, d.samples, {month, by("tenant,workload"), 0.05, minutes(90), &d.prices}));
  });
  Time3("shortages --by tenant,workload", [&] { return Rows(ShortageReport(d.shortages, {month, by("tenant,workload")})); });
  Time3("borrowing", [&] { return BorrowingReport(d.intervals, d.quotas, month).rows.size(); });

  EvidenceInput in = d.Input(month, minutes(90));
  std::string html;
  Time3("evidence html", [&] {
    html = RenderEvidence(in, EvidenceFormat::kHtml);
    return html.size();
  });
  Time3("evidence md", [&] { return RenderEvidence(in, EvidenceFormat::kMarkdown).size(); });
  if (!html_path.empty()) std::ofstream(html_path) << html;
  store->reset();
  std::filesystem::remove_all(dir);
  return 0;
}

#include "sim/events_report.h"

#include <cmath>
#include <cstdio>

#include "common/text_table.h"
#include "sim/svg_plot.h"

namespace abacus::sim {
namespace {

double Round(double v, double scale) { return std::round(v * scale) / scale; }

std::string Fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

nlohmann::ordered_json StatsJson(const DurationStats& s) {
  return {{"count", s.count}, {"mean", Round(s.mean, 1e3)}, {"p50", s.p50}, {"p95", s.p95}, {"p99", s.p99}, {"max", s.max}};
}

nlohmann::ordered_json GroupJson(const GroupReport& g) {
  nlohmann::ordered_json j;
  j["name"] = g.name;
  if (!g.tenant.empty()) j["tenant"] = g.tenant;
  j["submitted"] = g.submitted;
  j["completed"] = g.completed;
  j["running_at_end"] = g.running_at_end;
  j["pending_at_end"] = g.pending_at_end;
  j["queueing_delay_s"] = StatsJson(g.queueing);
  j["completion_time_s"] = StatsJson(g.completion);
  j["preempted"] = g.preempted;
  j["reclaimed"] = g.reclaimed;
  j["borrowing_admissions"] = g.borrowing_admissions;
  j["borrowed_device_hours"] = Round(g.borrowed_device_hours, 1e3);
  j["device_hours"] = Round(g.device_hours, 1e3);
  j["fault_requeued"] = g.fault_requeued;
  j["fault_lost_device_hours"] = Round(g.fault_lost_device_hours, 1e3);
  if (!g.device_hours_by_day.empty()) {
    j["device_hours_by_day"] = nlohmann::ordered_json::array();
    for (double h : g.device_hours_by_day) j["device_hours_by_day"].push_back(Round(h, 1e3));
  }
  return j;
}

std::string Human(double seconds) {
  if (seconds < 120) return Fixed(seconds, 0) + "s";
  if (seconds < 7200) return Fixed(seconds / 60, 1) + "m";
  if (seconds < 172800) return Fixed(seconds / 3600, 1) + "h";
  return Fixed(seconds / 86400, 1) + "d";
}

// The header and rows of `rows` (the first is the header): names and tenants left, numbers right.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::vector<std::vector<std::string>> body(rows.begin() + 1, rows.end());
  return RenderTextTable(rows.front(), body, LeftThenRight(2));
}

std::vector<std::string> GroupRow(const std::string& scope, const GroupReport& g, bool faults) {
  std::vector<std::string> row{g.name,
          scope == "queue" ? g.tenant : "",
          std::to_string(g.submitted),
          std::to_string(g.completed),
          std::to_string(g.running_at_end),
          std::to_string(g.pending_at_end),
          g.queueing.count ? Human(g.queueing.mean) : "-",
          g.queueing.count ? Human(g.queueing.p50) : "-",
          g.queueing.count ? Human(g.queueing.p95) : "-",
          g.queueing.count ? Human(g.queueing.p99) : "-",
          g.completion.count ? Human(g.completion.mean) : "-",
          g.completion.count ? Human(g.completion.p95) : "-",
          std::to_string(g.preempted),
          std::to_string(g.reclaimed),
          std::to_string(g.borrowing_admissions),
          Fixed(g.borrowed_device_hours, 1),
          Fixed(g.device_hours, 1)};
  if (faults) {
    row.push_back(std::to_string(g.fault_requeued));
    row.push_back(Fixed(g.fault_lost_device_hours, 1));
  }
  return row;
}

nlohmann::ordered_json FaultsJson(const FaultReport& f) {
  nlohmann::ordered_json j;
  j["events"] = f.events;
  j["device_faults"] = f.device_faults;
  j["requeued"] = f.requeued;
  j["cordons"] = f.cordons;
  j["uncordons"] = f.uncordons;
  j["operator_uncordons"] = f.operator_uncordons;
  j["lost_device_hours"] = Round(f.lost_device_hours, 1e3);
  j["unhealthy_device_hours"] = Round(f.unhealthy_device_hours, 1e3);
  j["log"] = nlohmann::ordered_json::array();
  for (const HealthChange& c : f.log) {
    nlohmann::ordered_json e{{"t", c.t_s}, {"node", c.node}, {"event", HealthChangeName(c.kind)}};
    if (c.device >= 0) e["device"] = c.device;
    if (!c.detail.empty()) e["detail"] = c.detail;
    j["log"].push_back(std::move(e));
  }
  return j;
}

// "device faults: …" and the health cordons, for the text report.
std::string FaultsText(const FaultReport& f) {
  std::string out = "device faults: " + std::to_string(f.device_faults) + " (of " + std::to_string(f.events) +
                    " fault events); workloads requeued by faults: " + std::to_string(f.requeued) + ", " +
                    Fixed(f.lost_device_hours, 1) + " device-hours lost; " + Fixed(f.unhealthy_device_hours, 1) +
                    " device-hours out of service\n";
  out += "node cordons by abacus/health: " + std::to_string(f.cordons) + " (" + std::to_string(f.uncordons) +
         " ended by the clean window, " + std::to_string(f.operator_uncordons) + " operator uncordon(s))\n";
  size_t shown = 0;
  for (const HealthChange& c : f.log) {
    if (c.kind != HealthChange::Kind::kCordoned) continue;
    if (++shown > 10) {
      out += "  … and " + std::to_string(f.cordons - 10) + " more (-o json lists all in faults.log)\n";
      break;
    }
    out += "  t=" + std::to_string(c.t_s) + "s " + c.node + ": " + c.detail + "\n";
  }
  return out;
}

}  // namespace

nlohmann::ordered_json EventsJson(const EventSimResult& r, bool workloads) {
  nlohmann::ordered_json j;
  j["start_s"] = r.start_s;
  j["end_s"] = r.end_s;
  j["cycles"] = r.cycles;
  j["cycle_kinds"] = {{"fresh", r.cycle_kinds.fresh},
                      {"bounded", r.cycle_kinds.bounded},
                      {"full", r.cycle_kinds.full},
                      {"nominated", r.cycle_kinds.nominated},
                      {"aging_steps", r.cycle_kinds.aging_steps}};
  j["seconds"] = Round(r.seconds, 1e3);
  j["capacity"] = {{"gpu", static_cast<double>(r.gpu_milli) / 1000.0},
                   {"npu", static_cast<double>(r.npu_milli) / 1000.0},
                   {"cpu", static_cast<double>(r.cpu_milli) / 1000.0}};
  j["utilization_pct"] = {{"gpu", Round(r.mean_gpu_pct, 1e3)}, {"npu", Round(r.mean_npu_pct, 1e3)}, {"cpu", Round(r.mean_cpu_pct, 1e3)}};
  j["pools"] = nlohmann::ordered_json::array();
  for (const auto& p : r.pools) {
    j["pools"].push_back({{"pool", p.pool},
                          {"nodes", p.nodes},
                          {"devices", static_cast<double>(p.device_milli) / 1000.0},
                          {"cpu", static_cast<double>(p.cpu_milli) / 1000.0},
                          {"device_pct", Round(p.mean_device_pct, 1e3)},
                          {"cpu_pct", Round(p.mean_cpu_pct, 1e3)},
                          {"device_hours", Round(p.device_hours, 1e3)}});
  }
  j["total"] = GroupJson(r.total);
  j["queues"] = nlohmann::ordered_json::array();
  for (const auto& q : r.queues) j["queues"].push_back(GroupJson(q));
  j["tenants"] = nlohmann::ordered_json::array();
  for (const auto& t : r.tenants) j["tenants"].push_back(GroupJson(t));
  j["faults"] = FaultsJson(r.faults);
  j["warnings"] = r.warnings;
  j["placement_rule_violations"] = {{"max_per_node", r.violations.max_per_node},
                                    {"spread", r.violations.spread},
                                    {"anti_affinity", r.violations.anti_affinity},
                                    {"extended", r.violations.extended},
                                    {"total", r.violations.total()}};
  j["unplaced"] = nlohmann::ordered_json::array();
  for (const auto& u : r.unplaced) {
    j["unplaced"].push_back({{"workload", u.workload}, {"queue", u.queue}, {"code", u.code}, {"reason", u.reason}});
  }
  j["timeline"] = nlohmann::ordered_json::array();
  for (const auto& s : r.timeline) {
    j["timeline"].push_back({{"t", s.t}, {"gpu_pct", Round(s.gpu_pct, 1e3)}, {"npu_pct", Round(s.npu_pct, 1e3)},
                             {"cpu_pct", Round(s.cpu_pct, 1e3)}, {"pending", s.pending}, {"running", s.running}});
  }
  if (workloads) {
    j["workloads"] = nlohmann::ordered_json::array();
    for (const JobOutcome& o : r.jobs) {
      nlohmann::ordered_json w;
      w["name"] = o.id;
      w["first_start_s"] = o.first_start_s ? nlohmann::ordered_json(*o.first_start_s) : nlohmann::ordered_json();
      w["finish_s"] = o.finish_s ? nlohmann::ordered_json(*o.finish_s) : nlohmann::ordered_json();
      w["preemptions"] = o.preemptions;
      w["fault_requeues"] = o.fault_requeues;
      w["tasks"] = nlohmann::ordered_json::array();
      for (size_t i = 0; i < o.first_nodes.size(); ++i) {
        w["tasks"].push_back({{"node", o.first_nodes[i]}, {"devices", i < o.first_devices.size() ? o.first_devices[i] : 0}});
      }
      j["workloads"].push_back(std::move(w));
    }
  }
  return j;
}

std::string EventsTable(const EventSimResult& r) {
  std::string out;
  out += "simulated " + Human(static_cast<double>(r.end_s - r.start_s)) + " (until t=" + std::to_string(r.end_s) + "s) in " + std::to_string(r.cycles) +
         " scheduling cycles (" + std::to_string(r.cycle_kinds.fresh) + " fresh, " + std::to_string(r.cycle_kinds.bounded) +
         " bounded, " + std::to_string(r.cycle_kinds.full) + " full, " + std::to_string(r.cycle_kinds.nominated) +
         " nominated; " + Fixed(r.seconds, 2) + " s)\n";
  out += "capacity: " + Fixed(static_cast<double>(r.gpu_milli) / 1000.0, 0) + " GPU, " +
         Fixed(static_cast<double>(r.npu_milli) / 1000.0, 0) + " NPU, " +
         Fixed(static_cast<double>(r.cpu_milli) / 1000.0, 0) + " CPU; mean allocated: GPU " + Fixed(r.mean_gpu_pct, 1) +
         "%, NPU " + Fixed(r.mean_npu_pct, 1) + "%, CPU " + Fixed(r.mean_cpu_pct, 1) + "%\n";
  out += "placement rule violations: " + std::to_string(r.violations.total()) + " (maxPerNode " +
         std::to_string(r.violations.max_per_node) + ", spread " + std::to_string(r.violations.spread) +
         ", antiAffinity " + std::to_string(r.violations.anti_affinity) + ", extended over capacity " +
         std::to_string(r.violations.extended) + ")\n";
  const bool faults = r.faults.events > 0;
  if (faults) out += FaultsText(r.faults);
  out += "\n";
  if (!r.pools.empty()) {
    std::vector<std::vector<std::string>> prows{{"POOL", "NODES", "DEVICES", "CPU", "DEVICE-ALLOC", "CPU-ALLOC", "DEV-H"}};
    for (const auto& p : r.pools) {
      prows.push_back({p.pool, std::to_string(p.nodes), Fixed(static_cast<double>(p.device_milli) / 1000.0, 0),
                       Fixed(static_cast<double>(p.cpu_milli) / 1000.0, 0), Fixed(p.mean_device_pct, 1) + "%",
                       Fixed(p.mean_cpu_pct, 1) + "%", Fixed(p.device_hours, 1)});
    }
    out += Table(prows) + "\n";
  }
  std::vector<std::string> header = {"QUEUE", "TENANT", "SUBMIT", "DONE", "RUN", "PEND", "WAIT-MEAN", "P50", "P95",
                                     "P99", "JCT-MEAN", "JCT-P95", "PREEMPTED", "RECLAIMED", "BORROWED", "BORROW-DEV-H",
                                     "DEV-H"};
  if (faults) {
    header.push_back("FAULT-REQ");
    header.push_back("FAULT-LOST-H");
  }
  std::vector<std::vector<std::string>> rows{header};
  for (const auto& q : r.queues) rows.push_back(GroupRow("queue", q, faults));
  rows.push_back(GroupRow("total", r.total, faults));
  out += Table(rows);
  // Runs longer than a day: device-hours each queue ran per day (fair share over time shows here).
  size_t days = 0;
  for (const auto& q : r.queues) days = std::max(days, q.device_hours_by_day.size());
  if (days > 1) {
    std::vector<std::vector<std::string>> drows{{"QUEUE"}};
    for (size_t d = 0; d < days; ++d) drows[0].push_back("DAY " + std::to_string(d));
    for (const auto& q : r.queues) {
      std::vector<std::string> row{q.name};
      for (size_t d = 0; d < days; ++d) row.push_back(Fixed(d < q.device_hours_by_day.size() ? q.device_hours_by_day[d] : 0, 1));
      drows.push_back(std::move(row));
    }
    out += "\ndevice-hours per day:\n" + Table(drows);
  }
  if (r.tenants.size() > 1) {
    out += "\n";
    header[0] = "TENANT";
    header[1] = "";
    std::vector<std::vector<std::string>> trows{header};
    for (const auto& t : r.tenants) trows.push_back(GroupRow("tenant", t, faults));
    out += Table(trows);
  }
  if (!r.unplaced.empty()) {
    out += "\nunplaced at the end (" + std::to_string(r.unplaced.size()) + "):\n";
    size_t shown = 0;
    for (const auto& u : r.unplaced) {
      if (++shown > 20) {
        out += "  … and " + std::to_string(r.unplaced.size() - 20) + " more (-o json lists all)\n";
        break;
      }
      out += "  " + u.workload + " (queue " + u.queue + ", " + u.code + "):\n";
      std::string reason = u.reason;
      size_t start = 0;
      while (start < reason.size()) {
        size_t nl = reason.find('\n', start);
        if (nl == std::string::npos) nl = reason.size();
        out += "    " + reason.substr(start, nl - start) + "\n";
        start = nl + 1;
      }
    }
  }
  out += "\nWAIT: submit → first start; JCT: submit → finish; DEV-H: accelerator device-hours; BORROWED: admissions on "
         "borrowed quota.\n";
  if (faults) {
    out += "FAULT-REQ: attempts lost to a device fault (requeued); FAULT-LOST-H: the device-hours they had run (in DEV-H "
           "too).\n";
  }
  return out;
}

std::string EventsCsv(const EventSimResult& r) {
  std::string out =
      "scope,name,tenant,submitted,completed,running_at_end,pending_at_end,wait_mean_s,wait_p50_s,wait_p95_s,wait_p99_s,"
      "jct_mean_s,jct_p50_s,jct_p95_s,jct_p99_s,preempted,reclaimed,borrowing_admissions,borrowed_device_hours,"
      "device_hours,fault_requeued,fault_lost_device_hours\n";
  auto row = [&](const std::string& scope, const GroupReport& g) {
    out += scope + "," + g.name + "," + g.tenant + "," + std::to_string(g.submitted) + "," + std::to_string(g.completed) +
           "," + std::to_string(g.running_at_end) + "," + std::to_string(g.pending_at_end) + "," +
           Fixed(g.queueing.mean, 3) + "," + Fixed(g.queueing.p50, 0) + "," + Fixed(g.queueing.p95, 0) + "," +
           Fixed(g.queueing.p99, 0) + "," + Fixed(g.completion.mean, 3) + "," + Fixed(g.completion.p50, 0) + "," +
           Fixed(g.completion.p95, 0) + "," + Fixed(g.completion.p99, 0) + "," + std::to_string(g.preempted) + "," +
           std::to_string(g.reclaimed) + "," + std::to_string(g.borrowing_admissions) + "," +
           Fixed(g.borrowed_device_hours, 3) + "," + Fixed(g.device_hours, 3) + "," + std::to_string(g.fault_requeued) +
           "," + Fixed(g.fault_lost_device_hours, 3) + "\n";
  };
  for (const auto& q : r.queues) row("queue", q);
  for (const auto& t : r.tenants) row("tenant", t);
  row("total", r.total);
  return out;
}

std::string EventsSvg(const std::string& title, const EventSimResult& r) {
  const double scale = (r.end_s - r.start_s) > 2 * 86400 ? 86400.0 : 3600.0;
  const std::string unit = scale == 86400.0 ? "days" : "hours";
  PlotPanel util{"Allocated capacity", "time (" + unit + ")", "allocated (%)", {}};
  PlotPanel queue{"Workloads pending and running", "time (" + unit + ")", "workloads", {}};
  PlotSeries gpu{"GPU", {}}, npu{"NPU", {}}, cpu{"CPU", {}}, pend{"pending", {}}, run{"running", {}};
  // Step lines: a value holds until the next sample.
  for (size_t i = 0; i < r.timeline.size(); ++i) {
    const auto& s = r.timeline[i];
    const double x = static_cast<double>(s.t - r.start_s) / scale;
    if (i > 0) {
      const auto& p = r.timeline[i - 1];
      gpu.points.emplace_back(x, p.gpu_pct);
      npu.points.emplace_back(x, p.npu_pct);
      cpu.points.emplace_back(x, p.cpu_pct);
      pend.points.emplace_back(x, p.pending);
      run.points.emplace_back(x, p.running);
    }
    gpu.points.emplace_back(x, s.gpu_pct);
    npu.points.emplace_back(x, s.npu_pct);
    cpu.points.emplace_back(x, s.cpu_pct);
    pend.points.emplace_back(x, s.pending);
    run.points.emplace_back(x, s.running);
  }
  if (r.gpu_milli > 0) util.series.push_back(std::move(gpu));
  if (r.npu_milli > 0) util.series.push_back(std::move(npu));
  util.series.push_back(std::move(cpu));
  queue.series.push_back(std::move(pend));
  queue.series.push_back(std::move(run));
  util.y_min = 0;
  util.y_max = 100;
  return RenderSvg(title, {util, queue});
}

}  // namespace abacus::sim

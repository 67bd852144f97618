// ControlPlane::RenderMetrics: GET /metrics in the Prometheus text format 0.0.4.
#include <set>

#include "common/mutex.h"
#include "server/control_plane.h"
#include "server/metrics_inventory.h"
#include "server/placement_hold.h"
#include "server/process_metrics.h"

namespace abacus::server {

std::string ControlPlane::RenderMetrics() const {
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  {
    ReaderLock lock(state_mu_);
    std::map<std::string, std::pair<int, int>> by_queue;
    std::map<std::string, int> by_state;
    std::map<std::pair<std::string, std::string>, int64_t> finished;  // (kind, result)
    // Quota use in ledger units per (queue, resource): cpu milli, memory bytes, device milli.
    QuotaUse used;
    for (const Queue* q : ledger_.config().queues()) by_queue[q->name];
    int64_t allocated_milli = 0;
    for (const auto& [id, r] : ledger_.workloads()) {
      by_state[std::string(WorkloadStateName(r.state))]++;
      if (r.waiting()) by_queue[r.spec.queue].first++;
      if (IsTerminal(r.state)) finished[{std::string(WorkloadKindName(r.spec.kind())), std::string(WorkloadStateName(r.state))}]++;
      if (!r.holds_quota()) continue;
      by_queue[r.spec.queue].second++;
      for (const auto& p : r.placements) {
        PlacementHold hold = HoldOf(r, p);  // the rule the queue list and metering count by
        const std::string& queue = r.spec.queue;
        ForEachQuotaUse(hold, [&](const std::string& res, int64_t amount) { used[{queue, res}] += amount; });
        allocated_milli += hold.device_milli;
      }
    }
    family("abacus_queue_pending_workloads", "gauge", "Workloads waiting for admission, per queue.");
    for (const auto& [q, c] : by_queue) {
      out += "abacus_queue_pending_workloads{queue=\"" + EscapeLabel(q) + "\"} " + std::to_string(c.first) + "\n";
    }
    family("abacus_queue_admitted_workloads", "gauge", "Workloads holding quota, per queue.");
    for (const auto& [q, c] : by_queue) {
      out += "abacus_queue_admitted_workloads{queue=\"" + EscapeLabel(q) + "\"} " + std::to_string(c.second) + "\n";
    }
    // Quotas: nominal, used and borrowed (used above nominal) per queue and resource, in cores,
    // bytes and devices.
    std::string nominal, use, borrowed;
    for (const Queue* q : ledger_.config().queues()) {
      for (const auto& quota : q->quotas) {
        std::string res = quota.resource.Name();
        std::string labels = "{queue=\"" + EscapeLabel(q->name) + "\",tenant=\"" + EscapeLabel(q->tenant) +
                             "\",cohort=\"" + EscapeLabel(q->cohort) + "\",resource=\"" + EscapeLabel(res) + "\"}";
        int64_t n = LedgerAmount(quota.resource, quota.nominal);
        int64_t u = 0;
        if (auto it = used.find({q->name, res}); it != used.end()) u = it->second;
        nominal += "abacus_queue_quota_nominal" + labels + " " + NaturalQuantity(quota.resource, n) + "\n";
        use += "abacus_queue_quota_used" + labels + " " + NaturalQuantity(quota.resource, u) + "\n";
        borrowed += "abacus_queue_quota_borrowed" + labels + " " + NaturalQuantity(quota.resource, std::max<int64_t>(0, u - n)) + "\n";
      }
    }
    family("abacus_queue_quota_nominal", "gauge", "Guaranteed quota per queue and resource (cores, bytes, devices).");
    out += nominal;
    family("abacus_queue_quota_used", "gauge", "Quota in use per queue and resource (cores, bytes, devices).");
    out += use;
    family("abacus_queue_quota_borrowed", "gauge", "Use above nominal quota (borrowed from the cohort).");
    out += borrowed;
    family("abacus_workloads", "gauge", "Workloads in the ledger, per state.");
    for (int s = 0; s < kWorkloadStateCount; ++s) {
      std::string name(WorkloadStateName(static_cast<WorkloadState>(s)));
      out += "abacus_workloads{state=\"" + name + "\"} " + std::to_string(by_state[name]) + "\n";
    }
    family("abacus_workloads_total", "counter", "Workloads that finished, per kind and result.");
    for (const auto& [key, n] : finished) {
      out += "abacus_workloads_total{kind=\"" + key.first + "\",result=\"" + key.second + "\"} " + std::to_string(n) + "\n";
    }
    family("abacus_nodes", "gauge", "Nodes in the ledger.");
    out += "abacus_nodes " + std::to_string(ledger_.nodes().size()) + "\n";
    // Devices by state over the inventory: allocated (milli summed as devices), free, unhealthy.
    int64_t healthy = 0, unhealthy = 0;
    for (const auto& [name, n] : ledger_.nodes()) {
      for (const Device& d : n.node.devices) (d.health == DeviceHealth::kHealthy ? healthy : unhealthy)++;
    }
    family("abacus_node_devices", "gauge", "Accelerator devices by state (allocated counts shares as fractions).");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(allocated_milli) / 1000.0);
    out += std::string("abacus_node_devices{state=\"allocated\"} ") + buf + "\n";
    std::snprintf(buf, sizeof buf, "%.3f", std::max(0.0, static_cast<double>(healthy) - allocated_milli / 1000.0));
    out += std::string("abacus_node_devices{state=\"free\"} ") + buf + "\n";
    out += "abacus_node_devices{state=\"unhealthy\"} " + std::to_string(unhealthy) + "\n";
    RenderInventoryMetrics(ledger_, used, clock_.Now(), out);
    RenderServiceMetrics(ledger_, out);
  }
  family("abacus_device_utilization_ratio", "gauge", "Device utilization last reported by its agent (0..1).");
  {
    char buf[64];
    for (const auto& [node, devices] : telemetry_.DeviceUtilization()) {
      for (const auto& [index, ratio] : devices) {
        std::snprintf(buf, sizeof buf, "%.4f", ratio);
        out += "abacus_device_utilization_ratio{node=\"" + EscapeLabel(node) + "\",device=\"" + std::to_string(index) +
               "\"} " + buf + "\n";
      }
    }
  }
  auto counter = [&](const char* name, const char* help, int64_t v) {
    family(name, "counter", help);
    out += std::string(name) + " " + std::to_string(v) + "\n";
  };
  counter("abacus_workloads_submitted_total", "Workloads acknowledged.", metrics_.submitted.load());
  counter("abacus_workloads_admitted_total", "Admissions committed.", metrics_.admitted.load());
  counter("abacus_scheduler_cycles_total", "Scheduling cycles run.", metrics_.cycles.load());
  counter("abacus_store_commit_failures_total", "Batches the store refused or failed.", metrics_.commit_failures.load());
  family("abacus_loop_inbox_commands", "gauge", "Commands (writes) waiting for the scheduling loop to take them.");
  out += "abacus_loop_inbox_commands " + std::to_string(inbox_.commands_waiting()) + "\n";
  counter("abacus_loop_commits_total", "The scheduling loop's own commits (cycles, task reports, commands) settled.",
          commits_.settled());
  counter("abacus_loop_commit_waits_total",
          "Of the loop's own commits, those it had to wait for (not done when it needed them).", commits_.waited());
  counter("abacus_http_throttled_total", "Requests refused with 429.", metrics_.rejected_busy.load());
  counter("abacus_audit_write_failures_total", "Audit entries that could not be written (each also logged).",
          governance_->audit_failures());
  if (audit_watch_) audit_watch_->Render(out);
  metrics_.labeled.Render(out);
  metrics_.cycle_seconds.Render("abacus_scheduling_cycle_seconds", "Duration of one scheduling cycle.", out);
  metrics_.decision_seconds.Render("abacus_scheduler_decision_latency_seconds", "Time from submission to admission.", out);
  metrics_.commit_seconds.Render("abacus_store_commit_seconds", "Time to commit one batch (group commit).", out);
  metrics_.request_seconds.Render("abacus_http_request_seconds", "Time to handle one HTTP request.", out);
  metrics_.requests.Render(out);
  RenderProcessMetrics(out);
  return out;
}

}  // namespace abacus::server

// The evidence report (`abacus report evidence`): one document with what a POC or an audit asks
// for — inventory, queues and quotas with use and borrowing, submissions and scheduling
// results, utilization, queue waits, failures, reclaim and preemption actions, inference
// shortages, manual interventions and the audit-chain status — as Markdown, self-contained
// HTML (inline SVG bar charts, no scripts, no external assets) or JSON.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "meter/capacity.h"
#include "meter/price_list.h"
#include "meter/report_inputs.h"
#include "meter/usage.h"

namespace abacus::meter {

// Devices of one flavor in one cluster and pool, as the ledger holds them now.
struct InventoryRow {
  std::string cluster;
  std::string pool;
  std::string flavor;
  int64_t nodes = 0;
  int64_t devices = 0;
  int64_t healthy_devices = 0;
};

// One audit log entry as the evidence report needs it.
struct AuditEntrySummary {
  Time time{};
  std::string actor;  // "user alice", "scheduler", "controller/inference", "agent gpu-01"
  std::string action;
  std::string object_kind;
  std::string object_name;
  std::string result = "ok";  // "ok", or "<status>: <message>" for a refused request (no effect)
};

// What verifying the audit chain found.
struct AuditChainStatus {
  bool verified = false;  // false: not checked
  bool ok = false;
  int64_t entries = 0;  // checked, over the whole log; -1: not shown (a report for some tenants only)
  std::string reason;  // why it failed
};

struct EvidenceInput {
  std::string title = "Abacus evidence report";
  ReportWindow window;
  Time generated_at{};
  std::span<const InventoryRow> inventory;     // what exists now
  std::span<const CapacitySpan> capacity;      // what existed when (capacity.h): the capacity
  std::span<const QueueQuota> quotas;
  std::span<const UsageInterval> intervals;
  std::span<const WorkloadSummary> workloads;
  std::span<const PreemptionEvent> preemptions;
  std::span<const UtilizationSample> utilization;
  Duration max_sample_gap = std::chrono::minutes(10);
  double idle_threshold = 0.05;
  std::span<const ShortageInterval> shortages;
  std::span<const AuditEntrySummary> audit;  // entries of the window
  AuditChainStatus audit_chain;
  const PriceList* prices = nullptr;
};

enum class EvidenceFormat { kMarkdown, kHtml, kJson };

// Parses "md", "markdown", "html" or "json"; InvalidArgument otherwise.
Result<EvidenceFormat> ParseEvidenceFormat(std::string_view text);
// Returns the evidence document for `input` in `format`.
std::string RenderEvidence(const EvidenceInput& input, EvidenceFormat format);
// True when an audit entry is a manual intervention: a person ("user …") acting with one of
// cancel, override, quota-change, cordon, uncordon, drain, delete, scale, suspend, resume,
// requeue, preempt, hold, release, priority-change, or applying a queue or cohort (a quota change), whose
// result is "ok": a refused request (a 404 or 409 cancel) changed nothing and is not counted.
bool IsManualIntervention(const AuditEntrySummary& entry);

}  // namespace abacus::meter

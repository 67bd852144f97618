#include "sched/explain.h"

#include "model/quantity.h"

namespace abacus::sched {
namespace {

std::string Amount(ResourceKey r, int64_t v) {
  switch (r.type) {
    case ResourceType::kCpu: return Quantity::FromMilli(v).ToString() + " cpu";
    case ResourceType::kMemory: return FormatBytes(v) + " memory";
    case ResourceType::kDeviceMilli: return FormatDeviceMilli(v) + " " + Flavor::FromId(r.flavor).name();
    case ResourceType::kDeviceMemory: return FormatBytes(v) + " " + Flavor::FromId(r.flavor).name() + " memory";
    case ResourceType::kExtended: return FormatAmount(r, v) + " " + r.ToString();
  }
  return std::to_string(v);
}

std::string Num(ResourceKey r, int64_t v) {
  switch (r.type) {
    case ResourceType::kCpu: return Quantity::FromMilli(v).ToString();
    case ResourceType::kMemory:
    case ResourceType::kDeviceMemory: return FormatBytes(v);
    case ResourceType::kDeviceMilli: return FormatDeviceMilli(v);
    case ResourceType::kExtended: return FormatAmount(r, v);
  }
  return std::to_string(v);
}

}  // namespace

std::string_view FilterReasonName(FilterReason r) {
  switch (r) {
    case FilterReason::kNotReady: return "node not ready or cordoned";
    case FilterReason::kPool: return "pool not open to tenant";
    case FilterReason::kReservedPool: return "outside the reservation pool";
    case FilterReason::kCluster: return "cluster not open to queue";
    case FilterReason::kSelector: return "node selector";
    case FilterReason::kTaint: return "untolerated taint";
    case FilterReason::kRuntime: return "runtime version";
    case FilterReason::kCpu: return "free cpu";
    case FilterReason::kMemory: return "free memory";
    case FilterReason::kExtended: return "free extended resources";
    case FilterReason::kNoDevice: return "no such device";
    case FilterReason::kDevices: return "free devices";
    case FilterReason::kDeviceMemory: return "device memory";
    case FilterReason::kTopology: return "topology";
    case FilterReason::kReserved: return "reserved for a gang";
    case FilterReason::kWindowReserved: return "reservation";
    case FilterReason::kMaxPerNode: return "maxPerNode";
    case FilterReason::kSpread: return "spread (maxSkew)";
    case FilterReason::kAntiAffinity: return "anti-affinity";
    case FilterReason::kCount: break;
  }
  return "?";
}

std::string_view PendingCodeName(PendingCode c) {
  switch (c) {
    case PendingCode::kQuota: return "Quota";
    case PendingCode::kNoFlavor: return "NoFlavor";
    case PendingCode::kPlacement: return "Placement";
    case PendingCode::kWaitingForPreemption: return "WaitingForPreemption";
    case PendingCode::kBlockedByStrictFifo: return "BlockedByStrictFIFO";
    case PendingCode::kReservedForGang: return "ReservedForGang";
    case PendingCode::kInvalid: return "NeverFits";
    case PendingCode::kHeldForPreemptor: return "HeldForPreemptor";
  }
  return "?";
}

std::string DescribeQuota(const QuotaDetail& d, const std::string& queue) {
  std::string out = "needs " + Amount(d.resource, d.needed) + "; queue " + queue + " uses " +
                    Num(d.resource, d.used) + " of nominal " + Num(d.resource, d.nominal);
  // What stops it: the queue's borrowing limit, having no cohort, or what the cohort can lend.
  const int64_t would_borrow = d.used + d.needed - d.nominal;
  if (d.borrowing_limit && would_borrow > *d.borrowing_limit) {
    out += "; borrowing limit " + Num(d.resource, *d.borrowing_limit) + " reached (it would borrow " +
           Num(d.resource, would_borrow) + ")";
  } else if (!d.in_cohort) {
    out += "; the queue is in no cohort, so it cannot borrow";
  } else {
    out += "; cohort can lend " + Num(d.resource, d.borrowable);
    if (d.own_idle > 0) out += " (" + Num(d.resource, d.own_idle) + " of it the queue's own unused nominal)";
    if (d.borrowing_limit) out += ", borrowing limit " + Num(d.resource, *d.borrowing_limit);
    if (d.borrowable < d.needed && !d.lending_limited.empty()) {
      out += "; lending limits keep quota back: ";
      for (size_t i = 0; i < d.lending_limited.size() && i < 3; ++i) {
        const auto& [name, limit, nominal] = d.lending_limited[i];
        out += (i ? ", " : "") + name + " lends at most " + Num(d.resource, limit) + " of nominal " + Num(d.resource, nominal);
      }
    }
  }
  if (!d.limiting_cohort.empty()) {
    out += "; but cohort " + d.limiting_cohort + " reached its borrowing limit " +
           Num(d.resource, d.cohort_borrowing_limit) + " (its queues borrow " + Num(d.resource, d.cohort_borrowed) + ")";
  }
  if (!d.borrowed_by.empty()) {
    out += "; borrowed by ";
    for (size_t i = 0; i < d.borrowed_by.size() && i < 3; ++i) {
      if (i) out += ", ";
      out += d.borrowed_by[i].first + " " + Num(d.resource, d.borrowed_by[i].second);
    }
  }
  return out;
}

std::string DescribePlacement(const PlacementDetail& d) {
  std::string flavor = d.flavor == kCpuFlavorId ? "cpu" : Flavor::FromId(d.flavor).name();
  std::string out = std::to_string(d.tasks_placeable) + " of " + std::to_string(d.tasks_needed) +
                    " tasks placeable on " + flavor + "; " + std::to_string(d.nodes_feasible) + " of " +
                    std::to_string(d.nodes_total) + " nodes fit one task";
  if (d.max_per_node > 0 && d.nodes_feasible > 0 && d.rule_room < d.tasks_needed) {
    out += "; maxPerNode " + std::to_string(d.max_per_node) + " leaves room for " + std::to_string(d.rule_room) +
           " on them";
  }
  if (!d.best_node.empty()) out += "; best candidate " + d.best_node + " (" + d.best_lacks + ")";
  std::string filtered;
  for (size_t i = 0; i < d.filtered.size(); ++i) {
    if (d.filtered[i] == 0) continue;
    if (!filtered.empty()) filtered += ", ";
    filtered += std::to_string(d.filtered[i]) + " by " + std::string(FilterReasonName(static_cast<FilterReason>(i)));
    if (static_cast<FilterReason>(i) == FilterReason::kRuntime && !d.runtime_needed.empty()) {
      filtered += " (needs " + d.runtime_needed + ")";
    }
    if (static_cast<FilterReason>(i) == FilterReason::kSelector && !d.selector_needed.empty()) {
      filtered += " (needs " + d.selector_needed + ")";
    }
    if (static_cast<FilterReason>(i) == FilterReason::kWindowReserved && !d.reservation_note.empty()) {
      filtered += " (" + d.reservation_note + ")";
    }
    const bool rule = static_cast<FilterReason>(i) >= FilterReason::kMaxPerNode;
    if (rule && !d.rule_example.empty() && filtered.find(d.rule_example) == std::string::npos) {
      filtered += " (" + d.rule_example + ")";
    }
  }
  if (!filtered.empty()) out += "; ruled out: " + filtered;
  if (!d.rule_example.empty() && out.find(d.rule_example) == std::string::npos) {
    out += "; with its other tasks placed, a placement rule stops the next: " + d.rule_example;
  }
  return out;
}

std::string DescribePending(const PendingReason& r) {
  std::string out = std::string(PendingCodeName(r.code)) + ": " + r.message + "\n";
  if (r.placement) out += "  placement: " + DescribePlacement(*r.placement) + "\n";
  if (!r.preemption.empty()) out += "  preemption: " + r.preemption + "\n";
  if (!r.fair_share.empty()) out += "  fair share: " + r.fair_share + "\n";
  out += "  queue position " + std::to_string(r.position) + ", " + std::to_string(r.ahead) + " ahead";
  if (!r.ahead_ids.empty()) {
    out += " (";
    for (size_t i = 0; i < r.ahead_ids.size(); ++i) out += (i ? ", " : "") + r.ahead_ids[i];
    out += r.ahead > static_cast<int32_t>(r.ahead_ids.size()) ? ", …)" : ")";
  }
  out += "\n  priority " + std::to_string(r.effective_priority);
  if (r.effective_priority != r.base_priority) out += " (aged from " + std::to_string(r.base_priority) + ")";
  out += ", waited " + FormatDuration(r.waited);
  if (r.overrun.count() > 0) out += ", " + FormatDuration(r.overrun) + " past its maxQueueWait";
  out += "\n";
  return out;
}

}  // namespace abacus::sched

#include "sched/order.h"

#include <algorithm>

namespace abacus::sched {

int32_t EffectivePriority(const WorkloadInfo& w, Time now) {
  if (w.max_queue_wait.count() <= 0 || w.aging_step <= 0) return w.priority;
  if (w.admitted) now = w.admitted_at;  // epoch (unknown): no aging
  int64_t waited = (now - w.submitted).count();
  if (waited <= 0) return w.priority;
  int64_t periods = waited / w.max_queue_wait.count();
  int64_t ceiling = std::max(w.priority, w.priority_ceiling);
  int64_t aged = w.priority + periods * static_cast<int64_t>(w.aging_step);
  return static_cast<int32_t>(std::min(aged, ceiling));
}

bool BeforeInQueue(const WorkloadInfo& a, int32_t a_priority, const WorkloadInfo& b, int32_t b_priority) {
  if (a_priority != b_priority) return a_priority > b_priority;
  if (a.submitted != b.submitted) return a.submitted < b.submitted;
  return a.id < b.id;
}

DrfSorter::DrfSorter(ClusterTotals totals, std::vector<int64_t> flavor_weight_milli)
    : totals_(std::move(totals)), weight_(std::move(flavor_weight_milli)) {
  for (size_t f = 1; f < totals_.device_milli.size(); ++f) {
    int64_t w = f < weight_.size() ? weight_[f] : 1000;
    weighted_capacity_ += static_cast<double>(totals_.device_milli[f]) * static_cast<double>(w);
  }
}

double DrfSorter::Share(const ResourceVector& u, int64_t weight_milli) const {
  double cpu = totals_.cpu_milli > 0 ? static_cast<double>(u.cpu_milli()) / static_cast<double>(totals_.cpu_milli) : 0;
  double mem = totals_.memory_bytes > 0 ? static_cast<double>(u.memory_bytes()) / static_cast<double>(totals_.memory_bytes) : 0;
  double acc_used = 0;
  u.ForEach([&](ResourceKey r, int64_t v) {
    if (r.type != ResourceType::kDeviceMilli) return;
    int64_t w = r.flavor < weight_.size() ? weight_[r.flavor] : 1000;
    acc_used += static_cast<double>(v) * static_cast<double>(w);
  });
  double acc = weighted_capacity_ > 0 ? acc_used / weighted_capacity_ : 0;
  return std::max({cpu, mem, acc}) * 1000.0 / static_cast<double>(std::max<int64_t>(1, weight_milli));
}

}  // namespace abacus::sched

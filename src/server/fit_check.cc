#include "server/fit_check.h"

#include <utility>

#include "common/mutex.h"
#include "sched/tenancy_snapshot.h"
#include "server/ledger.h"

namespace abacus::server {
namespace {

constexpr size_t kMaxVerdicts = 4096;  // request shapes remembered per generation

// What the NeverFits rule reads of a workload, as one key: its queue, class and requests.
std::string ShapeOf(const sched::WorkloadInfo& w) {
  std::string k = std::to_string(w.queue) + (w.borrowed_only ? "|B" : "|") + (w.gang ? "G" : "");
  if (!w.quota_grant.IsZero()) k += "|q" + w.quota_grant.ToString();
  for (const auto& [a, b] : w.data_labels) k += "|d" + a + "=" + b;
  for (const sched::TaskGroupRequest& g : w.groups) {
    const sched::TaskRequest& t = g.task;
    k += "#" + std::to_string(g.replicas) + "|" + std::to_string(t.cpu_milli) + "|" + std::to_string(t.memory_bytes) +
         "|" + std::to_string(t.device_count) + "|" + std::to_string(t.share_milli) + "|" +
         std::to_string(t.device_memory) + "|" + std::to_string(static_cast<int>(t.topology)) + "|f";
    for (FlavorId f : t.flavors) k += std::to_string(f) + ",";
    for (const auto& [a, b] : t.node_selector) k += "|s" + a + "=" + b;
    for (const auto& tol : t.tolerations) {
      k += "|t" + tol.key + (tol.op == Toleration::Op::kExists ? "?" : "=") + tol.value +
           (tol.effect ? std::to_string(static_cast<int>(*tol.effect)) : "");
    }
    for (const auto& r : t.runtime) k += "|r" + r.text;
    for (const auto& p : t.pools) k += "|p" + p;
    if (!t.reserved_pool.empty()) k += "|R" + t.reserved_pool + (t.pool_overflow ? "+" : "");
  }
  return k;
}

}  // namespace

FitChecker::FitChecker(sched::Snapshot base, std::map<std::string, int> queue_index, std::vector<Flavor> flavors,
                       std::shared_ptr<const TenancyConfig> config)
    : queue_index_(std::move(queue_index)),
      flavors_(std::move(flavors)),
      config_(std::move(config)),
      world_(std::move(base)) {
  world_.workloads.clear();
}

std::string FitChecker::NeverFits(const WorkloadRecord& record, const sched::SchedulerConfig& config) const {
  static const std::map<std::string, int> kNoNodes;
  static const std::vector<std::map<int, int>> kNoDevices;
  std::string why;
  std::optional<sched::WorkloadInfo> w =
      BuildWorkloadInfo(record, *config_, flavors_, queue_index_, kNoNodes, kNoDevices, why);
  if (!w || w->admitted) return "";
  // An experiment's temporary quota may be granted (at once up to its tenant's auto-approve
  // limit, else by a tenant admin): what the grant would cover is not "never" (the probe of
  // 2026-12-07 saw a warning for an experiment admitted a second later).
  if (const ExperimentSpec* e = record.spec.experiment(); e != nullptr && e->temporary_quota) {
    const TemporaryQuota& tq = *e->temporary_quota;
    w->quota_grant.Add(sched::QuotaKey(tq.resource), LedgerAmount(tq.resource, tq.amount));
  }
  const std::string shape = ShapeOf(*w);
  MutexLock lock(mu_);
  if (auto it = verdicts_.find(shape); it != verdicts_.end()) return it->second;
  w->holding = false;
  w->yields_to.clear();
  world_.now = record.submitted;
  world_.workloads.assign(1, std::move(*w));
  sched::SchedulerConfig alone = config;
  alone.detailed_reasons = true;
  alone.fgd_distribution.clear();
  sched::CycleResult result = sched::Schedule(world_, alone);
  world_.workloads.clear();
  std::string verdict;
  for (const sched::PendingReason& r : result.pending) {
    if (r.code == sched::PendingCode::kInvalid) verdict = r.message;
  }
  if (verdicts_.size() >= kMaxVerdicts) verdicts_.clear();
  verdicts_.emplace(shape, verdict);
  return verdict;
}

std::string NeverFitsWarning(std::string never) {
  constexpr std::string_view kPrefix = "never fits: ";
  if (never.rfind(kPrefix, 0) == 0) never.erase(0, kPrefix.size());
  return "NeverFits: " + never;
}

}  // namespace abacus::server

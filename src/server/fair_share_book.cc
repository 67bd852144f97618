#include "server/fair_share_book.h"

#include "common/mutex.h"
#include "meter/usage_ledger.h"
#include "model/flavor.h"

namespace abacus::server {
namespace {

// The accelerator flavor of `iv`, nullopt for CPU-only work (or a flavor no longer readable).
std::optional<FlavorId> AcceleratorOf(const meter::UsageInterval& iv) {
  if (iv.device_milli <= 0 || iv.flavor.empty() || iv.flavor == "cpu") return std::nullopt;
  auto f = Flavor::Parse(iv.flavor);
  if (!f.ok() || !f->is_accelerator()) return std::nullopt;
  return f->Intern();
}

}  // namespace

Status FairShareBook::Rebuild(Store& store) {
  ABACUS_ASSIGN_OR_RETURN(auto intervals, meter::ReadUsage(store, Time::min(), Time::max()));
  sched::UsageHistory fresh(half_life_);
  for (const meter::UsageInterval& iv : intervals) {
    auto f = AcceleratorOf(iv);
    if (!f) continue;
    if (iv.open()) {
      fresh.Start(iv.queue, *f, iv.device_milli, iv.start);
    } else {
      fresh.Add(iv.queue, *f, iv.device_milli, iv.start, *iv.end);
    }
  }
  MutexLock lock(mu_);
  history_ = std::move(fresh);
  return Status::OK();
}

void FairShareBook::Count(const meter::UsageInterval& iv) {
  auto f = AcceleratorOf(iv);
  if (!f) return;
  MutexLock lock(mu_);
  if (iv.open()) {
    history_.Start(iv.queue, *f, iv.device_milli, iv.start);
  } else {
    history_.Add(iv.queue, *f, iv.device_milli, iv.start, *iv.end);
  }
}

void FairShareBook::Close(const meter::UsageInterval& iv, Time end) {
  auto f = AcceleratorOf(iv);
  if (!f) return;
  MutexLock lock(mu_);
  history_.Stop(iv.queue, *f, iv.device_milli, end);
}

void FairShareBook::Fill(sched::Snapshot* snapshot) const {
  MutexLock lock(mu_);
  sched::SetFairShare(history_, snapshot);
}

std::vector<sched::QueueShare> FairShareBook::Shares(const sched::Snapshot& tenancy, Time now) const {
  MutexLock lock(mu_);
  return sched::ComputeShares(tenancy.queues, tenancy.cohorts, tenancy.flavor_weight_milli, history_, now);
}

}  // namespace abacus::server

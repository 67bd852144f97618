#include "sched/quota.h"

#include <algorithm>

#include "common/check.h"
#include "model/quantity.h"

namespace abacus::sched {

QuotaState::QuotaState(const std::vector<QueueInfo>& queues, const std::vector<CohortInfo>& cohorts)
    : queues_(queues), cohorts_(cohorts) {
  const size_t nq = queues_.size();
  usage_.resize(nq);
  best_effort_.resize(nq);
  root_of_queue_.assign(nq, kNone);
  ancestors_.resize(nq);
  pool_size_.resize(cohorts_.size());
  pool_used_.resize(cohorts_.size());
  tree_queues_.resize(cohorts_.size());
  lone_lists_.resize(nq);
  for (size_t q = 0; q < nq; ++q) {
    CohortIndex c = queues_[q].cohort;
    int guard = 0;
    while (c != kNone) {
      ABACUS_CHECK(c >= 0 && c < static_cast<CohortIndex>(cohorts_.size()), "queue names an unknown cohort");
      ABACUS_CHECK(++guard <= 64, "cohort tree deeper than 64 or cyclic");
      ancestors_[q].push_back(c);
      c = cohorts_[c].parent;
    }
    if (ancestors_[q].empty()) {
      lone_lists_[q] = {static_cast<QueueIndex>(q)};
      continue;
    }
    root_of_queue_[q] = ancestors_[q].back();
    tree_queues_[root_of_queue_[q]].push_back(static_cast<QueueIndex>(q));
    for (const auto& e : queues_[q].quotas) {
      int64_t lendable = e.nominal - Guaranteed(e);
      for (CohortIndex a : ancestors_[q]) pool_size_[a].Add(e.resource, lendable);
    }
  }
}

const std::vector<QueueIndex>& QuotaState::TreeQueues(QueueIndex q) const {
  return root_of_queue_[q] == kNone ? lone_lists_[q] : tree_queues_[root_of_queue_[q]];
}

const QuotaInfo* QuotaState::Entry(QueueIndex q, ResourceKey r) const {
  for (const auto& e : queues_[q].quotas) {
    if (e.resource == r) return &e;
  }
  return nullptr;
}

bool QuotaState::Limits(QueueIndex q, ResourceKey r) const {
  return r.type == ResourceType::kDeviceMilli || Entry(q, r) != nullptr;
}

int64_t QuotaState::nominal(QueueIndex q, ResourceKey r) const {
  const QuotaInfo* e = Entry(q, r);
  return e ? e->nominal : 0;
}

int64_t QuotaState::Guaranteed(const QuotaInfo& e) const {
  if (!e.lending_limit) return 0;
  return std::max<int64_t>(0, e.nominal - std::min(e.nominal, *e.lending_limit));
}

int64_t QuotaState::PoolUse(QueueIndex q, ResourceKey r, int64_t used, int64_t best_effort) const {
  const QuotaInfo* e = Entry(q, r);
  int64_t g = e ? Guaranteed(*e) : 0;
  return std::max<int64_t>(0, used - best_effort - g) + best_effort;
}

int64_t QuotaState::PoolFree(QueueIndex q, ResourceKey r) const {
  CohortIndex root = root_of_queue_[q];
  if (root == kNone) {
    // A queue alone is its own pool: what it may still use of its nominal quota.
    return std::max<int64_t>(0, nominal(q, r) - used(q, r));
  }
  return pool_size_[root].Get(r) - pool_used_[root].Get(r);
}

bool QuotaState::IsOverNominal(QueueIndex q, ResourceKey r) const {
  if (!Limits(q, r)) return false;
  return usage_[q].Get(r) - best_effort_[q].Get(r) > nominal(q, r);
}

bool QuotaState::IsBorrowing(QueueIndex q, ResourceKey r) const {
  if (!Limits(q, r)) return false;  // unlisted cpu/memory: not under quota, never borrowed
  if (best_effort_[q].Get(r) > 0) return true;
  return usage_[q].Get(r) - best_effort_[q].Get(r) > nominal(q, r);
}

int64_t QuotaState::MostEver(QueueIndex q, ResourceKey r, std::string* how) const {
  if (!Limits(q, r)) return INT64_MAX;
  const QuotaInfo* e = Entry(q, r);
  const int64_t n = e ? e->nominal : 0;
  auto num = [&](int64_t v) { return FormatAmount(r, v); };
  CohortIndex root = root_of_queue_[q];
  if (root == kNone) {
    *how = "nominal " + num(n) + ", no cohort to borrow from";
    return n;
  }
  // Others' lendable nominal quota: the pool less this queue's own part.
  const int64_t own_lendable = e ? e->nominal - Guaranteed(*e) : 0;
  const int64_t others = pool_size_[root].Get(r) - own_lendable;
  int64_t borrow = others;
  std::string which = "the " + num(others) + " other queues of its cohort can lend";
  if (e && e->borrowing_limit && *e->borrowing_limit < borrow) {
    borrow = *e->borrowing_limit;
    which = "borrowing limit " + num(borrow);
  }
  *how = "nominal " + num(n) + " + " + which;
  return n + borrow;
}

QuotaDetail QuotaState::Detail(QueueIndex q, ResourceKey r, int64_t needed, CohortIndex limiting_cohort) const {
  QuotaDetail d;
  if (limiting_cohort != kNone) {
    d.limiting_cohort = cohorts_[limiting_cohort].name;
    for (const auto& ce : cohorts_[limiting_cohort].quotas) {
      if (ce.resource == r && ce.borrowing_limit) d.cohort_borrowing_limit = *ce.borrowing_limit;
    }
    d.cohort_borrowed = std::max<int64_t>(0, pool_used_[limiting_cohort].Get(r) - pool_size_[limiting_cohort].Get(r));
  }
  d.resource = r;
  d.needed = needed;
  d.nominal = nominal(q, r);
  d.used = used(q, r);
  if (const QuotaInfo* e = Entry(q, r); e != nullptr) d.borrowing_limit = e->borrowing_limit;
  d.borrowable = root_of_queue_[q] == kNone ? 0 : PoolFree(q, r);
  d.in_cohort = root_of_queue_[q] != kNone;
  if (const QuotaInfo* e = Entry(q, r); e != nullptr && d.in_cohort) {
    const int64_t g = Guaranteed(*e);
    const int64_t lendable = e->nominal - g;
    const int64_t pool_use = PoolUse(q, r, usage_[q].Get(r), best_effort_[q].Get(r));
    d.own_idle = std::min(d.borrowable, std::max<int64_t>(0, lendable - pool_use));
  }
  for (QueueIndex p : TreeQueues(q)) {
    if (p == q || !d.in_cohort) continue;
    const QuotaInfo* pe = Entry(p, r);
    if (pe != nullptr && pe->lending_limit && *pe->lending_limit < pe->nominal) {
      d.lending_limited.emplace_back(queues_[p].name, *pe->lending_limit, pe->nominal);
    }
  }
  for (QueueIndex p : TreeQueues(q)) {
    if (p == q) continue;
    int64_t over = usage_[p].Get(r) - nominal(p, r);
    over = std::max(over, best_effort_[p].Get(r));
    if (over > 0) d.borrowed_by.emplace_back(queues_[p].name, over);
  }
  std::sort(d.borrowed_by.begin(), d.borrowed_by.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  return d;
}

QuotaCheck QuotaState::Check(QueueIndex q, const ResourceVector& request, bool borrowed_only) const {
  QuotaCheck out;
  auto worsen = [&](FlavorMode m, ResourceKey r, int64_t needed, CohortIndex cohort = kNone) {
    if (static_cast<int>(m) > static_cast<int>(out.mode)) {
      out.mode = m;
      out.shortage = r;
      out.needed = needed;
      out.limiting_cohort = cohort;
    }
  };
  request.ForEach([&](ResourceKey r, int64_t amount) {
    if (r.type == ResourceType::kDeviceMemory || amount <= 0 || !Limits(q, r)) return;
    const QuotaInfo* e = Entry(q, r);
    int64_t n = e ? e->nominal : 0;
    int64_t u = usage_[q].Get(r);
    int64_t be = best_effort_[q].Get(r);
    int64_t u_after = u + amount;
    int64_t be_after = be + (borrowed_only ? amount : 0);
    int64_t pool_delta = PoolUse(q, r, u_after, be_after) - PoolUse(q, r, u, be);
    bool within_nominal = !borrowed_only && (u_after - be_after) <= n;
    CohortIndex root = root_of_queue_[q];
    int64_t pool_free = root == kNone ? 0 : pool_size_[root].Get(r) - pool_used_[root].Get(r);
    if (root == kNone) {
      // No cohort: nothing to borrow, nothing lent.
      if (!within_nominal) worsen(FlavorMode::kNoFit, r, amount);
      return;
    }
    if (within_nominal) {
      if (pool_delta > pool_free) worsen(FlavorMode::kPreempt, r, amount);  // reclaim what was lent
      return;
    }
    if (e && e->borrowing_limit && u_after - be_after - n > *e->borrowing_limit && !borrowed_only) {
      worsen(FlavorMode::kNoFit, r, amount);
      return;
    }
    if (borrowed_only && e && e->borrowing_limit && be_after > *e->borrowing_limit) {
      worsen(FlavorMode::kNoFit, r, amount);
      return;
    }
    if (pool_delta > pool_free) {
      worsen(FlavorMode::kNoFit, r, amount);
      return;
    }
    for (CohortIndex c : ancestors_[q]) {
      for (const auto& ce : cohorts_[c].quotas) {
        if (ce.resource == r && ce.borrowing_limit &&
            pool_used_[c].Get(r) + pool_delta - pool_size_[c].Get(r) > *ce.borrowing_limit) {
          worsen(FlavorMode::kNoFit, r, amount, c);
          return;
        }
      }
    }
    worsen(FlavorMode::kBorrow, r, amount);
  });
  return out;
}

void QuotaState::Add(QueueIndex q, const ResourceVector& usage, bool borrowed_only) {
  usage.ForEach([&](ResourceKey r, int64_t amount) {
    if (r.type == ResourceType::kDeviceMemory) return;
    int64_t u = usage_[q].Get(r), be = best_effort_[q].Get(r);
    int64_t delta = PoolUse(q, r, u + amount, be + (borrowed_only ? amount : 0)) - PoolUse(q, r, u, be);
    usage_[q].Add(r, amount);
    if (borrowed_only) best_effort_[q].Add(r, amount);
    for (CohortIndex a : ancestors_[q]) pool_used_[a].Add(r, delta);
  });
}

void QuotaState::Remove(QueueIndex q, const ResourceVector& usage, bool borrowed_only) {
  usage.ForEach([&](ResourceKey r, int64_t amount) {
    if (r.type == ResourceType::kDeviceMemory) return;
    int64_t u = usage_[q].Get(r), be = best_effort_[q].Get(r);
    int64_t delta = PoolUse(q, r, u - amount, be - (borrowed_only ? amount : 0)) - PoolUse(q, r, u, be);
    usage_[q].Add(r, -amount);
    if (borrowed_only) best_effort_[q].Add(r, -amount);
    ABACUS_CHECK(usage_[q].Get(r) >= 0, "queue usage went negative");
    for (CohortIndex a : ancestors_[q]) pool_used_[a].Add(r, delta);
  });
}

QuotaCheck CheckWorkload(const QuotaState& quota, const WorkloadInfo& w, const ResourceVector& usage) {
  QuotaCheck q = quota.Check(w.queue, usage, w.borrowed_only);
  if (q.mode == FlavorMode::kBorrow && !w.preemptible) {
    q.mode = FlavorMode::kNoFit;
    q.borrow_refused = true;
  }
  return q;
}

}  // namespace abacus::sched

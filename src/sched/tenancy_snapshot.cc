#include "sched/tenancy_snapshot.h"

#include <utility>

namespace abacus::sched {

ResourceKey QuotaKey(const QuotaResource& r) {
  switch (r.kind) {
    case QuotaResource::Kind::kCpu: return ResourceKey::Cpu();
    case QuotaResource::Kind::kMemory: return ResourceKey::Memory();
    case QuotaResource::Kind::kDevices: break;
    case QuotaResource::Kind::kExtended: {
      auto x = ExtendedResource::Parse(r.extended);  // parsed once already (QuotaResource::Parse)
      if (x.ok()) return ResourceKey::Extended(x->Intern());
      break;
    }
  }
  return ResourceKey::Devices(r.flavor.Intern());
}

QuotaInfo ToQuotaInfo(const Quota& q) {
  QuotaInfo out;
  out.resource = QuotaKey(q.resource);
  out.nominal = LedgerAmount(q.resource, q.nominal);
  if (q.borrowing_limit) out.borrowing_limit = LedgerAmount(q.resource, *q.borrowing_limit);
  if (q.lending_limit) out.lending_limit = LedgerAmount(q.resource, *q.lending_limit);
  return out;
}

WindowReservation ToWindowReservation(const ReservationConfig& r) {
  WindowReservation w;
  w.name = r.name;
  w.nodes = r.nodes;
  if (r.count > 0) w.flavor = r.flavor.Intern();
  w.devices = r.count;
  w.pool = r.pool;
  w.cluster = r.cluster;
  w.tenant = r.tenant;
  w.queue = r.queue;
  w.user = r.user;
  w.start = r.start;
  w.end = r.end;
  w.every = r.every;
  w.drain = r.drain;
  return w;
}

std::vector<std::string> AddTenancy(const TenancyConfig& config, Snapshot* snapshot,
                                    std::map<std::string, int>* queue_index) {
  std::vector<std::string> problems;
  const int first_cohort = static_cast<int>(snapshot->cohorts.size());
  std::map<std::string, int> cohort_index;
  for (const Cohort* c : config.cohorts()) {
    cohort_index[c->name] = first_cohort + static_cast<int>(cohort_index.size());
  }
  for (const Cohort* c : config.cohorts()) {
    CohortInfo ci;
    ci.name = c->name;
    if (!c->parent.empty()) {
      auto it = cohort_index.find(c->parent);
      if (it != cohort_index.end()) {
        ci.parent = it->second;
      } else {
        problems.push_back("cohort " + c->name + ": unknown parent " + c->parent);
      }
    }
    for (const Quota& q : c->quotas) ci.quotas.push_back(ToQuotaInfo(q));
    snapshot->cohorts.push_back(std::move(ci));
  }
  for (const Queue* q : config.queues()) {
    QueueInfo qi;
    qi.name = q->name;
    qi.tenant = q->tenant;
    if (!q->cohort.empty()) {
      auto it = cohort_index.find(q->cohort);
      if (it != cohort_index.end()) {
        qi.cohort = it->second;
      } else {
        problems.push_back("queue " + q->name + ": unknown cohort " + q->cohort);
      }
    }
    qi.weight_milli = q->weight_milli;
    qi.strategy = q->queueing_strategy == abacus::QueueingStrategy::kStrictFifo ? QueueingStrategy::kStrictFifo
                                                                                : QueueingStrategy::kBestEffortFifo;
    for (const Quota& quota : q->quotas) qi.quotas.push_back(ToQuotaInfo(quota));
    if (const Tenant* t = config.FindTenant(q->tenant)) qi.allowed_pools = t->pools;
    qi.allowed_clusters = q->clusters;
    qi.preferred_clusters = q->preferred_clusters;
    qi.reclaim_lower_priority_only = q->reclaim_within_nominal == abacus::ReclaimWithinNominal::kLowerPriority;
    if (queue_index != nullptr) (*queue_index)[q->name] = static_cast<int>(snapshot->queues.size());
    snapshot->queues.push_back(std::move(qi));
  }
  for (const FlavorConfig* f : config.flavors()) snapshot->flavor_weight_milli[f->flavor.Intern()] = f->weight_milli;
  // A pool without tenants is open to every tenant, as an absent one (scheduler.h).
  for (const PoolConfig* p : config.pools()) {
    if (!p->tenants.empty()) snapshot->pool_tenants[p->name] = p->tenants;
  }
  for (const ClusterConfig* c : config.clusters()) snapshot->clusters.push_back({c->name, c->labels});
  for (const ReservationConfig* r : config.reservations()) snapshot->window_reservations.push_back(ToWindowReservation(*r));
  return problems;
}

void ApplyPriorityClass(const PriorityClass& pc, WorkloadInfo* w) {
  w->priority = pc.value;
  w->preemptible = pc.preemptible;
  w->can_preempt = pc.can_preempt;
  w->borrowed_only = pc.borrowed_only;
  w->aging_step = pc.aging_step;
  w->priority_ceiling = pc.ceiling.value_or(0);
  w->max_queue_wait = pc.max_queue_wait.value_or(Duration(0));
}

}  // namespace abacus::sched

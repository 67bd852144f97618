#include "server/quota_view.h"

#include <algorithm>
#include <map>
#include <set>

#include "meter/borrowing.h"

namespace abacus::server {

using nlohmann::json;

std::vector<meter::QueueQuota> BorrowingQuotas(const TenancyConfig& config, bool devices_only) {
  std::vector<meter::QueueQuota> out;
  for (const Queue* queue : config.queues()) {
    for (const auto& quota : queue->quotas) {
      if (devices_only && quota.resource.kind != QuotaResource::Kind::kDevices) continue;
      meter::QueueQuota qq;
      qq.queue = queue->name;
      qq.tenant = queue->tenant;
      qq.cohort = queue->cohort;
      qq.flavor = quota.resource.Name();
      qq.nominal_milli = LedgerAmount(quota.resource, quota.nominal);
      if (quota.lending_limit) qq.lending_limit_milli = LedgerAmount(quota.resource, *quota.lending_limit);
      out.push_back(std::move(qq));
    }
  }
  return out;
}

std::map<std::pair<std::string, std::string>, BorrowingNowLine> BorrowingNowByQueue(
    const TenancyConfig& config, const std::vector<meter::UseNow>& use) {
  // Lending happens inside a cohort tree (the scheduler's quota, sched/quota.h): each queue
  // counts in its root cohort.
  std::map<std::string, std::string> parent;
  for (const Cohort* c : config.cohorts()) parent[c->name] = c->parent;
  std::vector<meter::QueueQuota> quotas = BorrowingQuotas(config, false);
  for (meter::QueueQuota& q : quotas) {
    for (int depth = 0; depth < 64 && !parent[q.cohort].empty(); ++depth) q.cohort = parent[q.cohort];
  }
  meter::BorrowingResult now = meter::BorrowingNow(quotas, use);
  std::map<std::pair<std::string, std::string>, BorrowingNowLine> out;
  for (const meter::BorrowFlow& f : now.flows) {
    int64_t amount = static_cast<int64_t>(f.amount);
    out[{f.borrower, f.flavor}].borrowed_from.push_back({f.lender, amount});
    if (f.lender != meter::kCohortLender) out[{f.lender, f.flavor}].lent_to.push_back({f.borrower, amount});
  }
  for (const meter::QueueUse& q : now.queues) {
    out[{q.queue, q.flavor}].borrowed = static_cast<int64_t>(q.borrowed);
    out[{q.queue, q.flavor}].lent = static_cast<int64_t>(q.lent);
  }
  return out;
}

json BorrowingNowJson(const BorrowingNowLine& line, json usage) {
  auto flows = [](const std::vector<BorrowingNowLine::Flow>& list) {
    json out = json::array();
    for (const auto& f : list) out.push_back({{"queue", f.queue}, {"amount", f.amount}});
    return out;
  };
  usage["borrowed"] = line.borrowed;
  usage["borrowedFrom"] = flows(line.borrowed_from);
  usage["lent"] = line.lent;
  usage["lentTo"] = flows(line.lent_to);
  return usage;
}

void AddBorrowingNow(const TenancyConfig& config, json& queue_items) {
  std::vector<meter::UseNow> use;
  for (const auto& q : queue_items) {
    for (const auto& u : q.value("usage", json::array())) {
      use.push_back({q.value("name", ""), u.value("resource", ""), u.value("used", int64_t{0})});
    }
  }
  const auto lines = BorrowingNowByQueue(config, use);
  const BorrowingNowLine none;
  for (auto& q : queue_items) {
    if (!q.contains("usage")) continue;
    for (auto& u : q["usage"]) {
      auto it = lines.find({q.value("name", ""), u.value("resource", "")});
      u = BorrowingNowJson(it == lines.end() ? none : it->second, std::move(u));
    }
  }
}

std::vector<PoolStatus> PoolStatuses(const Ledger& ledger, const std::vector<const PoolConfig*>& declared) {
  std::map<std::string, int> nodes;
  for (const auto& [name, n] : ledger.nodes()) nodes[n.node.pool]++;
  std::vector<const Tenant*> tenants = ledger.config().tenants();
  auto allowed = [&](const std::string& pool, const std::vector<std::string>& bound) {
    std::vector<std::string> out;
    for (const Tenant* t : tenants) {
      bool by_pool = bound.empty() || std::find(bound.begin(), bound.end(), t->name) != bound.end();
      bool by_tenant = t->pools.empty() || std::find(t->pools.begin(), t->pools.end(), pool) != t->pools.end();
      if (by_pool && by_tenant) out.push_back(t->name);
    }
    return out;
  };
  std::vector<PoolStatus> out;
  std::set<std::string> seen;
  for (const PoolConfig* p : declared) {
    seen.insert(p->name);
    out.push_back({p->name, true, nodes[p->name], allowed(p->name, p->tenants)});
  }
  for (const auto& [name, count] : nodes) {
    if (seen.count(name) != 0) continue;
    out.push_back({name, false, count, allowed(name, {})});
  }
  return out;
}

}  // namespace abacus::server

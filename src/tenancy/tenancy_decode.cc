// YAML → tenancy structs, with every problem reported (see tenancy_codec.h).
#include <set>

#include "common/ids.h"
#include "tenancy/quantity_field.h"
#include "tenancy/tenancy_codec.h"

namespace abacus {
namespace {

using P = Presence;

template <typename T>
std::optional<T> Done(SpecContext& ctx, int before, T value) {
  if (ctx.errors() != before) return std::nullopt;
  return value;
}

std::optional<int64_t> Weight(MapReader& r) {
  auto q = r.Qty("weight", P::kOptional, /*positive=*/true);
  if (!q) return std::nullopt;
  return q->milli();
}

}  // namespace

std::optional<std::vector<std::string>> DecodeNameList(MapReader& r, std::string_view key) {
  auto list = r.StringList(key);
  if (!list) return std::nullopt;
  bool ok = true;
  std::set<std::string> seen;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string& n = (*list)[i];
    std::string field = r.Path(key) + "[" + std::to_string(i) + "]";
    if (!IsValidName(n)) {
      r.ctx().Error(r.LineOf(key), field, "invalid name '" + n + "'");
      ok = false;
    } else if (!seen.insert(n).second) {
      r.ctx().Error(r.LineOf(key), field, "duplicate name '" + n + "'");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return list;
}

std::optional<std::vector<Quota>> DecodeQuotas(MapReader& r, std::string_view key) {
  auto list = r.List(key);
  if (!list) return std::nullopt;
  int before = r.ctx().errors();
  std::vector<Quota> quotas;
  std::vector<size_t> positions;  // index in the list of each entry of `quotas`
  for (size_t i = 0; i < list->size(); ++i) {
    std::string path = r.Path(key) + "[" + std::to_string(i) + "]";
    MapReader e(r.ctx(), (*list)[i], path, {"resource", "nominal", "borrowingLimit", "lendingLimit"});
    if (!e.valid()) continue;
    Quota q;
    auto res = e.Parsed<QuotaResource>("resource", P::kRequired, QuotaResource::Parse);
    QuantityUnit unit = res ? QuotaUnit(*res) : QuantityUnit::kMemory;  // unknown: the loosest limit
    auto nominal = BoundedQty(e, "nominal", unit, P::kRequired);
    auto borrow = BoundedQty(e, "borrowingLimit", unit);
    auto lend = BoundedQty(e, "lendingLimit", unit);
    if (res) {
      for (size_t j = 0; j < quotas.size(); ++j) {
        if (quotas[j].resource == *res) {
          e.Error("resource", "duplicate quota for '" + res->Name() + "' (first at " + r.Path(key) +
                                  "[" + std::to_string(positions[j]) + "])");
        }
      }
      q.resource = *res;
    }
    if (nominal) q.nominal = *nominal;
    q.borrowing_limit = borrow;
    q.lending_limit = lend;
    if (nominal && lend && *lend > *nominal) {
      e.Error("lendingLimit", "lendingLimit (" + lend->ToString() + ") exceeds nominal (" +
                                  nominal->ToString() + ")");
    }
    if (res) {
      quotas.push_back(std::move(q));
      positions.push_back(i);
    }
  }
  if (r.ctx().errors() != before) return std::nullopt;
  return quotas;
}

std::optional<Tenant> DecodeTenant(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "displayName", "pools", "labels", "temporaryQuotaAutoApprove"});
  Tenant t;
  if (auto v = r.Name("name", P::kRequired)) t.name = *v;
  if (auto v = r.String("displayName")) t.display_name = *v;
  if (auto v = DecodeNameList(r, "pools")) t.pools = *v;
  if (auto v = r.StringMap("labels")) t.labels = *v;
  if (auto list = r.List("temporaryQuotaAutoApprove")) {
    for (size_t i = 0; i < list->size(); ++i) {
      std::string path = r.Path("temporaryQuotaAutoApprove") + "[" + std::to_string(i) + "]";
      MapReader e(ctx, (*list)[i], path, {"resource", "amount"});
      if (!e.valid()) continue;
      auto res = e.Parsed<QuotaResource>("resource", P::kRequired, QuotaResource::Parse);
      auto amount = BoundedQty(e, "amount", res ? QuotaUnit(*res) : QuantityUnit::kMemory, P::kRequired);
      if (!res || !amount) continue;
      for (const auto& prior : t.temporary_quota_auto_approve) {
        if (prior.resource == *res) e.Error("resource", "duplicate auto-approve limit for '" + res->Name() + "'");
      }
      t.temporary_quota_auto_approve.push_back({*res, *amount});
    }
  }
  return Done(ctx, before, std::move(t));
}

std::optional<Project> DecodeProject(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "tenant", "description", "labels"});
  Project p;
  if (auto v = r.Name("name", P::kRequired)) p.name = *v;
  if (auto v = r.Name("tenant", P::kRequired)) p.tenant = *v;
  if (auto v = r.String("description")) p.description = *v;
  if (auto v = r.StringMap("labels")) p.labels = *v;
  return Done(ctx, before, std::move(p));
}

std::optional<Cohort> DecodeCohort(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "parent", "quotas", "description"});
  Cohort c;
  if (auto v = r.Name("name", P::kRequired)) c.name = *v;
  if (auto v = r.Name("parent")) c.parent = *v;
  if (!c.name.empty() && c.parent == c.name) r.Error("parent", "a cohort cannot be its own parent");
  if (auto v = DecodeQuotas(r, "quotas")) c.quotas = *v;
  if (auto v = r.String("description")) c.description = *v;
  return Done(ctx, before, std::move(c));
}

std::optional<Queue> DecodeQueue(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "",
              {"kind", "name", "tenant", "cohort", "weight", "queueingStrategy", "quotas",
               "description", "clusters", "preferredClusters", "reclaimWithinNominal"});
  Queue q;
  if (auto v = r.Name("name", P::kRequired)) q.name = *v;
  if (auto v = r.Name("tenant", P::kRequired)) q.tenant = *v;
  if (auto v = r.Name("cohort")) q.cohort = *v;
  if (auto v = Weight(r)) q.weight_milli = *v;
  if (auto v = r.Parsed<QueueingStrategy>("queueingStrategy", P::kOptional, ParseQueueingStrategy)) {
    q.queueing_strategy = *v;
  }
  if (auto v = DecodeQuotas(r, "quotas")) q.quotas = *v;
  if (auto v = r.String("description")) q.description = *v;
  if (auto v = DecodeNameList(r, "clusters")) q.clusters = *v;
  if (auto v = DecodeNameList(r, "preferredClusters")) q.preferred_clusters = *v;
  if (auto v = r.Parsed<ReclaimWithinNominal>("reclaimWithinNominal", P::kOptional, ParseReclaimWithinNominal)) {
    q.reclaim_within_nominal = *v;
  }
  for (size_t i = 0; i < q.preferred_clusters.size() && !q.clusters.empty(); ++i) {
    if (std::find(q.clusters.begin(), q.clusters.end(), q.preferred_clusters[i]) == q.clusters.end()) {
      r.Error("preferredClusters", "preferred cluster '" + q.preferred_clusters[i] +
                                       "' is not among the queue's clusters (a queue limited to clusters can only prefer one of them)");
    }
  }
  if (q.cohort.empty() && r.valid()) {
    for (size_t i = 0; i < q.quotas.size(); ++i) {
      if (q.quotas[i].borrowing_limit) {
        ctx.Error(r.LineOf("quotas"), "quotas[" + std::to_string(i) + "].borrowingLimit",
                  "borrowingLimit needs a cohort to borrow from; set cohort or remove it");
      }
    }
  }
  return Done(ctx, before, std::move(q));
}

std::optional<PriorityClass> DecodePriorityClass(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "",
              {"kind", "name", "value", "preemptible", "canPreempt", "borrowedOnly", "maxQueueWait",
               "agingStep", "ceiling", "description"});
  PriorityClass pc;
  constexpr int64_t kMax = 1'000'000'000;
  if (auto v = r.Name("name", P::kRequired)) pc.name = *v;
  if (auto v = r.Int("value", P::kRequired, 0, kMax)) pc.value = static_cast<int32_t>(*v);
  if (auto v = r.Bool("preemptible")) pc.preemptible = *v;
  if (auto v = r.Bool("canPreempt")) pc.can_preempt = *v;
  if (auto v = r.Bool("borrowedOnly")) pc.borrowed_only = *v;
  pc.max_queue_wait = r.Dur("maxQueueWait");
  if (auto v = r.Int("agingStep", P::kOptional, 0, kMax)) pc.aging_step = static_cast<int32_t>(*v);
  if (auto v = r.Int("ceiling", P::kOptional, 0, kMax)) pc.ceiling = static_cast<int32_t>(*v);
  if (auto v = r.String("description")) pc.description = *v;
  if (pc.aging_step > 0) {
    if (!r.Has("maxQueueWait")) r.Error("agingStep", "agingStep needs maxQueueWait (how long before each step)");
    if (!r.Has("ceiling")) r.Error("agingStep", "agingStep needs ceiling (the highest priority aging may reach)");
  }
  if (pc.ceiling && r.Has("value") && *pc.ceiling < pc.value) {
    r.Error("ceiling", "ceiling (" + std::to_string(*pc.ceiling) + ") is below value (" +
                           std::to_string(pc.value) + ")");
  }
  if (pc.max_queue_wait && pc.max_queue_wait->count() == 0) r.Error("maxQueueWait", "must be positive");
  return Done(ctx, before, std::move(pc));
}

std::optional<FlavorConfig> DecodeFlavorConfig(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "weight", "description"});
  FlavorConfig f;
  if (auto v = r.Parsed<Flavor>("name", P::kRequired, Flavor::Parse)) f.flavor = *v;
  if (auto v = Weight(r)) f.weight_milli = *v;
  if (auto v = r.String("description")) f.description = *v;
  return Done(ctx, before, std::move(f));
}

std::optional<PoolConfig> DecodePoolConfig(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "cluster", "purpose", "tenants", "description"});
  PoolConfig p;
  if (auto v = r.Name("name", P::kRequired)) p.name = *v;
  if (auto v = r.Name("cluster")) p.cluster = *v;
  if (auto v = r.Parsed<PoolPurpose>("purpose", P::kOptional, ParsePoolPurpose)) p.purpose = *v;
  if (auto v = DecodeNameList(r, "tenants")) p.tenants = *v;
  if (auto v = r.String("description")) p.description = *v;
  return Done(ctx, before, std::move(p));
}

std::optional<ClusterConfig> DecodeClusterConfig(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "location", "networkDomain", "labels", "description"});
  ClusterConfig c;
  if (auto v = r.Name("name", P::kRequired)) c.name = *v;
  if (auto v = r.String("location")) c.location = *v;
  if (auto v = r.String("networkDomain")) c.network_domain = *v;
  if (auto v = r.StringMap("labels")) c.labels = *v;
  if (auto v = r.String("description")) c.description = *v;
  return Done(ctx, before, std::move(c));
}

}  // namespace abacus

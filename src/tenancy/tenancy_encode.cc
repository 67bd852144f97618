// Tenancy structs → canonical JSON (see tenancy_codec.h).
#include "common/duration_parse.h"
#include "tenancy/tenancy_codec.h"

namespace abacus {
namespace {

using Json = nlohmann::ordered_json;

void PutIf(Json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}
template <typename C>
void PutListIf(Json& j, const char* key, const C& v) {
  if (!v.empty()) j[key] = v;
}

}  // namespace

std::string MilliText(int64_t milli) { return Quantity::FromMilli(milli).ToString(); }

Json EncodeQuotas(const std::vector<Quota>& quotas) {
  Json list = Json::array();
  for (const auto& q : quotas) {
    Json e;
    e["resource"] = q.resource.Name();
    e["nominal"] = q.nominal.ToString();
    if (q.borrowing_limit) e["borrowingLimit"] = q.borrowing_limit->ToString();
    if (q.lending_limit) e["lendingLimit"] = q.lending_limit->ToString();
    list.push_back(std::move(e));
  }
  return list;
}

Json EncodeTenant(const Tenant& t) {
  Json j;
  j["kind"] = kTenantKind;
  j["name"] = t.name;
  PutIf(j, "displayName", t.display_name);
  PutListIf(j, "pools", t.pools);
  PutListIf(j, "labels", t.labels);
  for (const auto& limit : t.temporary_quota_auto_approve) {
    j["temporaryQuotaAutoApprove"].push_back({{"resource", limit.resource.Name()}, {"amount", limit.amount.ToString()}});
  }
  return j;
}

Json EncodeProject(const Project& p) {
  Json j;
  j["kind"] = kProjectKind;
  j["name"] = p.name;
  j["tenant"] = p.tenant;
  PutIf(j, "description", p.description);
  PutListIf(j, "labels", p.labels);
  return j;
}

Json EncodeCohort(const Cohort& c) {
  Json j;
  j["kind"] = kCohortKind;
  j["name"] = c.name;
  PutIf(j, "parent", c.parent);
  if (!c.quotas.empty()) j["quotas"] = EncodeQuotas(c.quotas);
  PutIf(j, "description", c.description);
  return j;
}

Json EncodeQueue(const Queue& q) {
  Json j;
  j["kind"] = kQueueKind;
  j["name"] = q.name;
  j["tenant"] = q.tenant;
  PutIf(j, "cohort", q.cohort);
  j["weight"] = MilliText(q.weight_milli);
  j["queueingStrategy"] = QueueingStrategyName(q.queueing_strategy);
  j["quotas"] = EncodeQuotas(q.quotas);
  PutIf(j, "description", q.description);
  PutListIf(j, "clusters", q.clusters);
  PutListIf(j, "preferredClusters", q.preferred_clusters);
  if (q.reclaim_within_nominal != ReclaimWithinNominal::kAny) {
    j["reclaimWithinNominal"] = ReclaimWithinNominalName(q.reclaim_within_nominal);
  }
  return j;
}

Json EncodePriorityClass(const PriorityClass& pc) {
  Json j;
  j["kind"] = kPriorityClassKind;
  j["name"] = pc.name;
  j["value"] = pc.value;
  j["preemptible"] = pc.preemptible;
  j["canPreempt"] = pc.can_preempt;
  j["borrowedOnly"] = pc.borrowed_only;
  if (pc.max_queue_wait) j["maxQueueWait"] = FormatDurationSpec(*pc.max_queue_wait);
  if (pc.aging_step != 0) j["agingStep"] = pc.aging_step;
  if (pc.ceiling) j["ceiling"] = *pc.ceiling;
  PutIf(j, "description", pc.description);
  return j;
}

Json EncodeFlavorConfig(const FlavorConfig& f) {
  Json j;
  j["kind"] = kFlavorKind;
  j["name"] = f.flavor.name();
  j["weight"] = MilliText(f.weight_milli);
  PutIf(j, "description", f.description);
  return j;
}

Json EncodePoolConfig(const PoolConfig& p) {
  Json j;
  j["kind"] = kPoolKind;
  j["name"] = p.name;
  j["cluster"] = p.cluster;
  j["purpose"] = PoolPurposeName(p.purpose);
  PutListIf(j, "tenants", p.tenants);
  PutIf(j, "description", p.description);
  return j;
}

Json EncodeClusterConfig(const ClusterConfig& c) {
  Json j;
  j["kind"] = kClusterKind;
  j["name"] = c.name;
  PutIf(j, "location", c.location);
  PutIf(j, "networkDomain", c.network_domain);
  PutListIf(j, "labels", c.labels);
  PutIf(j, "description", c.description);
  return j;
}

}  // namespace abacus

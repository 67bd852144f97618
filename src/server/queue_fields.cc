#include "server/queue_fields.h"

#include <cstdio>

namespace abacus::server {
namespace {

std::string Show(const std::optional<Quantity>& q) { return q ? q->ToString() : "unset"; }

std::string Weight(int64_t milli) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(milli) / 1000.0);
  return buf;
}

}  // namespace

std::vector<std::string> ChangedPlatformQueueFields(const Queue* before, const Queue& after) {
  std::vector<std::string> out;
  const std::string old_cohort = before != nullptr ? before->cohort : "";
  if (old_cohort != after.cohort) {
    out.push_back("cohort (" + (old_cohort.empty() ? std::string("none") : old_cohort) + " → " +
                  (after.cohort.empty() ? std::string("none") : after.cohort) + ")");
  }
  const int64_t old_weight = before != nullptr ? before->weight_milli : Queue().weight_milli;
  if (old_weight != after.weight_milli) {
    out.push_back("weight (" + Weight(old_weight) + " → " + Weight(after.weight_milli) + ")");
  }
  for (const Quota& q : after.quotas) {
    const std::string name = "quotas[" + q.resource.Name() + "]";
    const Quota* was = before != nullptr ? before->FindQuota(q.resource) : nullptr;
    if (was == nullptr) {
      out.push_back(name + ".nominal (none → " + q.nominal.ToString() + ")");
      if (q.borrowing_limit) out.push_back(name + ".borrowingLimit (unset → " + Show(q.borrowing_limit) + ")");
      if (q.lending_limit) out.push_back(name + ".lendingLimit (unset → " + Show(q.lending_limit) + ")");
      continue;
    }
    if (was->nominal != q.nominal) {
      out.push_back(name + ".nominal (" + was->nominal.ToString() + " → " + q.nominal.ToString() + ")");
    }
    if (was->borrowing_limit != q.borrowing_limit) {
      out.push_back(name + ".borrowingLimit (" + Show(was->borrowing_limit) + " → " + Show(q.borrowing_limit) + ")");
    }
    if (was->lending_limit != q.lending_limit) {
      out.push_back(name + ".lendingLimit (" + Show(was->lending_limit) + " → " + Show(q.lending_limit) + ")");
    }
  }
  if (before != nullptr) {
    for (const Quota& q : before->quotas) {
      if (after.FindQuota(q.resource) == nullptr) out.push_back("quotas[" + q.resource.Name() + "] (removed)");
    }
  }
  return out;
}

}  // namespace abacus::server

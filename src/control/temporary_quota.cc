#include "control/experiment.h"

namespace abacus::control {

using nlohmann::json;

namespace {

json QuotaDetails(const TemporaryQuota& tq) {
  return {{"resource", tq.resource.Name()},
          {"amount", tq.amount.ToString()},
          {"expiresSeconds", std::chrono::duration_cast<std::chrono::seconds>(tq.expires).count()}};
}

void Approve(const WorkloadView& w, const TemporaryQuota& tq, const std::string& by, QuotaGrantState& q, Time now,
             Decisions& out) {
  q.status = QuotaGrantStatus::kApproved;
  q.decided_by = by;
  q.decided_at = now;
  std::optional<Time> until;
  if (IsSet(w.admitted_at)) until = w.admitted_at + tq.expires;
  q.expires_at = until.value_or(Time{});
  out.push_back(GrantQuota{tq.resource, tq.amount, until});
  json details = QuotaDetails(tq);
  details["by"] = by;
  if (until) details["until"] = FormatTime(*until);
  out.push_back(MakeEvent("TemporaryQuotaApproved",
                          tq.amount.ToString() + " " + tq.resource.Name() + " approved by " + by, details));
}

}  // namespace

bool StepTemporaryQuota(const WorkloadView& w, const Signals& sig, QuotaGrantState& q, Time now, Decisions& out) {
  const ExperimentSpec& spec = *w.spec->experiment();
  if (!spec.temporary_quota) return false;
  const TemporaryQuota& tq = *spec.temporary_quota;
  switch (q.status) {
    case QuotaGrantStatus::kNone: {
      q.requested_at = now;
      if (sig.quota_auto_approve && tq.amount <= *sig.quota_auto_approve) {
        Approve(w, tq, "auto", q, now, out);
        return false;
      }
      q.status = QuotaGrantStatus::kPending;
      json details = QuotaDetails(tq);
      if (sig.quota_auto_approve) details["autoApproveLimit"] = sig.quota_auto_approve->ToString();
      out.push_back(MakeEvent("TemporaryQuotaRequested",
                              tq.amount.ToString() + " " + tq.resource.Name() +
                                  " requested; above the tenant's auto-approve limit, waits for a tenant admin",
                              details, "ApprovalRequired"));
      return false;
    }
    case QuotaGrantStatus::kPending:
      if (!sig.quota_decision) return false;
      if (sig.quota_decision->approved) {
        Approve(w, tq, sig.quota_decision->by, q, now, out);
      } else {
        q.status = QuotaGrantStatus::kRejected;
        q.decided_by = sig.quota_decision->by;
        q.decided_at = now;
        json details = QuotaDetails(tq);
        details["by"] = q.decided_by;
        out.push_back(MakeEvent("TemporaryQuotaRejected",
                                "temporary quota rejected by " + q.decided_by + "; the experiment waits on its queue's quota",
                                details));
      }
      return false;
    case QuotaGrantStatus::kApproved:
      if (!IsSet(q.expires_at)) {
        if (!IsSet(w.admitted_at)) return false;
        q.expires_at = w.admitted_at + tq.expires;
        out.push_back(GrantQuota{tq.resource, tq.amount, q.expires_at});
      }
      if (now < q.expires_at) return false;
      q.status = QuotaGrantStatus::kExpired;
      out.push_back(RevokeQuota{tq.resource, tq.amount, "TemporaryQuotaExpired"});
      out.push_back(MakeEvent("TemporaryQuotaExpired",
                              "temporary quota of " + tq.amount.ToString() + " " + tq.resource.Name() + " expired",
                              QuotaDetails(tq), "TemporaryQuotaExpired"));
      return true;
    case QuotaGrantStatus::kRejected:
    case QuotaGrantStatus::kExpired:
    case QuotaGrantStatus::kReleased:
      return false;
  }
  return false;
}

}  // namespace abacus::control

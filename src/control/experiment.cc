#include "control/experiment.h"

#include <array>

#include "control/completion.h"
#include "control/names.h"

namespace abacus::control {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 6> kGrantNames = {"", "Pending", "Approved", "Rejected", "Expired", "Released"};
// Grace for an experiment's tasks when it is reclaimed.
constexpr int32_t kReclaimGraceSeconds = 30;

std::string EndingMessage(const std::string& reason, const ExperimentSpec& spec) {
  if (reason == "TTLExpired") return "ttl of " + FormatDuration(spec.ttl.value_or(Duration{})) + " expired";
  if (reason == "IdleReclaimed") return "idle after notice: devices reclaimed";
  return "temporary quota expired: its extra work is reclaimed";
}

bool Terminal(const Decisions& ds) {
  for (const SetState& s : FindAll<SetState>(ds)) {
    if (IsTerminal(s.to)) return true;
  }
  return false;
}

}  // namespace

std::string_view QuotaGrantStatusName(QuotaGrantStatus s) { return kGrantNames[static_cast<size_t>(s)]; }

Result<QuotaGrantStatus> ParseQuotaGrantStatus(std::string_view text) {
  return ParseName<QuotaGrantStatus>(kGrantNames, text, "temporary quota status");
}

ExperimentOutcome ReconcileExperiment(const WorkloadView& w, ExperimentState s, const Signals& sig, Time now) {
  ExperimentOutcome out;
  Decisions& ds = out.decisions;
  const ExperimentSpec& spec = *w.spec->experiment();
  // 1) Temporary quota, whatever the state; 2) preemption; 3) start.
  bool quota_expired = StepTemporaryQuota(w, sig, s.quota, now, ds);
  bool ttl_over = spec.ttl && IsSet(w.started_at) && now >= w.started_at + *spec.ttl;
  if (!DecidePreempted(w, kReclaimGraceSeconds, now, ds)) {
    WorkloadState state = DecideStarted(w, ds);
    if ((state == WorkloadState::kPending || state == WorkloadState::kRequeued) && ttl_over) {
      // Waiting again after its TTL ran out: nothing left to run.
      std::string message = EndingMessage("TTLExpired", spec);
      ds.push_back(SetState{WorkloadState::kCancelled, "TTLExpired", message});
      ds.push_back(MakeEvent("Cancelled", message, json::object(), "TTLExpired"));
    } else if (state == WorkloadState::kAdmitted || state == WorkloadState::kRunning) {
      // 4) The first reclaim rule that fires sticks: TTL, quota expiry, idle.
      if (s.ending.empty()) {
        if (ttl_over) {
          s.ending = "TTLExpired";
          s.ending_since = w.started_at + *spec.ttl;
        } else if (quota_expired) {
          s.ending = "TemporaryQuotaExpired";
          s.ending_since = s.quota.expires_at;
        } else if (spec.idle && StepIdle(*spec.idle, sig.utilization, FirstStart(w.tasks), s.idle, now, ds)) {
          s.ending = "IdleReclaimed";
          s.ending_since = s.idle.notice_at + std::chrono::seconds(spec.idle->notice_seconds);
        }
      }
      if (!s.ending.empty()) {
        StopPlan plan;
        plan.since = s.ending_since;
        plan.grace_seconds = kReclaimGraceSeconds;
        plan.to = WorkloadState::kCancelled;
        plan.reason = s.ending;
        plan.message = EndingMessage(s.ending, spec);
        StopThenFinish(w, plan, s.ending, now, ds);
      } else {
        // 5) The experiment's own end: exit 0 Succeeded, else Failed (no retries).
        DecideCompletion(w, state, CompletionPolicy{}, now, ds);
      }
    }
  }
  // 6) An ended experiment gives its temporary quota back.
  if (Terminal(ds) && s.quota.status == QuotaGrantStatus::kApproved) {
    const TemporaryQuota& tq = *spec.temporary_quota;
    s.quota.status = QuotaGrantStatus::kReleased;
    ds.push_back(RevokeQuota{tq.resource, tq.amount, "WorkloadEnded"});
  }
  out.state = std::move(s);
  return out;
}

json ToJson(const ExperimentState& s) {
  return {{"idle",
           {{"lastActive", ToMicros(s.idle.last_active)},
            {"lastSample", ToMicros(s.idle.last_sample)},
            {"noticeAt", ToMicros(s.idle.notice_at)}}},
          {"quota",
           {{"status", QuotaGrantStatusName(s.quota.status)},
            {"requestedAt", ToMicros(s.quota.requested_at)},
            {"decidedBy", s.quota.decided_by},
            {"decidedAt", ToMicros(s.quota.decided_at)},
            {"expiresAt", ToMicros(s.quota.expires_at)}}},
          {"ending", s.ending},
          {"endingSince", ToMicros(s.ending_since)}};
}

Result<ExperimentState> ExperimentStateFromJson(const json& j) {
  ExperimentState s;
  if (j.is_null()) return s;
  if (!j.is_object()) return InvalidArgument("experiment state must be an object");
  auto time = [](const json& o, const char* k) { return FromMicros(o.value(k, int64_t{0})); };
  try {
    json idle = j.value("idle", json::object());
    s.idle = {time(idle, "lastActive"), time(idle, "lastSample"), time(idle, "noticeAt")};
    json q = j.value("quota", json::object());
    auto status = ParseQuotaGrantStatus(q.value("status", ""));
    if (!status.ok()) return status.status().WithContext("experiment state");
    s.quota = {*status, time(q, "requestedAt"), q.value("decidedBy", ""), time(q, "decidedAt"), time(q, "expiresAt")};
    s.ending = j.value("ending", "");
    s.ending_since = time(j, "endingSince");
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("experiment state: ") + e.what());
  }
  return s;
}

}  // namespace abacus::control

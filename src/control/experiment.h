// Experiment controller (notebooks, debugging): TTL, idle reclaim with notice, and temporary
// quota with approval and expiry. Its memory is ExperimentState, which the server stores with
// the workload and passes back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "control/decision.h"
#include "control/view.h"

namespace abacus::control {

// Idle detection: the last sample at or above the threshold, the last sample at all, and the
// notice given.
struct IdleState {
  Time last_active{};
  Time last_sample{};
  Time notice_at{};  // epoch: no notice pending
  bool operator==(const IdleState&) const = default;
};

enum class QuotaGrantStatus : uint8_t { kNone, kPending, kApproved, kRejected, kExpired, kReleased };
// Returns "", "Pending", "Approved", "Rejected", "Expired" or "Released".
std::string_view QuotaGrantStatusName(QuotaGrantStatus s);
Result<QuotaGrantStatus> ParseQuotaGrantStatus(std::string_view text);

// The temporary quota request of spec.temporaryQuota.
struct QuotaGrantState {
  QuotaGrantStatus status = QuotaGrantStatus::kNone;
  Time requested_at{};
  std::string decided_by;  // "auto" or the admin
  Time decided_at{};
  Time expires_at{};       // admitted_at + expires, once admitted
  bool operator==(const QuotaGrantState&) const = default;
};

struct ExperimentState {
  IdleState idle;
  QuotaGrantState quota;
  std::string ending;  // the reclaim under way: TTLExpired, IdleReclaimed, TemporaryQuotaExpired
  Time ending_since{};
  bool operator==(const ExperimentState&) const = default;
};

struct ExperimentOutcome {
  Decisions decisions;
  ExperimentState state;  // store it; pass it back next time
};

// Returns the decisions for Experiment `w` at `now` from its stored `state`, the device
// utilization of its tasks and the quota signals. Reclaims (TTL, idle, quota expiry) stop the
// tasks (SIGTERM, default grace) and end Cancelled with the reason. Call after every task or
// utilization report, a quota decision, and on every loop tick while it is not terminal.
ExperimentOutcome ReconcileExperiment(const WorkloadView& w, ExperimentState state, const Signals& signals, Time now);

// Idle detection for a run that began at `run_start`: notes activity from `samples`, gives
// notice (event IdleNotice) after window_seconds below the threshold, cancels it on activity
// (IdleNoticeCancelled); returns true once notice_seconds passed with no activity.
bool StepIdle(const IdlePolicy& p, const std::vector<UtilizationSample>& samples, Time run_start, IdleState& s,
              Time now, Decisions& out);

// Temporary quota: requests it (auto-approved up to the tenant's limit, else pending a tenant
// admin), grants it until admitted_at + expires, revokes it on expiry. Returns true when it
// expired in this call.
bool StepTemporaryQuota(const WorkloadView& w, const Signals& signals, QuotaGrantState& q, Time now, Decisions& out);

// The stored form of ExperimentState, and back (InvalidArgument naming the problem).
nlohmann::json ToJson(const ExperimentState& s);
Result<ExperimentState> ExperimentStateFromJson(const nlohmann::json& j);

}  // namespace abacus::control

// ControlPlane: a tenant admin's answer to an Experiment's temporary quota request. The answer
// is stored on the record (quotaDecision); the experiment's controller turns it into a grant or
// a rejection (control/temporary_quota.cc) in the same loop turn.
#include "common/mutex.h"
#include "control/experiment.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"

namespace abacus::server {

using nlohmann::json;

Result<WorkloadView> ControlPlane::DecideTemporaryQuota(const std::string& id_or_name, bool approve,
                                                       const std::string& by, RequestContext* context) {
  return RunOnLoop(context, [this, id_or_name, approve,
                             by](PendingRequestAudit* audit) -> Result<WorkloadView> {
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return NotFound("workload '" + id_or_name + "' not found");
    const ExperimentSpec* e = found->spec.experiment();
    if (e == nullptr || !e->temporary_quota) {
      return FailedPrecondition("workload " + found->id + " asks no temporary quota (an Experiment's spec.temporaryQuota)");
    }
    if (found->quota_decision) {
      return FailedPrecondition("the temporary quota of " + found->id + " was already " +
                                (found->quota_decision->approved ? "approved" : "rejected") + " by " +
                                found->quota_decision->by);
    }
    auto state = control::ExperimentStateFromJson(found->controller_state);
    control::QuotaGrantStatus status = state.ok() ? state->quota.status : control::QuotaGrantStatus::kNone;
    if (status != control::QuotaGrantStatus::kPending) {
      std::string name(control::QuotaGrantStatusName(status));
      return FailedPrecondition("the temporary quota of " + found->id + " is " + (name.empty() ? "not requested yet" : name) +
                                "; only a pending request waits for an admin");
    }
    Time now = clock_.Now();
    WorkloadRecord next = *found;
    next.quota_decision = QuotaDecisionRecord{approve, by, now};
    WriteBatch batch;
    const OpRef put = batch.Put(kWorkloadKind, next.id, ToJson(next).dump(), next.version).LastOp();
    CommitResult result;
    ABACUS_RETURN_IF_ERROR(CommitForRequest(audit, batch, &result));
    next.version = result.AssignedTo(put);
    {
      WriterLock lock(state_mu_);
      *ledger_.FindWorkload(next.id) = next;
      pacer_.Changed();
    }
    // The controller decides now: TemporaryQuotaApproved (a grant) or TemporaryQuotaRejected.
    std::vector<std::string> ids = {next.id};
    ProcessTaskReports({}, &ids, LoopWrite::kSettled);
    ReaderLock lock(state_mu_);
    return View(*ledger_.FindWorkload(next.id));
  });
}

}  // namespace abacus::server

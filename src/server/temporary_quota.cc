// ControlPlane: a tenant admin's answer to an Experiment's temporary quota request. The answer
// is stored on the record (quotaDecision); the experiment's controller turns it into a grant or
// a rejection (control/temporary_quota.cc) in the same commit.
#include <map>
#include <string>

#include "control/experiment.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"

namespace abacus::server {

using nlohmann::json;

Result<WorkloadView> ControlPlane::DecideTemporaryQuota(const std::string& id_or_name, bool approve,
                                                       const std::string& by, RequestContext* context) {
  using Answer = Result<WorkloadView>;
  return AnswerOnLoop<Answer>(context, [this, id_or_name, approve, by](const LoopReply<Answer>& reply) {
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return reply(NotFound("workload '" + id_or_name + "' not found"));
    const std::string id = found->id;
    SettleRecord(kWorkloadKind, id);  // its working copy is of the record as committed
    found = ledger_.FindWorkload(id);
    if (found == nullptr) return reply(NotFound("workload '" + id_or_name + "' not found"));
    const ExperimentSpec* e = found->spec.experiment();
    if (e == nullptr || !e->temporary_quota) {
      return reply(FailedPrecondition("workload " + id +
                                      " asks no temporary quota (an Experiment's spec.temporaryQuota)"));
    }
    if (IsTerminal(found->state)) {
      // Nothing waits for the grant any more (an ended experiment gave back what it held).
      return reply(FailedPrecondition("workload " + found->spec.name + " (" + id + ") is " + std::string(WorkloadStateName(found->state)) +
                                      ": its temporary quota request ended with it"));
    }
    if (found->quota_decision) {
      return reply(FailedPrecondition("the temporary quota of " + id + " was already " +
                                      (found->quota_decision->approved ? "approved" : "rejected") + " by " +
                                      found->quota_decision->by));
    }
    auto state = control::ExperimentStateFromJson(found->controller_state);
    control::QuotaGrantStatus status = state.ok() ? state->quota.status : control::QuotaGrantStatus::kNone;
    if (status != control::QuotaGrantStatus::kPending) {
      std::string name(control::QuotaGrantStatusName(status));
      return reply(FailedPrecondition("the temporary quota of " + id + " is " +
                                      (name.empty() ? "not requested yet" : name) +
                                      "; only a pending request waits for an admin"));
    }
    const Time now = clock_.Now();
    WorkloadRecord next = *found;
    next.quota_decision = QuotaDecisionRecord{approve, by, now};
    // The answer and what the controller makes of it (TemporaryQuotaApproved, a grant, or
    // TemporaryQuotaRejected) commit together, with the request's entry; the loop goes on
    // meanwhile and the caller is answered once it is durable.
    std::map<std::string, WorkloadRecord> copies;
    copies.emplace(id, std::move(next));
    CommitReconciledOnLoop(std::move(copies), {id}, {}, now, reply.audit(), AnswerWithView(*this, id, reply));
  });
}

}  // namespace abacus::server

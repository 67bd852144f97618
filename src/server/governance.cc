// Governance: opening (users, tokens, policies, the audit chain, the committer) and shutdown.
// The rooms: governance_identity.cc, governance_rate_limit.cc, governance_admission.cc,
// governance_audit.cc.
#include "server/governance.h"

#include "common/log.h"
#include "govern/crypto.h"

namespace abacus::server {

using nlohmann::json;
using govern::Action;
using govern::Resource;

// ---------------------------------------------------------------- Governance

Governance::Governance(Store& store, const Clock& clock, TokenAuthorizer& bootstrap, Options options)
    : store_(store), clock_(clock), bootstrap_(bootstrap), options_(options), registry_(clock) {}

Result<std::unique_ptr<Governance>> Governance::Open(Store& store, const Clock& clock, TokenAuthorizer& bootstrap,
                                                     Options options) {
  std::unique_ptr<Governance> g(new Governance(store, clock, bootstrap, options));
  ABACUS_RETURN_IF_ERROR(g->registry_.LoadFrom(store));
  ABACUS_RETURN_IF_ERROR(g->LoadPolicies());
  ABACUS_ASSIGN_OR_RETURN(g->audit_, govern::AuditLog::Open(store, clock));
  if (!options.audit_anchor_file.empty()) {
    bool new_history = false;
    ABACUS_RETURN_IF_ERROR(govern::CheckAnchorFilesAtStart(options.audit_key_file, options.audit_anchor_file,
                                                           g->audit_->head().seq, &new_history));
    if (new_history) {
      ABACUS_LOG_WARN("audit: no {} and no {}: a new anchor history starts at seq {} (abacus audit --verify checks "
                      "the chain against anchors from here on)",
                      options.audit_key_file, options.audit_anchor_file, g->audit_->head().seq);
    }
    ABACUS_ASSIGN_OR_RETURN(g->audit_key_, govern::LoadOrCreateAuditKey(options.audit_key_file));
    ABACUS_ASSIGN_OR_RETURN(g->anchors_, govern::AuditAnchorWriter::Open(options.audit_anchor_file, g->audit_key_));
    g->MaybeAnchor(true);  // the head as this server found it
  }
  CommitterOptions co;
  co.max_group = options.audit_group;
  co.housekeeping_every = std::chrono::duration_cast<std::chrono::milliseconds>(options.last_used_flush);
  co.after_group = [p = g.get()] { p->MaybeAnchor(false); };
  co.housekeeping = [p = g.get()](bool final) {
    p->FlushLastUsed();
    p->MaybeAnchor(final);  // at shutdown, the final head
  };
  g->committer_ = std::make_unique<Committer>(*g->audit_, std::move(co));
  return g;
}

Governance::~Governance() { Shutdown(); }

void Governance::Shutdown() {
  if (committer_) committer_->Shutdown();
}

}  // namespace abacus::server

// Governance, admission: the admission policies, and the ControlPlane's hooks (CheckSubmit on
// submit, PlanApply on apply).
#include "server/governance.h"

#include <algorithm>
#include <set>
#include <variant>

#include "common/ascii.h"
#include "common/duration_parse.h"
#include "common/log.h"
#include "common/mutex.h"
#include "govern/admission.h"
#include "server/queue_fields.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/secret_doc.h"
#include "workload/utf8.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;
using govern::Resource;

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// Tells `context` (the request served; null: none) its object: the names, and the tenant when
// they share one.
void NoteObjects(RequestContext* context, const std::string& kind, const std::vector<std::string>& names,
                 const std::vector<std::string>& tenants) {
  std::set<std::string> distinct(tenants.begin(), tenants.end());
  std::string joined = Join(names, ",");
  if (joined.size() > 512) joined = joined.substr(0, 509) + "...";
  NoteRequestObject(context, kind, joined, distinct.size() == 1 ? *distinct.begin() : "");
}

// What a quota-change decision records of a queue: {"cohort", "weight", "quotas"}.
std::string QuotaSummary(const Queue& q) {
  json j = ToPlainJson(EncodeQueue(q));
  json out = json::object();
  for (const char* k : {"cohort", "weight", "quotas"}) {
    if (j.contains(k)) out[k] = j[k];
  }
  return out.dump();
}
// The stored record of a policy: its document fields.
json PolicyRecord(const AdmissionPolicy& p) { return ToPlainJson(EncodeAdmissionPolicy(p)); }

}  // namespace

// ---------------------------------------------------------------- GovernanceApply

void GovernanceApply::Stage(WriteBatch& batch, std::vector<AppliedView>& out) const {
  for (const auto& u : users_) govern::StagePutUser(batch, u);
  for (const auto& p : policies_) batch.Put(std::string(kPolicyStoreKind), p.name, PolicyRecord(p).dump());
  for (const auto& item : items_) out.push_back(item);
}

void GovernanceApply::Committed() const {
  for (const auto& u : users_) {
    if (Status st = gov_->registry_.PutUser(u); !st.ok()) ABACUS_LOG_ERROR("user {}: {}", u.name, st.message());
  }
  if (!users_.empty()) gov_->CredentialsChanged();  // roles or state may have changed
  {
    MutexLock lock(gov_->policies_mu_);
    for (const auto& p : policies_) gov_->policies_[p.name] = p;
  }
  for (const auto& q : quota_changes_) {
    govern::AuditRecord r;
    r.actor = actor_;
    r.action = "quota-change";
    r.object_kind = "queue";
    r.object_name = q.queue;
    r.tenant = q.tenant;
    r.before = q.before;
    r.after = q.after;
    r.result = "ok";
    r.request_id = request_id_;  // the apply that made it
    gov_->EnqueueAudit(std::move(r));
  }
}

Status Governance::LoadPolicies() {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kPolicyStoreKind));
  std::map<std::string, AdmissionPolicy> loaded;
  for (const auto& r : records) {
    json j = json::parse(r.json, nullptr, false);
    if (j.is_discarded()) return Internal("stored admission policy " + r.key + " is not JSON");
    auto o = GovernanceObjectFromJson(j);
    if (!o.ok()) return Internal("stored admission policy " + r.key + ": " + o.status().message());
    auto* p = std::get_if<AdmissionPolicy>(&*o);
    if (p == nullptr) return Internal("stored admission policy " + r.key + " is not an AdmissionPolicy");
    loaded[p->name] = *p;
  }
  MutexLock lock(policies_mu_);
  policies_ = std::move(loaded);
  return Status::OK();
}

// ---- policies

std::vector<AdmissionPolicy> Governance::Policies() const {
  MutexLock lock(policies_mu_);
  std::vector<AdmissionPolicy> out;
  out.reserve(policies_.size());
  for (const auto& [name, p] : policies_) out.push_back(p);
  return out;
}

std::vector<Resource> Governance::PolicyResources(const AdmissionPolicy& p) {
  std::vector<Resource> out;
  if (p.tenants.empty()) {
    out.push_back(Resource::ForCluster("policy", p.name));
  } else {
    for (const auto& t : p.tenants) out.push_back(Resource::ForTenantObject("policy", p.name, t));
  }
  return out;
}

namespace {
// Whether `who` (null: the server) sees policy `p`: through any tenant it covers (govern::Sees).
bool SeesPolicy(const govern::Principal* who, const AdmissionPolicy& p) {
  for (const auto& r : Governance::PolicyResources(p)) {
    if (govern::Sees(who, r)) return true;
  }
  return false;
}
bool MaySeePolicy(const govern::Principal& who, const AdmissionPolicy& p) { return SeesPolicy(&who, p); }

// The answer to a create of a cluster-wide name (a queue's, a policy's) that an object the caller
// may not see holds: the name is taken, and nothing else — not the owner, not a field — is told;
// the same answer whoever holds it (docs/governance.md "Objects named in requests").
Status NameTaken(std::string_view kind, const std::string& name, const SourceLocation& src) {
  Status taken = AlreadyExists(std::string(kind) + " name '" + name + "' is taken: " + std::string(kind) +
                               " names are cluster-wide; choose another name");
  std::string where = src.ToString();
  return where.empty() ? taken : taken.WithContext(where);
}
}  // namespace

std::vector<AdmissionPolicy> Governance::ListPolicies(const govern::Principal& who) const {
  std::vector<AdmissionPolicy> out;
  for (auto& p : Policies()) {
    if (MaySeePolicy(who, p)) out.push_back(std::move(p));
  }
  return out;
}

Result<AdmissionPolicy> Governance::GetPolicy(const govern::Principal& who, const std::string& name) const {
  MutexLock lock(policies_mu_);
  auto it = policies_.find(name);
  if (it == policies_.end() || !MaySeePolicy(who, it->second)) return NotFound("policy " + name + " not found");
  return it->second;
}

Result<DeletedView> Governance::DeletePolicy(const govern::Principal& who, const std::string& name,
                                      RequestContext* context) {
  std::optional<AdmissionPolicy> p;
  {
    MutexLock lock(policies_mu_);
    if (auto it = policies_.find(name); it != policies_.end()) p = it->second;
  }
  const std::string missing = "policy " + name + " not found";
  if (!p || !MaySeePolicy(who, *p)) return NotFound(missing);
  NoteRequestObject(context, "policy", name, p->tenants.size() == 1 ? p->tenants[0] : "");
  for (const auto& r : PolicyResources(*p)) ABACUS_RETURN_IF_ERROR(govern::Authorize(who, Action::kPolicyChange, r));
  ABACUS_RETURN_IF_ERROR(CommitRequestChange(WriteBatch().Delete(std::string(kPolicyStoreKind), name), context));
  MutexLock lock(policies_mu_);
  policies_.erase(name);
  return DeletedView{name};
}

// ---- hooks

Status Governance::AuthorizeSubmit(const govern::Principal* who, const std::vector<Document>& docs,
                                   RequestContext* context) const {
  std::vector<std::string> names, tenants;
  for (const Document& d : docs) {
    if (const Workload* w = d.workload()) {
      names.push_back(w->project + "/" + w->name);
      tenants.push_back(w->tenant());
    }
  }
  NoteObjects(context, "workload", names, tenants);
  if (who == nullptr) return Status::OK();
  for (const Document& d : docs) {
    const Workload* w = d.workload();
    if (w == nullptr) continue;
    if (Status st = govern::Authorize(*who, Action::kCreate, Resource::ForWorkload(*w)); !st.ok()) {
      std::string where = d.source.ToString();
      return st.WithContext(where.empty() ? w->name : where);
    }
  }
  return Status::OK();
}

Status Governance::CheckSubmit(const govern::Principal* who, std::vector<Document>& docs,
                               RequestContext* context) const {
  ABACUS_RETURN_IF_ERROR(AuthorizeSubmit(who, docs, context));
  std::vector<AdmissionPolicy> policies = Policies();
  for (Document& d : docs) {
    Workload* w = std::get_if<Workload>(&d.object);
    if (w == nullptr) continue;
    std::string where = d.source.ToString();
    if (where.empty()) where = w->name;
    // What admission decides is never the submitter's to set: the outcome (and the labels that
    // show it) are the policies' alone.
    w->admission = {};
    WriteAdmissionLabels(w->admission, w->labels);
    auto admission = govern::EvaluateAdmission(*w, w->tenant(), policies);
    if (!admission.ok()) return admission.status().WithContext(where);
    w->admission = AdmissionOutcome{admission->network, admission->pools};
    WriteAdmissionLabels(w->admission, w->labels);
  }
  return Status::OK();
}

Result<std::shared_ptr<const GovernanceApply>> Governance::PlanApply(const govern::Principal* who,
                                                                     const std::vector<Document>& docs,
                                                                     const std::vector<ExtensionDocument>& extensions,
                                                                     const std::vector<GovernanceDocument>& governance,
                                                                     const TenancyConfig& config,
                                                                     RequestContext* context) {
  auto plan = std::make_shared<GovernanceApply>();
  plan->gov_ = this;
  plan->request_id_ = RequestIdOf(context);
  plan->actor_ = who == nullptr ? "server" : who->kind == govern::Principal::Kind::kUser ? "user " + who->name : who->ToString();
  std::vector<std::string> names, tenants;
  auto note = [&](std::string_view kind, const std::string& name, const std::string& tenant) {
    names.push_back(std::string(kind) + "/" + name);
    tenants.push_back(tenant);
  };
  for (const Document& d : docs) {
    std::visit(Overloaded{[&](const Tenant& t) { note(d.kind(), t.name, t.name); },
                          [&](const Project& p) { note(d.kind(), p.FullName(), p.tenant); },
                          [&](const Queue& q) { note(d.kind(), q.name, q.tenant); },
                          [&](const auto&) { note(d.kind(), d.name(), ""); }},
               d.object);
  }
  for (const auto& e : extensions) note(e.kind, e.name, e.object.value("tenant", ""));  // a Secret's tenant
  for (const auto& g : governance) {
    const auto* p = std::get_if<AdmissionPolicy>(&g.object);
    note(g.kind(), g.name(), p != nullptr && p->tenants.size() == 1 ? p->tenants[0] : "");
  }
  NoteObjects(context, "config", names, tenants);

  auto check = [&](const SourceLocation& src, Action action, const Resource& what) -> Status {
    if (who == nullptr) return Status::OK();
    Status st = govern::Authorize(*who, action, what);
    std::string where = src.ToString();
    return st.ok() || where.empty() ? st : st.WithContext(where);
  };
  for (const Document& d : docs) {
    Status st = std::visit(
        Overloaded{
            [&](const Tenant& t) { return check(d.source, Action::kApplyConfig, Resource::ForTenantObject("tenant", t.name, t.name)); },
            [&](const Project& p) {
              return check(d.source, Action::kApplyConfig, Resource::ForTenantObject("project", p.FullName(), p.tenant));
            },
            [&](const Queue& q) -> Status {
              Resource r = Resource::ForTenantObject("queue", q.name, q.tenant);
              ABACUS_RETURN_IF_ERROR(check(d.source, Action::kApplyConfig, r));
              const Queue* old = config.FindQueue(q.name);
              // Another tenant's queue the caller may not see is a missing one: every check below
              // answers as for a new queue, and only a create that passes them all learns that
              // the name is taken.
              const bool hidden =
                  old != nullptr && !govern::Sees(who, Resource::ForTenantObject("queue", old->name, old->tenant));
              if (hidden) old = nullptr;
              // Field by field: what the queue may take from the cluster is the platform's.
              if (who != nullptr && !who->HasRole(Role::kAdmin)) {
                if (auto fields = ChangedPlatformQueueFields(old, q); !fields.empty()) {
                  Status denied = PermissionDenied(
                      who->ToString() + " may not change " + Join(fields, ", ") + " of queue " + q.name +
                      ": quotas, borrowing and lending limits, weight and cohort are the platform's (admins only); a "
                      "tenant-admin changes description, queueingStrategy, clusters and preferredClusters");
                  std::string where = d.source.ToString();
                  return where.empty() ? denied : denied.WithContext(where);
                }
              }
              bool quota_changed = old == nullptr ? !q.quotas.empty()
                                                  : old->quotas != q.quotas || old->cohort != q.cohort ||
                                                        old->weight_milli != q.weight_milli;
              if (quota_changed) {
                ABACUS_RETURN_IF_ERROR(check(d.source, Action::kQuotaChange, r));
                plan->quota_changes_.push_back(
                    {q.name, q.tenant, old == nullptr ? "" : QuotaSummary(*old), QuotaSummary(q)});
              }
              if (old != nullptr && old->tenant != q.tenant) {
                Resource was = Resource::ForTenantObject("queue", q.name, old->tenant);
                ABACUS_RETURN_IF_ERROR(check(d.source, Action::kApplyConfig, was));
                ABACUS_RETURN_IF_ERROR(check(d.source, Action::kQuotaChange, was));
              }
              if (hidden) return NameTaken("queue", q.name, d.source);
              return Status::OK();
            },
            [&](const Workload&) { return Status::OK(); },  // Apply refuses workloads itself
            [&](const auto&) {
              return check(d.source, Action::kApplyConfig, Resource::ForCluster(AsciiLower(d.kind()), d.name()));
            }},
        d.object);
    ABACUS_RETURN_IF_ERROR(st);
  }
  for (const auto& e : extensions) {
    if (e.kind == kSecretKind) continue;  // tenant and project roles: SecretVault::Prepare
    ABACUS_RETURN_IF_ERROR(check(e.source, Action::kApplyConfig, Resource::ForCluster(AsciiLower(e.kind), e.name)));
  }
  Diagnostics diags;
  for (const auto& g : governance) {
    std::string action = "created";
    if (const auto* u = std::get_if<UserSpec>(&g.object)) {
      ABACUS_RETURN_IF_ERROR(check(g.source, Action::kUserManage, Resource::ForUser(u->name)));
      for (const auto& b : u->roles) {
        if (b.role == Role::kAgent) {
          diags.Add(g.source.file, g.source.line, "roles", "agent is a node credential, not a user role");
        } else if (Status st = b.Validate(); !st.ok()) {
          diags.Add(g.source.file, g.source.line, "roles", st.message());
        }
      }
      if (auto old = registry_.FindUser(u->name)) action = *old == *u ? "unchanged" : "configured";
      if (action != "unchanged") plan->users_.push_back(*u);
    } else {
      const auto& p = std::get<AdmissionPolicy>(g.object);
      std::vector<Resource> resources = PolicyResources(p);
      std::optional<AdmissionPolicy> old;
      {
        MutexLock lock(policies_mu_);
        if (auto it = policies_.find(p.name); it != policies_.end()) old = it->second;
      }
      // A policy the caller may not see is a missing one, as a queue is above.
      const bool hidden = old && !SeesPolicy(who, *old);
      if (hidden) old.reset();
      if (old) {
        // Changing a policy needs the right over the tenants it covered as well.
        for (auto& r : PolicyResources(*old)) resources.push_back(std::move(r));
        action = *old == p ? "unchanged" : "configured";
      }
      for (const auto& r : resources) ABACUS_RETURN_IF_ERROR(check(g.source, Action::kPolicyChange, r));
      if (hidden) return NameTaken("policy", p.name, g.source);
      if (action != "unchanged") plan->policies_.push_back(p);
    }
    plan->items_.push_back(AppliedView{std::string(g.kind()), g.name(), action, std::nullopt, std::nullopt});
  }
  if (!diags.empty()) return diags.ToStatus();
  return std::shared_ptr<const GovernanceApply>(std::move(plan));
}

}  // namespace abacus::server

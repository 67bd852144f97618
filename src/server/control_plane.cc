#include "server/control_plane.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "common/log.h"
#include "common/mutex.h"
#include "common/nesting.h"
#include "common/thread_name.h"
#include "control/controller.h"
#include "govern/crypto.h"
#include "sched/claims.h"
#include "sched/explain.h"
#include "server/device_holders.h"
#include "server/elastic_units.h"
#include "server/fit_check.h"
#include "server/governance.h"
#include "server/node_history.h"
#include "server/node_liveness.h"
#include "server/quota_view.h"
#include "server/reservations_api.h"
#include "server/reserved_pool.h"
#include "server/workload_update.h"
#include "store/data_folder_lock.h"
#include "store/fenced_store.h"
#include "tenancy/priority_class.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/secret_doc.h"
#include "workload/workload_codec.h"

namespace abacus::server {
namespace {

// Counts a cycle's attempts: admitted, and inadmissible per pending reason (abacus_admission_attempts_total).
void CountAdmissionAttempts(const sched::CycleResult& result, LabeledMetrics& m) {
  std::array<int64_t, static_cast<size_t>(sched::kLastPendingCode) + 1> by_code{};
  for (const sched::PendingReason& pr : result.pending) by_code[static_cast<size_t>(pr.code)]++;
  m.CountAdmissionAttempts("admitted", "", static_cast<int64_t>(result.admissions.size()));
  for (size_t c = 0; c < by_code.size(); ++c) {
    m.CountAdmissionAttempts("inadmissible", std::string(sched::PendingCodeName(static_cast<sched::PendingCode>(c))), by_code[c]);
  }
}

using nlohmann::json;

// Reads a request body into documents: YAML (multi-document) or JSON (one object or an array).
ParsedDocuments ParseBody(std::string_view body, bool json_body, const std::string& filename) {
  if (!json_body) return ParseDocuments(body, filename);
  ParsedDocuments out;
  JsonTextProblem problem;  // nesting past the limit, a duplicate key
  json j = ParseJsonChecked(body, &problem);
  if (!problem.message.empty()) {
    out.diagnostics.Add(filename, problem.line, "", problem.message);
    return out;
  }
  if (j.is_discarded()) {
    out.diagnostics.Add(filename, 0, "", "request body is not valid JSON");
    return out;
  }
  std::vector<json> items;
  if (j.is_array()) {
    items.assign(j.begin(), j.end());
  } else {
    items.push_back(std::move(j));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].is_object() && items[i].contains("kind") && items[i]["kind"].is_string() &&
        IsGovernanceKind(items[i]["kind"].get<std::string>())) {
      auto g = GovernanceObjectFromJson(items[i]);
      if (g.ok()) {
        out.governance.push_back({std::move(*g), SourceLocation{filename, 0, {}}});
      } else {
        out.diagnostics.Add(filename, 0, items.size() > 1 ? "[" + std::to_string(i) + "]" : "", g.status().message());
      }
      continue;
    }
    if (items[i].is_object() && items[i].contains("kind") && items[i]["kind"].is_string()) {
      if (ExtensionDecoder decode = FindExtensionKind(items[i]["kind"].get<std::string>())) {
        SpecContext ctx(filename, &out.diagnostics);
        if (auto j = decode(SpecNode(items[i]), ctx)) {
          std::string name = j->value("name", "");
          out.extensions.push_back(
              {items[i]["kind"].get<std::string>(), std::move(name), std::move(*j), SourceLocation{filename, 0, {}}});
        }
        continue;
      }
    }
    auto obj = SpecObjectFromJson(items[i]);
    if (!obj.ok()) {
      out.diagnostics.Add(filename, 0, items.size() > 1 ? "[" + std::to_string(i) + "]" : "",
                          obj.status().message());
      continue;
    }
    Document d{std::move(*obj), SourceLocation{filename, 0, {}}};
    out.documents.push_back(std::move(d));
  }
  return out;
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }


}  // namespace

ControlPlane::ControlPlane(const ControlPlaneOptions& options)
    : options_(options),
      clock_(options.clock != nullptr ? *options.clock : SystemClock::Get()),
      ids_(options.ids != nullptr ? *options.ids : default_ids_) {}

Result<std::string> PrepareDataDir(const std::string& data_dir, const std::string& store_url) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Unavailable("cannot create data directory " + data_dir + ": " + ec.message());
  std::filesystem::permissions(data_dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace,
                               ec);
  return store_url.empty() ? "sqlite://" + std::filesystem::absolute(data_dir).string() + "/abacus.db" : store_url;
}

Result<std::unique_ptr<ControlPlane>> ControlPlane::Open(const ControlPlaneOptions& options) {
  std::unique_ptr<ControlPlane> cp(new ControlPlane(options));
  ABACUS_ASSIGN_OR_RETURN(std::string url, PrepareDataDir(options.data_dir, options.store_url));
  if (options.lock_data_dir && !options.fence) {
    // One server per data folder (issue 20, point 11); under HA the lease decides instead.
    ABACUS_ASSIGN_OR_RETURN(cp->data_lock_, DataFolderLock::Acquire(options.data_dir, "server"));
  }
  if (options.lock_data_dir && (url.starts_with("postgres://") || url.starts_with("postgresql://"))) {
    // One database, one writer: exclusive without --ha, shared by HA leaders (the lease decides
    // among them).
    ABACUS_ASSIGN_OR_RETURN(cp->pg_lock_, LockPostgresWriters(url, options.fence.has_value()));
  }
  StoreOptions so;
  so.clock = &cp->clock_;
  ABACUS_ASSIGN_OR_RETURN(cp->store_, OpenStore(url, so));
  if (options.fence) cp->store_ = std::make_unique<FencedStore>(std::move(cp->store_), *options.fence);
  ABACUS_ASSIGN_OR_RETURN(auto auth, TokenAuthorizer::Open(*cp->store_, options.data_dir));
  cp->tokens_ = auth.get();
  cp->authorizer_ = std::move(auth);
  cp->governance_store_ = std::make_unique<StoreViaCommitter>(*cp->store_);
  Governance::Options go;
  const std::filesystem::path data(options.data_dir);
  go.audit_key_file = options.audit_key_file.empty() ? (data / "audit.key").string() : options.audit_key_file;
  go.audit_anchor_file =
      options.audit_anchor_file.empty() ? (data / "audit.anchors").string() : options.audit_anchor_file;
  ABACUS_ASSIGN_OR_RETURN(cp->governance_, Governance::Open(*cp->governance_store_, cp->clock_, *cp->tokens_, go));
  {
    const std::string key = options.secrets_key_file.empty() ? (data / "secrets.key").string() : options.secrets_key_file;
    const std::string ring =
        options.secrets_keyring_file.empty() ? (data / "secrets.keyring").string() : options.secrets_keyring_file;
    ABACUS_ASSIGN_OR_RETURN(auto keyring, govern::LoadOrCreateSecretKeyring(key, ring));
    RegisterSecretKind();  // kind: Secret in apply (SecretVault::Prepare)
    cp->secrets_ = std::make_unique<SecretVault>(*cp->governance_store_, *cp->governance_, std::move(keyring));
  }
  cp->audit_watch_ = std::make_unique<AuditWatch>(*cp->governance_, cp->clock_, options.audit_check_every);
  ABACUS_RETURN_IF_ERROR(cp->ledger_.Load(*cp->store_));
  {
    // New workload ids come after every stored one, whatever this server's clock says.
    std::string last;
    for (const auto& [id, r] : cp->ledger_.workloads()) last = std::max(last, id);
    if (!last.empty()) cp->ids_.Resume(last);
  }
  // Agents: node credentials, and the assignments as they were (same task ids: nothing starts
  // twice); every agent node gets a full timeout from now to call again.
  cp->board_ = std::make_unique<AssignmentBoard>(static_cast<uint64_t>(ToMicros(cp->clock_.Now())));
  cp->feed_ = std::make_unique<ChangeFeed>(static_cast<uint64_t>(ToMicros(cp->clock_.Now())));
  for (const auto& [name, n] : cp->ledger_.nodes()) {
    if (n.agent && !n.credential_sha256.empty()) cp->tokens_->SetNodeCredential(name, n.credential_sha256);
    if (n.cordon.state == NodeState::kDraining) cp->draining_nodes_.insert(name);  // a drain goes on
  }
  ABACUS_ASSIGN_OR_RETURN(cp->usage_, meter::UsageLedger::Load(*cp->store_, cp->clock_));
  ABACUS_RETURN_IF_ERROR(cp->LoadPriceLists());
  ABACUS_RETURN_IF_ERROR(cp->ReconcileUsage());
  // Fair share over time: rebuilt from the usage ledger, so a restart remembers what ran.
  cp->shares_ = std::make_unique<FairShareBook>(options.scheduler.fair_share_half_life);
  ABACUS_RETURN_IF_ERROR(cp->shares_->Rebuild(*cp->store_));
  for (const auto& [id, r] : cp->ledger_.workloads()) {
    if (!IsTerminal(r.state)) {
      MutexLock names(cp->names_mu_);  // no other thread yet; taken for the analysis (uncontended)
      cp->active_names_[r.spec.project + "/" + r.spec.name] = id;
    }
    if (r.state == WorkloadState::kPreempting) cp->preempting_.insert(id);
    if (!r.waiting() && !r.placements.empty()) cp->Publish(r);
  }
  ABACUS_LOG_INFO("ledger loaded from {}: {} nodes, {} workloads ({} active)", cp->store_->Describe(),
                  cp->ledger_.nodes().size(), cp->ledger_.workloads().size(), cp->ledger_.active_count());
  cp->governance_store_->Attach(&cp->governance_->committer());  // governance's writes join the one committer
  cp->loop_thread_ = std::thread([p = cp.get()] {
    NameThisThread("abacus-loop");
    p->Loop();
  });
  cp->ready_ = true;
  return cp;
}

ControlPlane::~ControlPlane() { Shutdown(); }

void ControlPlane::StopLoop() {
  {
    MutexLock lock(loop_mu_);
    stopping_ = true;
  }
  loop_cv_.notify_all();
  MutexLock join(stop_loop_mu_);
  if (loop_thread_.joinable()) loop_thread_.join();
}

void ControlPlane::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    ready_ = false;
    if (board_) board_->Shutdown();
    if (feed_) feed_->Shutdown();
    StopLoop();
    if (audit_watch_) audit_watch_->Stop();
    // Everything queued commits; then governance's last writes (if any) go straight to the store.
    if (governance_) governance_->FlushAudit();
    if (governance_store_) governance_store_->Attach(nullptr);
    if (governance_) governance_->Shutdown();  // stops the committer: the queued entries are written
    store_.reset();
  });
}

Status ControlPlane::Commit(const WriteBatch& batch, CommitResult* result, std::optional<govern::AuditRecord> entry,
                            std::vector<govern::AuditRecord> decisions) {
  auto start = std::chrono::steady_clock::now();
  // A request's change commits with the request's audit entry, and a decision with the change it
  // makes (issue 20: both or neither).
  std::shared_ptr<PendingRequestAudit> pending = entry ? nullptr : CurrentRequestAudit();
  if (!entry) entry = ClaimRequestAudit(pending.get(), batch);
  if (!entry) pending.reset();
  std::vector<govern::AuditRecord> records;
  records.reserve(decisions.size() + 1);
  if (entry) records.push_back(std::move(*entry));
  for (auto& d : decisions) records.push_back(std::move(d));
  Status st = governance_->committer().Commit(batch, std::move(records), result);
  SettleRequestAudit(pending.get(), st.ok());
  if (st.ok()) RecordChanges(batch, result);
  metrics_.commit_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!st.ok()) metrics_.commit_failures.fetch_add(1);
  return st;
}

void ControlPlane::RecordChanges(const WriteBatch& batch, const CommitResult* result) {
  const std::vector<WriteOp>& ops = batch.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (const auto* put = std::get_if<PutOp>(&ops[i])) {
      feed_->Record(put->kind, put->key);
    } else if (const auto* del = std::get_if<DeleteOp>(&ops[i])) {
      feed_->Record(del->kind, del->key);
    } else if (const auto* ev = std::get_if<EventOp>(&ops[i])) {
      const int64_t seq = result != nullptr && i < result->assigned.size() ? result->assigned[i] : 0;
      feed_->RecordEvent(ev->object_kind, ev->object_key, ev->type, ev->json, seq, ev->time_us);
    }
  }
}

// ---------------------------------------------------------------- writes

Result<std::vector<json>> ControlPlane::Submit(std::string_view body, bool json_body, const std::string& filename,
                                               const govern::Principal* caller, const IdempotentRequest& request,
                                               bool dry_run) {
  // A repeat of a keyed request returns the first answer (issue 20): nothing is submitted twice.
  std::shared_ptr<IdempotentWrite> keyed;
  if (!dry_run) {
    ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed));
    if (replay) return replay->get<std::vector<json>>();
  }
  ParsedDocuments parsed = ParseBody(body, json_body, filename);
  Diagnostics& diags = parsed.diagnostics;
  for (const Document& d : parsed.documents) {
    if (d.workload() == nullptr) {
      diags.Add(d.source.file, d.source.line, "kind",
                "kind " + std::string(d.kind()) + " is configuration: use `abacus apply` (POST /api/v1/apply)");
    }
  }
  {
    // The configuration as it is now, without the state lock: a submission never waits for the
    // scheduling loop (which holds that lock while it takes in submissions and decides).
    std::shared_ptr<const TenancyConfig> config = ledger_.ConfigSnapshot();
    for (const Document& d : parsed.documents) {
      if (const Workload* w = d.workload()) CheckWorkloadReferences(*w, d.source, *config, diags);
    }
  }
  if (!diags.empty()) return diags.ToStatus();
  if (parsed.documents.empty()) return InvalidArgument(filename + ": no workload documents");
  ABACUS_RETURN_IF_ERROR(governance_->CheckSubmit(caller, parsed.documents));  // roles, admission policies
  for (const Document& d : parsed.documents) {
    if (const Workload* w = d.workload()) ABACUS_RETURN_IF_ERROR(secrets_->CheckReferences(*w));  // its own project's
  }
  if (dry_run) {
    std::vector<WorkloadRecord> records;
    for (Document& d : parsed.documents) {
      WorkloadRecord r;
      r.id = "dry-run-" + std::to_string(records.size() + 1);
      r.spec = std::move(std::get<Workload>(d.object));
      r.submitted = clock_.Now();
      if (caller != nullptr) r.submitted_by = caller->name;
      records.push_back(std::move(r));
    }
    ABACUS_RETURN_IF_ERROR(CheckNamesFree(records));
    return DryRunExplain(records);
  }
  // Every write waits at the one committer.
  if (governance_->committer().queued() > options_.max_queued_commits) {
    metrics_.rejected_busy.fetch_add(1);
    return ResourceExhausted("server busy: too many writes waiting for the store; retry");
  }
  std::vector<WorkloadRecord> records;
  WriteBatch batch;
  Time now = clock_.Now();
  for (Document& d : parsed.documents) {
    WorkloadRecord r;
    r.id = ids_.Next("wl");
    r.spec = std::move(std::get<Workload>(d.object));
    r.submitted = now;
    if (caller != nullptr) r.submitted_by = caller->name;
    batch.PutJson(kWorkloadKind, r.id, ToJson(r), 0);
    batch.AppendEventJson(kWorkloadKind, r.id, "Submitted",
                          EventJson(WorkloadState::kPending, "submitted to queue " + r.spec.queue), now);
    records.push_back(std::move(r));
  }
  // The request's audit entry (ids and states, as the answer lists them) commits with the
  // workloads: one commit to wait for, not two.
  json summary = json::array();
  for (const auto& r : records) summary.push_back({{"id", r.id}, {"state", "Pending"}});
  CommitResult result;
  std::optional<govern::AuditRecord> entry = RequestAuditRecord(summary.dump());
  const bool audited = entry.has_value();
  ABACUS_RETURN_IF_ERROR(ClaimNames(records));  // one active workload per name and project
  std::vector<json> out;
  // Work that can never run is still stored (the inventory or quota may change), and the answer
  // says so now, in the scheduler's words (fit_check.h), rather than after the next cycle.
  std::shared_ptr<const FitChecker> fit = ledger_.FitCheckerSnapshot();
  for (size_t i = 0; i < records.size(); ++i) {
    out.push_back({{"id", records[i].id},
                   {"name", records[i].spec.name},
                   {"kind", WorkloadKindName(records[i].spec.kind())},
                   {"queue", records[i].spec.queue},
                   {"state", "Pending"}});
    if (fit == nullptr) continue;
    if (std::string never = fit->NeverFits(records[i], options_.scheduler); !never.empty()) {
      constexpr std::string_view kPrefix = "never fits: ";
      if (never.rfind(kPrefix, 0) == 0) never.erase(0, kPrefix.size());
      out.back()["warnings"] = json::array({"NeverFits: " + never});
    }
  }
  keyed->Stage(batch, out, now);
  if (Status st = Commit(batch, &result, std::move(entry)); !st.ok()) {
    ReleaseNames(records);
    // A concurrent request with the same key committed first: its answer is this one's.
    ABACUS_ASSIGN_OR_RETURN(json concurrent, keyed->AfterFailedCommit(st, clock_.Now()));
    NoteRequestReplayed(request.key);
    return concurrent.get<std::vector<json>>();
  }
  if (audited) NoteRequestAudited();
  for (size_t i = 0; i < records.size(); ++i) records[i].version = result.assigned[i * 2];
  metrics_.submitted.fetch_add(static_cast<int64_t>(records.size()));
  {
    MutexLock lock(loop_mu_);
    for (auto& r : records) inbox_.push_back(std::move(r));
    ++submitted_seq_;
  }
  loop_cv_.notify_one();
  return out;
}

Result<json> ControlPlane::RunOnLoop(std::function<Result<json>()> fn) {
  auto promise = std::make_shared<std::promise<Result<json>>>();
  auto future = promise->get_future();
  {
    MutexLock lock(loop_mu_);
    if (stopping_) return Unavailable("server is shutting down");
    commands_.push_back([promise, fn = std::move(fn), audit = CurrentRequestAudit()] {
      CarryRequestAudit carry(audit);  // the request's entry commits with the command's change
      promise->set_value(fn());
    });
    ++submitted_seq_;
  }
  loop_cv_.notify_one();
  return future.get();
}

Result<json> ControlPlane::Apply(std::string_view body, bool json_body, const std::string& filename,
                                 const govern::Principal* caller, const IdempotentRequest& request, bool dry_run) {
  // A repeat of a keyed request returns the first answer ("created", not "unchanged").
  std::shared_ptr<IdempotentWrite> keyed;
  if (!dry_run) {
    ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed));
    if (replay) return std::move(*replay);
  }
  ParsedDocuments parsed = ParseBody(body, json_body, filename);
  Diagnostics& diags = parsed.diagnostics;
  for (const Document& d : parsed.documents) {
    if (d.workload() != nullptr) {
      diags.Add(d.source.file, d.source.line, "kind",
                "kind " + std::string(d.kind()) + " is a workload: use `abacus submit` (POST /api/v1/workloads)");
    }
  }
  if (!diags.empty()) return diags.ToStatus();
  if (parsed.documents.empty() && parsed.extensions.empty() && parsed.governance.empty()) {
    return InvalidArgument(filename + ": no documents");
  }
  std::shared_ptr<const GovernanceApply> governed;  // roles per document; users and policies
  {
    ReaderLock lock(state_mu_);
    ABACUS_ASSIGN_OR_RETURN(governed, governance_->PlanApply(caller, parsed.documents, parsed.extensions,
                                                             parsed.governance, ledger_.config()));
  }
  // Secrets: checked, authorized (tenant and project roles, as `secret create`) and sealed here;
  // stored with the other documents. Their answer holds keys and versions, never a value.
  auto secrets = std::make_shared<std::vector<SecretVault::Staged>>();
  for (auto it = parsed.extensions.begin(); it != parsed.extensions.end();) {
    if (it->kind != kSecretKind) {
      ++it;
      continue;
    }
    if (caller == nullptr) return PermissionDenied(it->source.ToString() + ": a Secret needs a caller");
    auto staged = secrets_->Prepare(*caller, it->object);
    if (!staged.ok()) {
      std::string where = it->source.ToString();
      return where.empty() ? staged.status() : staged.status().WithContext(where);
    }
    secrets->push_back(std::move(*staged));
    it = parsed.extensions.erase(it);
  }
  auto docs = std::make_shared<std::vector<Document>>(std::move(parsed.documents));
  auto extensions = std::make_shared<std::vector<ExtensionDocument>>(std::move(parsed.extensions));
  auto change = [this, docs, extensions, secrets, governed, keyed, dry_run]() -> Result<json> {
    std::vector<const SpecObject*> objects;
    for (const Document& d : *docs) objects.push_back(&d.object);
    Diagnostics diags;
    // The configuration after this apply, checked without the state lock (this loop thread is
    // the only writer); the lock is taken only to put the objects in, once (Ledger::PutConfigs).
    TenancyConfig merged = ledger_.MergedConfig(objects);
    // Report duplicates inside the request and reference problems of the merged config.
    TenancyConfig request_only;
    AddToTenancyConfig(*docs, request_only, diags);
    merged.CheckReferences(diags);
    if (!diags.empty()) return diags.ToStatus();
    std::unordered_map<std::string, const SpecObject*> held;  // "kind/name" → what the ledger holds
    held.reserve(ledger_.config_objects().size());
    for (const auto& [key, existing] : ledger_.config_objects()) held.emplace(key, &existing);
    WriteBatch batch;
    json out = json::array();
    std::vector<const SpecObject*> changed;  // unchanged objects are not put again
    for (const Document& d : *docs) {
      std::string kind = StoreKindOf(d.object);
      std::string name = d.name();
      std::string doc = abacus::ToJson(d.object).dump();
      std::string action = "created";
      json before = json::object();
      if (auto it = held.find(kind + "/" + name); it != held.end()) {
        before = abacus::ToJson(*it->second);
        action = before.dump() == doc ? "unchanged" : "configured";
      }
      if (action != "unchanged") changed.push_back(&d.object);
      if (action != "unchanged") batch.Put(kind, name, doc);  // audited per request (governance_api.cc)
      out.push_back({{"kind", d.kind()}, {"name", name}, {"action", action}});
      if (dry_run) out.back()["diff"] = FieldDiff(before, abacus::ToJson(d.object));
    }
    std::vector<meter::PriceList> prices;
    ABACUS_RETURN_IF_ERROR(StagePriceLists(*extensions, batch, out, prices));
    for (const SecretVault::Staged& s : *secrets) {
      if (s.item.value("action", "") != "unchanged") {
        batch.PutJson(std::string(kSecretStoreKind), s.key, s.record, s.expected);  // audited per request
      }
      out.push_back(s.item);
    }
    governed->Stage(batch, out);
    if (dry_run) return out;  // checked and compared; nothing stored, nothing changed in memory
    keyed->Stage(batch, out, clock_.Now());  // also when every document is unchanged
    if (!batch.empty()) ABACUS_RETURN_IF_ERROR(Commit(batch, nullptr));
    governed->Committed();
    {
      WriterLock lock(state_mu_);
      for (auto& p : prices) price_lists_[p.name] = std::move(p);
      ledger_.PutConfigs(changed);
    }
    dirty_ = true;
    return out;
  };
  if (dry_run) return RunOnLoop(change);
  return RunKeyedOnLoop(keyed, change);
}

Result<std::optional<json>> ControlPlane::BeginKeyed(const IdempotentRequest& request,
                                                    std::shared_ptr<IdempotentWrite>* keyed) {
  *keyed = std::make_shared<IdempotentWrite>(*store_, request, options_.idempotency_ttl);
  ABACUS_ASSIGN_OR_RETURN(bool repeat, (*keyed)->Check(clock_.Now()));
  if (!repeat) return std::optional<json>();
  NoteRequestReplayed(request.key);
  return std::optional<json>((*keyed)->first_answer());
}

Result<json> ControlPlane::RunKeyedOnLoop(std::shared_ptr<IdempotentWrite> keyed, std::function<Result<json>()> change) {
  auto replayed = std::make_shared<bool>(false);
  Result<json> answer = RunOnLoop([this, keyed, replayed, change = std::move(change)]() -> Result<json> {
    // Checked again on the loop, which makes every such change one after another: a request
    // with the same key that ran meanwhile answered first.
    ABACUS_ASSIGN_OR_RETURN(bool repeat, keyed->Check(clock_.Now()));
    if (repeat) {
      *replayed = true;
      return keyed->first_answer();
    }
    Result<json> changed = change();
    if (changed.ok()) return changed;
    // Aborted on the key's record: a request with the same key committed first off the loop;
    // its answer is this one's (or, on another route, a 409 naming it).
    Result<json> concurrent = keyed->AfterFailedCommit(changed.status(), clock_.Now());
    *replayed = concurrent.ok();
    return concurrent;
  });
  if (*replayed) NoteRequestReplayed(keyed->request().key);
  return answer;
}

Status ControlPlane::CommitTransition(WorkloadRecord& r, WorkloadState to, const std::string& event, json details,
                                      const std::function<void(WriteBatch&, const WorkloadRecord&)>& stage) {
  WorkloadRecord next = r;
  ABACUS_RETURN_IF_ERROR(Transition(next.state, to));
  Time now = clock_.Now();
  if (IsTerminal(to)) next.finished_at = now;
  if (!details.contains("message") && !next.message.empty()) details["message"] = next.message;
  WriteBatch batch;
  batch.PutJson(kWorkloadKind, next.id, ToJson(next), next.version);
  batch.AppendEventJson(kWorkloadKind, next.id, event, EventJson(to, "", std::move(details)), now);
  StageUsage(&r, next, batch, now);
  if (stage) stage(batch, next);
  CommitResult result;
  if (Status st = Commit(batch, &result); !st.ok()) {
    UsageCommitFailed();
    return st;
  }
  next.version = result.assigned[0];
  WriterLock lock(state_mu_);
  r = std::move(next);
  dirty_ = true;
  return Status::OK();
}

Result<json> ControlPlane::Cancel(const std::string& id_or_name, const std::string& reason,
                                  const IdempotentRequest& request) {
  // A repeat of a keyed request returns the first answer, also once the workload finished.
  std::shared_ptr<IdempotentWrite> keyed;
  ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed));
  if (replay) return std::move(*replay);
  return RunKeyedOnLoop(keyed, [this, id_or_name, reason, keyed]() -> Result<json> {
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return NotFound("workload '" + id_or_name + "' not found");
    WorkloadRecord* r = ledger_.FindWorkload(found->id);
    if (!CanTransition(r->state, WorkloadState::kCancelled)) {
      return FailedPrecondition("workload " + r->id + " is " + std::string(WorkloadStateName(r->state)) +
                                ": illegal workload transition " + std::string(WorkloadStateName(r->state)) +
                                " -> Cancelled");
    }
    WorkloadRecord copy = *r;
    copy.message = reason.empty() ? "cancelled by user" : "cancelled: " + reason;
    {
      WriterLock lock(state_mu_);
      std::swap(*r, copy);
    }
    // The answer is the workload as the commit leaves it, stored with it under the key.
    json out;
    Status st = CommitTransition(*r, WorkloadState::kCancelled, "Cancelled", json::object(),
                                 [&](WriteBatch& batch, const WorkloadRecord& next) {
                                   {
                                     ReaderLock lock(state_mu_);
                                     out = View(next);
                                   }
                                   keyed->Stage(batch, out, clock_.Now());
                                 });
    if (!st.ok()) {
      WriterLock lock(state_mu_);
      std::swap(*r, copy);
      return st;
    }
    preempting_.erase(r->id);
    Publish(*r);  // its agents stop what still runs
    return out;
  });
}

Result<json> ControlPlane::Scale(const std::string& id_or_name, int32_t replicas, const IdempotentRequest& request) {
  // A repeat of a keyed request returns the first answer and scales nothing again.
  std::shared_ptr<IdempotentWrite> keyed;
  ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed));
  if (replay) return std::move(*replay);
  return RunKeyedOnLoop(keyed, [this, id_or_name, replicas, keyed]() -> Result<json> {
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return NotFound("workload '" + id_or_name + "' not found");
    WorkloadRecord next = *found;
    if (IsTerminal(next.state)) {
      return FailedPrecondition("workload " + next.id + " is " + std::string(WorkloadStateName(next.state)) +
                                " and cannot be scaled");
    }
    std::string what;
    if (InferenceSpec* inf = std::get_if<InferenceSpec>(&next.spec.details)) {
      if (replicas < inf->min_replicas || replicas > inf->max_replicas) {
        return InvalidArgument("replicas: must be within minReplicas " + std::to_string(inf->min_replicas) +
                               " and maxReplicas " + std::to_string(inf->max_replicas) + ", got " +
                               std::to_string(replicas));
      }
      what = "replicas " + std::to_string(inf->replicas) + " -> " + std::to_string(replicas);
      inf->replicas = replicas;
    } else if (BatchSpec* b = std::get_if<BatchSpec>(&next.spec.details)) {
      if (replicas < 1 || replicas > b->tasks) {
        return InvalidArgument("replicas: a BatchJob's parallelism must be within 1 and tasks " +
                               std::to_string(b->tasks) + ", got " + std::to_string(replicas));
      }
      what = "parallelism " + std::to_string(b->parallelism) + " -> " + std::to_string(replicas);
      b->parallelism = replicas;
    } else {
      return FailedPrecondition("a " + std::string(WorkloadKindName(next.spec.kind())) +
                                " cannot be scaled (InferenceService replicas, BatchJob parallelism)");
    }
    WorkloadState to = next.state;
    bool elastic = HasAgentTasks(next) && (next.state == WorkloadState::kRunning || next.state == WorkloadState::kAdmitted);
    if (elastic) {
      // Its controller grows or shrinks it in place: missing units wait as slices (elastic_units.h),
      // extra ones are stopped and released.
    } else if (next.state == WorkloadState::kAdmitted) {
      to = WorkloadState::kPending;  // admission rolled back: re-admitted at the new size
    } else if (next.holds_quota()) {
      return FailedPrecondition("workload " + next.id + " is " + std::string(WorkloadStateName(next.state)) +
                                "; scale it once it runs again");
    }
    if (to != next.state) {
      ABACUS_RETURN_IF_ERROR(Transition(next.state, to));
      next.placements.clear();
      next.group_flavors.clear();
      next.admitted_at = Time{};
    }
    Time now = clock_.Now();
    WriteBatch batch;
    batch.PutJson(kWorkloadKind, next.id, ToJson(next), next.version);
    batch.AppendEventJson(kWorkloadKind, next.id, elastic ? "ScaleRequested" : "Scaled", EventJson(next.state, what),
                          now);
    StageUsage(found, next, batch, now);
    json out;  // the workload as the commit leaves it, stored with it under the key
    {
      ReaderLock lock(state_mu_);
      out = View(next);
    }
    keyed->Stage(batch, out, now);
    CommitResult result;
    if (Status st = Commit(batch, &result); !st.ok()) {
      UsageCommitFailed();
      return st;
    }
    next.version = result.assigned[0];
    WriterLock lock(state_mu_);
    WorkloadRecord* r = ledger_.FindWorkload(next.id);
    *r = std::move(next);
    dirty_ = true;
    Publish(*r);
    return out;
  });
}

Result<json> ControlPlane::PutNode(const json& body) {
  auto rec = NodeRecordFromJson(body);
  if (!rec.ok()) return rec.status();
  auto node = std::make_shared<NodeRecord>(std::move(*rec));
  node->agent = false;
  node->credential_sha256.clear();
  return RunOnLoop([this, node]() -> Result<json> {
    if (ToMicros(node->node.last_heartbeat) == 0) node->node.last_heartbeat = clock_.Now();
    const NodeRecord* old = ledger_.FindNode(node->node.name);
    if (old != nullptr && old->agent) {
      return FailedPrecondition("node " + node->node.name + " is run by an agent: it registers itself");
    }
    bool existed = old != nullptr;
    node->cordon = existed ? old->cordon : NodeCordonRecord{};  // only abacus cordon/uncordon change it
    WriteBatch batch;
    batch.Put(kNodeKind, node->node.name, ToJson(*node).dump());
    json details = {{"simulated", node->simulated}, {"devices", node->node.devices.size()}};
    AddNodeState(*node, details);  // capacity reports read the node's life back (node_history.h)
    batch.AppendEvent(kNodeKind, node->node.name, existed ? "Updated" : "Registered", details.dump(), clock_.Now());
    CommitResult result;
    ABACUS_RETURN_IF_ERROR(Commit(batch, &result));
    node->version = result.assigned[0];
    json out = ToJson(*node);
    {
      WriterLock lock(state_mu_);
      ledger_.PutNode(std::move(*node));
    }
    dirty_ = true;
    return out;
  });
}

// ---------------------------------------------------------------- the loop

void ControlPlane::WaitForCycle() {
  MutexLock lock(loop_mu_);
  uint64_t target = ++submitted_seq_;
  loop_cv_.notify_one();
  lock.Wait(cycle_cv_, [&]() REQUIRES(loop_mu_) { return cycled_seq_ >= target || stopping_; });
}

void ControlPlane::Loop() {
  while (true) {
    std::vector<WorkloadRecord> inbox;
    std::vector<TaskReport> reports;
    std::deque<std::function<void()>> commands;
    uint64_t seen_seq = 0;
    bool stop = false;
    {
      MutexLock lock(loop_mu_);
      auto wake = [&]() REQUIRES(loop_mu_) {
        return stopping_ || !inbox_.empty() || !commands_.empty() || !reports_.empty() || submitted_seq_ > cycled_seq_;
      };
      // Sleep until there is work, or until the timer cycle is due.
      Time next_timer = last_full_cycle_ + std::max(options_.cycle_interval, 20 * last_full_cycle_cost_);
      Duration wait = std::max(Duration(0), next_timer - clock_.Now());
      lock.WaitFor(loop_cv_, std::min<Duration>(wait, std::chrono::milliseconds(200)), wake);
      inbox.swap(inbox_);
      reports.swap(reports_);
      commands.swap(commands_);
      seen_seq = submitted_seq_;
      stop = stopping_;
    }
    if (!inbox.empty()) {
      WriterLock lock(state_mu_);
      for (auto& r : inbox) {
        fresh_.insert(r.id);
        feed_->Record(kWorkloadKind, r.id);  // now in the ledger (its commit may have published first)
        ledger_.PutWorkload(std::move(r));
      }
      dirty_ = true;
    }
    // A command may free capacity or change the rules: every waiting workload is retried.
    if (!commands.empty()) full_ = true;
    for (auto& cmd : commands) cmd();
    ProcessTaskReports(reports);
    CheckNodeLiveness();
    TickControllers();
    MaintainReservations();  // nothing unless a reservation drains (reservations_api.cc)
    ProgressDrains();  // nothing unless a node is Draining (fleet.cc)
    if (clock_.Now() - idempotency_purged_ >= std::chrono::hours(1)) {
      idempotency_purged_ = clock_.Now();
      if (auto purged = PurgeExpiredIdempotencyKeys(*store_, idempotency_purged_); !purged.ok()) {
        ABACUS_LOG_WARN("expired idempotency keys not purged: {}", purged.status().ToString());
      }
    }
    // What this step committed is in the ledger now: watchers may read it.
    feed_->Publish();
    if (stop) {
      // Answer commands queued after the last drain.
      std::deque<std::function<void()>> rest;
      {
        MutexLock lock(loop_mu_);
        rest.swap(commands_);
        cycled_seq_ = submitted_seq_;
      }
      for (auto& cmd : rest) cmd();
      cycle_cv_.notify_all();
      return;
    }
    FinishPreemptions();
    Time now = clock_.Now();
    // Coalesce: after a change wait at least min_cycle_gap (and 4x the last cycle's cost,
    // so that a big ledger does not starve ingestion); otherwise cycle on the timer.
    Duration gap = std::max(options_.min_cycle_gap, 4 * last_cycle_cost_);
    // The timer cycle retries every parked workload (aging, time-based rules); it runs at most
    // once per cycle_interval and keeps its own cost under 5% of the loop.
    Duration full_gap = std::max(options_.cycle_interval, 20 * last_full_cycle_cost_);
    if (now - last_full_cycle_ >= full_gap) full_ = true;
    // The coalescing gap is real time (a cost), the timer is the clock's (rules, aging).
    Duration since = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - last_cycle_steady_);
    bool due = (dirty_ || full_ || freed_) && since >= gap;
    {
      MutexLock lock(loop_mu_);
      if (!due && cycled_seq_ < seen_seq && !dirty_) due = true;
    }
    if (due) {
      RunCycle();
      feed_->Publish();  // the cycle's decisions
      {
        MutexLock lock(loop_mu_);
        cycled_seq_ = std::max(cycled_seq_, seen_seq);
      }
      cycle_cv_.notify_all();
    } else if (dirty_) {
      std::this_thread::sleep_for(std::min<Duration>(gap - since, std::chrono::milliseconds(50)));
    }
  }
}

void ControlPlane::FinishPreemptions() {
  // Tasks on agent nodes end when their agent reports them stopped (ProcessTaskReports). On
  // simulated nodes nothing runs: a preempted workload has stopped once its checkpoint grace is
  // over, and is requeued.
  if (preempting_.empty()) return;
  Time now = clock_.Now();
  std::vector<std::string> done;
  for (const auto& id : preempting_) {
    const WorkloadRecord* r = ledger_.FindWorkload(id);
    if (r == nullptr || r->state != WorkloadState::kPreempting) {
      done.push_back(id);
      continue;
    }
    bool on_agent = false;
    for (const auto& p : r->placements) {
      const NodeRecord* n = ledger_.FindNode(p.node);
      on_agent |= n != nullptr && n->agent;
    }
    if (on_agent) continue;
    int64_t grace = 0;
    if (const TrainingSpec* t = r->spec.training(); t != nullptr && t->checkpoint) grace = t->checkpoint->grace_seconds;
    if (now - r->preempted_at >= std::chrono::seconds(grace)) done.push_back(id);
  }
  for (const auto& id : done) {
    WorkloadRecord* r = ledger_.FindWorkload(id);
    if (r == nullptr || r->state != WorkloadState::kPreempting) {
      preempting_.erase(id);
      continue;
    }
    WorkloadRecord copy = *r;
    {
      WriterLock lock(state_mu_);
      r->placements.clear();
      r->group_flavors.clear();
      r->preempted_at = Time{};
      r->admitted_at = Time{};
      r->requeues++;
      // Typed, for metering (usage_sync.cc): the operator's reason (fleet.h), else Preempted.
      r->requeue_reason = r->evict_reason.empty() ? "Preempted" : r->evict_reason;
    }
    Status st = CommitTransition(*r, WorkloadState::kRequeued, "Requeued",
                                 json({{"reason", r->requeue_reason}}));
    if (!st.ok()) {
      ABACUS_LOG_ERROR("requeue {}: {}", id, st.ToString());
      WriterLock lock(state_mu_);
      *r = std::move(copy);
      continue;
    }
    preempting_.erase(id);
    full_ = true;
  }
}

void ControlPlane::RunCycle() {
  auto start = std::chrono::steady_clock::now();
  Time now = clock_.Now();
  last_cycle_steady_ = std::chrono::steady_clock::now();
  dirty_ = false;
  // A full cycle retries every waiting workload; an incremental one only those submitted since
  // the last cycle: the others were tried against the same capacity and rules, and parked.
  // A bounded cycle (capacity was freed) retries the first waiting workloads of each queue: with
  // thousands waiting, only the heads can use what a finished task left.
  const bool full = full_;
  const bool bounded = !full && freed_;
  full_ = false;
  freed_ = false;
  if (full) last_full_cycle_ = now;
  std::unordered_set<std::string> fresh;
  fresh.swap(fresh_);
  // 1. Snapshot (the loop is the only writer: no lock needed to read the ledger here).
  SnapshotIndex index;
  sched::Snapshot snapshot = ledger_.BuildSnapshot(now, index, full ? nullptr : &fresh,
                                                   bounded ? options_.bounded_cycle_per_queue : 0);
  if (shares_) shares_->Fill(&snapshot);
  // 2. Decide.
  sched::CycleResult result = sched::Schedule(snapshot, options_.scheduler);
  {
    // Gang holds persist: the gangs holding nodes now are in every following snapshot.
    std::unordered_set<std::string> holding;
    for (const auto& res : result.reservations) holding.insert(res.workload_id);
    ledger_.SetHolding(std::move(holding));
  }
  // 3. Assume the decisions in memory, remembering what to restore.
  std::vector<WorkloadRecord> before;
  WriteBatch batch;
  std::vector<govern::AuditRecord> decisions;  // the audit entries of this cycle's decisions
  std::vector<std::string> changed;
  {
    WriterLock lock(state_mu_);
    std::map<std::string, size_t> grown;  // elastic workloads given units: id → its copy in `before`
    // A batch's new slots get their array tasks now, not at the next controller tick.
    auto fill_slots = [&](WorkloadRecord& r) {
      std::vector<std::pair<std::string, json>> events;
      if (r.spec.batch() != nullptr) RunController(r, events, batch, decisions, now);
      return events;
    };
    auto append_events = [&](const WorkloadRecord& r, const std::vector<std::pair<std::string, json>>& events) {
      for (const auto& [type, details] : events) batch.AppendEventJson(kWorkloadKind, r.id, type, details, now);
    };
    for (const sched::Admission& a : result.admissions) {
      if (auto slice = ParseSliceId(index.workload_ids[a.workload])) {
        WorkloadRecord* r = ledger_.FindWorkload(slice->first);
        if (r == nullptr || PlacedUnits(*r).count(slice->second) != 0 ||
            (r->state != WorkloadState::kAdmitted && r->state != WorkloadState::kRunning)) {
          continue;
        }
        if (!grown.count(r->id)) {
          grown[r->id] = before.size();
          before.push_back(*r);
        }
        AddUnit(snapshot, a, slice->second, *r, batch, now);
        continue;
      }
      WorkloadRecord* r = ledger_.FindWorkload(index.workload_ids[a.workload]);
      if (r == nullptr || !r->waiting()) continue;
      before.push_back(*r);
      (void)Transition(r->state, WorkloadState::kAdmitted);
      Ledger::ApplyAdmission(snapshot, a, *r);
      ledger_.NoteHolder(*r);
      for (auto& p : r->placements) p.version = InitialVersion(*r, UnitOf(*r, p));
      std::vector<std::pair<std::string, json>> controller_events = fill_slots(*r);
      r->admitted_at = now;
      if (ToMicros(r->first_admitted_at) == 0) r->first_admitted_at = now;
      r->message.clear();
      std::set<std::string> nodes;
      for (const auto& p : r->placements) nodes.insert(p.node);
      json where = json::array();
      for (const auto& n : nodes) where.push_back(n);
      batch.PutJson(kWorkloadKind, r->id, ToJson(*r), r->version);
      batch.AppendEvent(kWorkloadKind, r->id, "Admitted",
                        EventJson(WorkloadState::kAdmitted, a.borrowing ? "admitted on borrowed quota" : "admitted",
                                  {{"flavors", r->group_flavors}, {"borrowing", a.borrowing}})
                            .dump(),
                        now);
      batch.AppendEvent(kWorkloadKind, r->id, "Placed",
                        EventJson(WorkloadState::kAdmitted, "placed on " + std::to_string(nodes.size()) + " node(s)",
                                  {{"nodes", where}, {"tasks", r->placements.size()}})
                            .dump(),
                        now);
      StageOutsidePoolEvent(*r, PlacedUnits(*r), ledger_, batch, now);
      append_events(*r, controller_events);
      StageUsage(&before.back(), *r, batch, now);
      changed.push_back(r->id);
      metrics_.decision_seconds.Observe(Seconds(now - r->submitted));
      metrics_.labeled.ObserveWait(r->spec.queue, Seconds(now - r->submitted));
    }
    // A preemptor that started (a workload or a unit of one) no longer claims what its victims
    // gave back (sched/claims.h).
    for (const sched::Admission& a : result.admissions) {
      for (const auto& victim_id : ledger_.ClaimsOf(index.workload_ids[a.workload])) {
        WorkloadRecord* v = ledger_.FindWorkload(victim_id);
        // One write per record per cycle: a victim written already this cycle keeps its claim
        // until the next admission of its preemptor's clears it (the scheduler ignores a claim
        // whose preemptor is not waiting).
        if (v == nullptr || std::any_of(before.begin(), before.end(), [&](const WorkloadRecord& b) { return b.id == v->id; })) {
          continue;
        }
        before.push_back(*v);
        v->yields_to.clear();
        v->yield_count = 0;
        batch.PutJson(kWorkloadKind, v->id, ToJson(*v), v->version);  // not published: nothing to run
      }
    }
    for (const auto& [id, at] : grown) {
      WorkloadRecord* r = ledger_.FindWorkload(id);
      append_events(*r, fill_slots(*r));
      batch.PutJson(kWorkloadKind, r->id, ToJson(*r), r->version);
      StageUsage(&before[at], *r, batch, now);
      changed.push_back(r->id);
    }
    for (const sched::Preemption& p : result.preemptions) {
      WorkloadRecord* r = ledger_.FindWorkload(index.workload_ids[p.victim]);
      if (r == nullptr || !CanTransition(r->state, WorkloadState::kPreempting)) continue;
      if (grown.count(r->id) != 0) continue;  // it grew this cycle: the next cycle decides again
      before.push_back(*r);
      (void)Transition(r->state, WorkloadState::kPreempting);
      metrics_.labeled.CountPreemption(std::string(sched::PreemptionReasonName(p.reason)));
      r->preempted_at = now;
      r->message = "preempted for " + p.preemptor_id + " (" + std::string(sched::PreemptionReasonName(p.reason)) + ")";
      // What it frees is claimed by its preemptor (sched/claims.h); count repeats for the guard.
      r->yield_count = sched::YieldCountAfter(r->yields_to, r->yield_count, p.preemptor_id);
      r->yields_to = p.preemptor_id;
      ledger_.PutClaim(*r);
      batch.PutJson(kWorkloadKind, r->id, ToJson(*r), r->version);
      if (r->yield_count >= sched::kChurnLimit) {
        batch.AppendEvent(kWorkloadKind, r->id, "PreemptionChurnStopped",
                          EventJson(WorkloadState::kPreempting,
                                    "preempted " + std::to_string(r->yield_count) + " times in a row for " +
                                        p.preemptor_id + " without it starting; from now on it waits until " +
                                        p.preemptor_id + " has started",
                                    {{"preemptor", p.preemptor_id}, {"count", r->yield_count}})
                              .dump(),
                          now);
      }
      batch.AppendEvent(kWorkloadKind, r->id, "Preempted",
                        EventJson(WorkloadState::kPreempting, r->message,
                                  {{"preemptor", p.preemptor_id},
                                   {"reason", sched::PreemptionReasonName(p.reason)},
                                   {"graceSeconds", p.grace_seconds}})
                            .dump(),
                        now);
      {
        // For the evidence report: who gave back what, to whom.
        int64_t milli = 0;
        for (const auto& pl : r->placements) {
          for (const auto& g : pl.devices) milli += g.milli;
        }
        auto by_slice = ParseSliceId(p.preemptor_id);
        const WorkloadRecord* by = ledger_.FindWorkload(by_slice ? by_slice->first : p.preemptor_id);
        batch.AppendJournal("preemptions",
                            json({{"workload", r->id},
                                  {"tenant", r->spec.tenant()},
                                  {"queue", r->spec.queue},
                                  {"flavor", r->group_flavors.empty() ? "cpu" : r->group_flavors[0]},
                                  {"deviceMilli", milli},
                                  {"reason", sched::PreemptionReasonName(p.reason)},
                                  {"by", p.preemptor_id},
                                  {"byQueue", by != nullptr ? by->spec.queue : ""}})
                                .dump(),
                            now);
      }
      changed.push_back(r->id);
    }
    // What can never run says so once, as an event the user sees in `abacus events`/describe
    // (explain carries the same reason).
    for (const sched::PendingReason& pr : result.pending) {
      if (pr.code != sched::PendingCode::kInvalid) continue;
      auto prev = ledger_.pending_reasons().find(pr.workload_id);
      if (prev != ledger_.pending_reasons().end() && prev->second.code == sched::PendingCode::kInvalid) continue;
      const WorkloadRecord* r = ledger_.FindWorkload(pr.workload_id);
      if (r == nullptr) continue;
      batch.AppendEvent(kWorkloadKind, r->id, "NeverFits", EventJson(r->state, pr.message).dump(), now);
    }
    if (!full) {
      // Parked workloads keep the reason of the cycle that last tried them.
      auto& reasons = ledger_.pending_reasons();
      auto& ledger_reasons = ledger_.ledger_reasons();
      for (const auto& id : index.workload_ids) reasons.erase(id);
      for (const auto& [id, why] : index.unschedulable) ledger_reasons.erase(id);
      for (auto& pr : result.pending) reasons[pr.workload_id] = std::move(pr);
      for (auto& [id, why] : index.unschedulable) ledger_reasons[id] = why;
    }
  }
  if (full) {
    // Every waiting workload gets its reason anew: the maps are built outside the lock and
    // swapped in, and the old ones freed after it (with tens of thousands waiting, filling them
    // under the lock stalled every submission for milliseconds).
    std::unordered_map<std::string, sched::PendingReason> reasons;
    std::unordered_map<std::string, std::string> ledger_reasons;
    reasons.reserve(result.pending.size());
    for (auto& pr : result.pending) {
      std::string id = pr.workload_id;
      reasons.insert_or_assign(std::move(id), std::move(pr));
    }
    for (auto& [id, why] : index.unschedulable) ledger_reasons[id] = why;
    {
      WriterLock lock(state_mu_);
      ledger_.pending_reasons().swap(reasons);
      ledger_.ledger_reasons().swap(ledger_reasons);
    }
  }
  // 4. Commit, with the audit entry of every decision that touches a user's work (both or
  // neither); on failure roll back in memory.
  if (governance_) {
    for (const auto& id : changed) {
      const WorkloadRecord* r = ledger_.FindWorkload(id);
      if (r == nullptr) continue;
      bool preempted = r->state == WorkloadState::kPreempting;
      std::string where;
      for (const auto& p : r->placements) where += (where.empty() ? "" : ",") + p.node;
      decisions.push_back(DecisionRecord("scheduler", preempted ? "preempt" : "admit", "workload", r->id,
                                         r->spec.tenant(), preempted ? "Running" : "Pending",
                                         preempted ? r->message : "Admitted on " + where));
    }
  }
  bool committed = false;
  if (!batch.empty()) {
    CommitResult cr;
    Status st = Commit(batch, &cr, std::nullopt, std::move(decisions));
    staged_.Settle(st.ok(), metrics_.labeled);
    WriterLock lock(state_mu_);
    if (!st.ok()) {
      ABACUS_LOG_ERROR("scheduling decisions not committed, rolled back: {}", st.ToString());
      UsageCommitFailed();
      for (auto& r : before) ledger_.PutWorkload(std::move(r));
      dirty_ = true;
    } else {
      // Versions: each changed record was a Put followed by its events.
      size_t op = 0;
      for (const WriteOp& o : batch.ops()) {
        if (const PutOp* put = std::get_if<PutOp>(&o)) {
          if (WorkloadRecord* r = ledger_.FindWorkload(put->key)) r->version = cr.assigned[op];
        }
        ++op;
      }
      metrics_.admitted.fetch_add(static_cast<int64_t>(result.admissions.size()));
      metrics_.preempted.fetch_add(static_cast<int64_t>(result.preemptions.size()));
      committed = true;
    }
  }
  if (batch.empty() || committed) {
    staged_.Settle(committed, metrics_.labeled);
    CountAdmissionAttempts(result, metrics_.labeled);
  }
  // 5. Publish what was committed to the agents (simulated nodes need nothing).
  if (committed) {
    for (const auto& id : changed) {
      const WorkloadRecord* r = ledger_.FindWorkload(id);
      if (r == nullptr) continue;
      if (r->state == WorkloadState::kPreempting) preempting_.insert(id);
      Publish(*r);
    }
  }
  auto cost = std::chrono::steady_clock::now() - start;
  last_cycle_cost_ = std::chrono::duration_cast<Duration>(cost);
  if (full) last_full_cycle_cost_ = last_cycle_cost_;
  metrics_.cycle_seconds.Observe(std::chrono::duration<double>(cost).count());
  metrics_.cycles.fetch_add(1);
  if (!changed.empty()) {
    ABACUS_LOG_INFO("cycle: {} admitted, {} preempted, {} pending ({:.1f} ms)", result.admissions.size(),
                    result.preemptions.size(), result.pending.size(),
                    std::chrono::duration<double, std::milli>(cost).count());
  }
}

// ---------------------------------------------------------------- reads

std::optional<WorkloadRecord> ControlPlane::FindRecord(const std::string& id_or_name) const {
  {
    ReaderLock lock(state_mu_);
    if (const WorkloadRecord* r = ledger_.Resolve(id_or_name)) return *r;
  }
  MutexLock lock(loop_mu_);
  const WorkloadRecord* best = nullptr;
  for (const auto& r : inbox_) {
    if (r.id == id_or_name) return r;
    if (r.spec.name == id_or_name) best = &r;
  }
  if (best != nullptr) return *best;
  return std::nullopt;
}

json ControlPlane::View(const WorkloadRecord& r) const {
  json j = ToJson(r);
  // Uploaded results files are read through GET /api/v1/evaluations; here only their size.
  for (json& p : j["placements"]) {
    if (!p.contains("results")) continue;
    p["resultsBytes"] = p["results"].get_ref<const std::string&>().size();
    p.erase("results");
  }
  j.erase("spec");
  j["spec"] = abacus::ToJson(r.spec);
  j["submittedAt"] = FormatTime(r.submitted);
  if (ToMicros(r.admitted_at) != 0) j["admittedAt"] = FormatTime(r.admitted_at);
  if (ToMicros(r.finished_at) != 0) j["finishedAt"] = FormatTime(r.finished_at);
  if (std::string held = r.waiting() ? ledger_.HoldReason(r) : ""; !held.empty()) {
    j["pendingReason"] = {{"code", HoldCode(r)}, {"message", held}};  // an operator's hold (fleet.h)
  } else if (r.waiting()) {
    auto it = ledger_.pending_reasons().find(r.id);
    if (it != ledger_.pending_reasons().end()) {
      j["pendingReason"] = {{"code", sched::PendingCodeName(it->second.code)},
                            {"message", it->second.message},
                            {"position", it->second.position}};
    } else if (auto lr = ledger_.ledger_reasons().find(r.id); lr != ledger_.ledger_reasons().end()) {
      j["pendingReason"] = {{"code", "Unschedulable"}, {"message", lr->second}};
    }
  }
  // What the kind's controller keeps: batch progress, replicas and rollout, idle notice, …
  json status = control::Describe(ViewOf(r), r.controller_state);
  if (!status.is_object()) status = json::object();
  if (IsElastic(r) && r.holds_quota()) {
    status["wantedUnits"] = WantedUnits(r);
    status["placedUnits"] = PlacedUnits(r).size();
    json unplaced = json::array();
    for (int32_t unit : MissingUnits(r)) {
      json u = {{"unit", unit}};
      auto it = ledger_.pending_reasons().find(SliceId(r.id, unit));
      if (it != ledger_.pending_reasons().end()) {
        // The replica's own reason with what stopped it on the nodes (filters and best candidate).
        u["reason"] = it->second.message +
                      (it->second.placement ? ": " + sched::DescribePlacement(*it->second.placement) : std::string());
      }
      unplaced.push_back(std::move(u));
    }
    if (!unplaced.empty()) status["unplaced"] = std::move(unplaced);
    if (std::set<int32_t> outside = UnitsOutsidePool(r, ledger_); !outside.empty()) {
      status["outsidePool"] = {{"pool", ReservationPool(r)}, {"replicas", outside}, {"message", OutsidePoolLine(r, ledger_)}};
    }
  }
  if (!status.empty()) j["status"] = std::move(status);
  return j;
}

Result<json> ControlPlane::GetWorkload(const std::string& id_or_name) const {
  auto r = FindRecord(id_or_name);
  if (!r) return NotFound("workload '" + id_or_name + "' not found");
  ReaderLock lock(state_mu_);
  return View(*r);
}

json ControlPlane::ListWorkloads(const WorkloadFilter& f) const {
  std::vector<WorkloadRecord> pending_ingest;
  {
    MutexLock lock(loop_mu_);
    pending_ingest = inbox_;
  }
  ReaderLock lock(state_mu_);
  std::vector<const WorkloadRecord*> rows;
  auto match = [&](const WorkloadRecord& r) {
    if (!f.queue.empty() && r.spec.queue != f.queue) return false;
    if (!f.state.empty() && WorkloadStateName(r.state) != f.state) return false;
    if (!f.project.empty() && r.spec.project != f.project) return false;
    if (!f.tenant.empty() && r.spec.tenant() != f.tenant) return false;
    if (!f.kind.empty() && WorkloadKindName(r.spec.kind()) != f.kind) return false;
    if (!f.name.empty() && r.spec.name != f.name) return false;
    if (f.ids != nullptr && !f.ids->contains(r.id)) return false;
    if (!f.user.empty() && r.submitted_by != f.user) return false;
    if (!f.selector.Matches(r.spec.labels)) return false;
    if (f.visible && !f.visible(r.spec)) return false;
    return true;
  };
  if (f.ids != nullptr) {  // a watch's changes: look them up, not a scan of every workload
    for (const std::string& id : *f.ids) {
      const WorkloadRecord* r = ledger_.FindWorkload(id);
      if (r != nullptr && match(*r)) rows.push_back(r);
    }
  } else {
    for (const auto& [id, r] : ledger_.workloads()) {
      if (match(r)) rows.push_back(&r);
    }
  }
  for (const auto& r : pending_ingest) {
    if (ledger_.FindWorkload(r.id) == nullptr && match(r)) rows.push_back(&r);
  }
  std::sort(rows.begin(), rows.end(), [](const WorkloadRecord* a, const WorkloadRecord* b) {
    return a->submitted != b->submitted ? a->submitted < b->submitted : a->id < b->id;
  });
  json items = json::array();
  size_t total = rows.size();
  size_t first = total > f.limit ? total - f.limit : 0;  // the newest `limit`
  for (size_t i = first; i < total; ++i) {
    json v = View(*rows[i]);
    v.erase("spec");
    if (!rows[i]->spec.labels.empty()) v["labels"] = rows[i]->spec.labels;  // for selectors (cancel -l)
    items.push_back(std::move(v));
  }
  return {{"items", std::move(items)}, {"total", total}};
}

Result<json> ControlPlane::Explain(const std::string& id_or_name) const {
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  ReaderLock lock(state_mu_);
  const WorkloadRecord& r = *rec;
  json j = {{"id", r.id}, {"name", r.spec.name}, {"queue", r.spec.queue}, {"state", WorkloadStateName(r.state)}};
  std::string text;
  if (std::string held = r.waiting() ? ledger_.HoldReason(r) : ""; !held.empty()) {
    j["reason"] = {{"code", HoldCode(r)}, {"message", held}};  // an operator's hold (fleet.h)
    text = held;
  } else if (r.waiting()) {
    auto it = ledger_.pending_reasons().find(r.id);
    if (it != ledger_.pending_reasons().end()) {
      // Waited: as of now, not as of the cycle that gave the reason.
      sched::PendingReason pr = it->second;
      const Duration waited_before = pr.waited;
      pr.waited = std::max(Duration(0), clock_.Now() - r.submitted);
      if (pr.overrun.count() > 0) pr.overrun += pr.waited - waited_before;
      j["reason"] = {{"code", sched::PendingCodeName(pr.code)},
                     {"message", pr.message},
                     {"position", pr.position},
                     {"ahead", pr.ahead},
                     {"aheadIds", pr.ahead_ids},
                     {"basePriority", pr.base_priority},
                     {"effectivePriority", pr.effective_priority},
                     {"waitedSeconds", std::chrono::duration_cast<std::chrono::seconds>(pr.waited).count()}};
      if (pr.quota) j["reason"]["quota"] = DescribeQuota(*pr.quota, r.spec.queue);
      if (pr.placement) j["reason"]["placement"] = DescribePlacement(*pr.placement);
      if (!pr.preemption.empty()) j["reason"]["preemption"] = pr.preemption;
      if (!pr.fair_share.empty()) j["reason"]["fairShare"] = pr.fair_share;
      text = DescribePending(pr);
    } else if (auto lr = ledger_.ledger_reasons().find(r.id); lr != ledger_.ledger_reasons().end()) {
      j["reason"] = {{"code", "Unschedulable"}, {"message", lr->second}};
      text = lr->second;
    } else {
      text = "waiting for the next scheduling cycle";
    }
  } else if (r.holds_quota()) {
    json placements = json::array();
    std::map<std::string, std::vector<std::string>> by_node;
    for (const auto& p : r.placements) {
      std::string devs;
      for (const auto& d : p.devices) {
        if (!devs.empty()) devs += ",";
        devs += std::to_string(d.index) + (d.milli < 1000 ? "(" + std::to_string(d.milli) + "m)" : "");
      }
      std::string group = p.group < static_cast<int>(r.spec.spec.task_groups.size())
                              ? r.spec.spec.task_groups[p.group].name
                              : std::to_string(p.group);
      by_node[p.node].push_back(group + "[" + std::to_string(p.replica) + "]" + (devs.empty() ? "" : " devices " + devs));
      placements.push_back({{"group", group}, {"replica", p.replica}, {"node", p.node}, {"devices", devs}});
    }
    j["placements"] = placements;
    j["flavors"] = r.group_flavors;
    text = std::string(WorkloadStateName(r.state)) + " at " + FormatTime(r.admitted_at) + " on flavors ";
    for (size_t i = 0; i < r.group_flavors.size(); ++i) text += (i ? ", " : "") + r.group_flavors[i];
    text += "\n";
    for (const auto& [node, tasks] : by_node) {
      text += "  " + node + ": ";
      for (size_t i = 0; i < tasks.size(); ++i) text += (i ? "; " : "") + tasks[i];
      text += "\n";
    }
    if (r.state == WorkloadState::kAdmitted) {
      text += "Admitted: its tasks start when the agents of these nodes run them (nodes without an agent are "
              "simulated and run nothing).";
    }
    if (!r.message.empty()) text += "\n" + r.message;
    if (std::string outside = OutsidePoolLine(r, ledger_); !outside.empty()) text += "\n" + outside;
  } else {
    text = std::string(WorkloadStateName(r.state)) + (r.message.empty() ? "" : ": " + r.message);
  }
  j["text"] = text;
  return j;
}

Result<json> ControlPlane::Events(const std::string& id_or_name) const {
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  ABACUS_ASSIGN_OR_RETURN(auto events, store_->Events(kWorkloadKind, rec->id));
  json items = json::array();
  for (const auto& e : events) {
    json detail = json::parse(e.json, nullptr, false);
    items.push_back({{"seq", e.seq}, {"time", FormatTime(FromMicros(e.time_us))}, {"timeUs", e.time_us},
                     {"type", e.type}, {"details", detail}});
  }
  return json{{"id", rec->id}, {"items", items}};
}

json ControlPlane::ListNodes(const std::function<bool(const Workload&)>& visible) const {
  std::unordered_map<std::string, Time> seen;  // the agents' last requests (node_liveness.h)
  std::map<std::string, std::map<int, double>> utilization;  // the agents' last reports
  {
    MutexLock seen_lock(seen_mu_);
    seen = last_seen_;
    utilization = utilization_;
  }
  const Time now = clock_.Now();
  ReaderLock lock(state_mu_);
  auto usage = ledger_.DeviceUsage();
  DeviceHoldings holdings = HoldingsAsSeenBy(ledger_.workloads(), visible);
  std::map<std::string, std::pair<int64_t, int64_t>> cpu_mem;
  std::map<std::string, std::map<std::string, int64_t>> extended_used;  // node → name → held
  for (const auto& [id, r] : ledger_.workloads()) {
    if (!r.holds_quota()) continue;
    for (const auto& p : r.placements) {
      cpu_mem[p.node].first += p.cpu_milli;
      cpu_mem[p.node].second += p.memory_bytes;
      for (const auto& [xname, amount] : ExtendedHeld(r, p)) extended_used[p.node][xname] += amount;
    }
  }
  json items = json::array();
  for (const auto& [name, n] : ledger_.nodes()) {
    json j = ToJson(n);
    int64_t free_milli = 0;
    const auto node_holdings = holdings.find(name);
    const auto node_util = utilization.find(name);
    for (auto& d : j["devices"]) {
      const int index = d["index"].get<int>();
      int32_t used = 0;
      if (auto it = usage.find(name); it != usage.end()) {
        if (auto u = it->second.find(index); u != it->second.end()) used = u->second;
      }
      d["allocatedMilli"] = used;
      free_milli += d["health"] == "Healthy" ? 1000 - used : 0;
      json holders = json::array();
      int32_t hidden = 0;
      if (node_holdings != holdings.end()) {
        if (auto h = node_holdings->second.devices.find(index); h != node_holdings->second.devices.end()) {
          for (const DeviceHolder& x : h->second.holders) {
            holders.push_back({{"workload", x.workload}, {"name", x.name}, {"milli", x.milli}});
          }
          hidden = h->second.hidden_milli;
        }
      }
      d["holders"] = std::move(holders);
      d["hiddenMilli"] = hidden;
      if (node_util != utilization.end()) {
        if (auto u = node_util->second.find(index); u != node_util->second.end()) d["utilization"] = u->second;
      }
    }
    j["allocatedCpuMilli"] = cpu_mem[name].first;
    j["allocatedMemoryBytes"] = cpu_mem[name].second;
    if (auto x = extended_used.find(name); x != extended_used.end()) j["allocatedExtended"] = x->second;
    j["freeDeviceMilli"] = free_milli;
    j["hiddenCpuMilli"] = node_holdings == holdings.end() ? 0 : node_holdings->second.hidden_cpu_milli;
    j["hiddenMemoryBytes"] = node_holdings == holdings.end() ? 0 : node_holdings->second.hidden_memory_bytes;
    auto heard = seen.find(name);
    AddLiveness(j, heard == seen.end() ? std::nullopt : std::optional<Time>(heard->second), now,
                options_.heartbeat_interval);
    items.push_back(std::move(j));
  }
  return {{"items", items}};
}

Result<json> ControlPlane::GetNode(const std::string& name,
                                   const std::function<bool(const Workload&)>& visible) const {
  json all = ListNodes(visible);
  for (auto& n : all["items"]) {
    if (n["name"] == name) return n;
  }
  return NotFound("node '" + name + "' not found");
}

json ControlPlane::ListDevices() const {
  json nodes = ListNodes();
  json items = json::array();
  for (const auto& n : nodes["items"]) {
    for (auto d : n["devices"]) {
      // Who holds a device is told per caller on /api/v1/nodes only; this list names no workload.
      d.erase("holders");
      d.erase("hiddenMilli");
      d["node"] = n["name"];
      d["pool"] = n["pool"];
      items.push_back(std::move(d));
    }
  }
  return {{"items", items}};
}

json ControlPlane::ListFlavors() const {
  json nodes = ListNodes();
  ReaderLock lock(state_mu_);
  std::map<std::string, json> by;
  auto entry = [&](const std::string& f) -> json& {
    auto it = by.find(f);
    if (it == by.end()) {
      json j = {{"name", f}, {"weight", 1.0}, {"devices", 0}, {"freeMilli", 0}, {"nodes", 0}, {"description", ""}};
      if (auto fl = Flavor::Parse(f); fl.ok()) {
        if (const FlavorConfig* c = ledger_.config().FindFlavor(f)) {
          j["weight"] = static_cast<double>(c->weight_milli) / 1000.0;
          j["description"] = c->description;
        }
      }
      it = by.emplace(f, j).first;
    }
    return it->second;
  };
  for (const FlavorConfig* c : ledger_.config().flavors()) entry(c->flavor.name());
  for (const auto& n : nodes["items"]) {
    std::set<std::string> seen;
    for (const auto& d : n["devices"]) {
      json& e = entry(d["flavor"].get<std::string>());
      e["devices"] = e["devices"].get<int>() + 1;
      if (d["health"] == "Healthy") e["freeMilli"] = e["freeMilli"].get<int64_t>() + 1000 - d["allocatedMilli"].get<int64_t>();
      if (seen.insert(d["flavor"].get<std::string>()).second) e["nodes"] = e["nodes"].get<int>() + 1;
    }
  }
  json items = json::array();
  for (auto& [name, j] : by) items.push_back(j);
  return {{"items", items}};
}

json ControlPlane::ListQueues() const {
  ReaderLock lock(state_mu_);
  struct Counts {
    int pending = 0, admitted = 0;
    std::map<std::string, int64_t> used;  // resource name → ledger amount
  };
  std::map<std::string, Counts> counts;
  for (const auto& [id, r] : ledger_.workloads()) {
    Counts& c = counts[r.spec.queue];
    if (r.waiting()) ++c.pending;
    if (r.holds_quota()) {
      ++c.admitted;
      for (const auto& p : r.placements) {
        c.used["cpu"] += p.cpu_milli;
        c.used["memory"] += p.memory_bytes;
        for (const auto& [xname, amount] : ExtendedHeld(r, p)) c.used[xname] += amount;
        std::string flavor = p.group < static_cast<int>(r.group_flavors.size()) ? r.group_flavors[p.group] : "cpu";
        for (const auto& d : p.devices) c.used[flavor] += d.milli;
      }
    }
  }
  json items = json::array();
  for (const Queue* q : ledger_.config().queues()) {
    json j = abacus::ToJson(SpecObject(*q));
    Counts& c = counts[q->name];
    j["pending"] = c.pending;
    j["admitted"] = c.admitted;
    if (auto s = ledger_.suspended_queues().find(q->name); s != ledger_.suspended_queues().end()) {
      j["suspended"] = {{"by", s->second.by}, {"since", FormatTime(s->second.since)}};  // abacus suspend queue
    }
    json usage = json::array();
    for (const auto& quota : q->quotas) {
      std::string res = quota.resource.Name();
      int64_t used = c.used[res];
      int64_t nominal = LedgerAmount(quota.resource, quota.nominal);
      json u = {{"resource", res}, {"used", used}, {"nominal", nominal}};
      if (quota.borrowing_limit) u["borrowingLimit"] = LedgerAmount(quota.resource, *quota.borrowing_limit);
      usage.push_back(u);
    }
    j["usage"] = usage;
    items.push_back(std::move(j));
  }
  AddBorrowingNow(ledger_.config(), items);  // borrowed from whom, lent to whom (quota_view.h)
  return {{"items", items}};
}

Result<json> ControlPlane::GetQueue(const std::string& name) const {
  json all = ListQueues();
  for (auto& q : all["items"]) {
    if (q["name"] == name) return q;
  }
  return NotFound("queue '" + name + "' not found");
}

json ControlPlane::ListConfig(const std::string& kind) const {
  if (kind == "cluster") return ListClusters();
  ReaderLock lock(state_mu_);
  json items = json::array();
  if (kind == "priorityclass") {
    std::set<std::string> configured;
    for (const PriorityClass* pc : ledger_.config().priority_classes()) {
      items.push_back(abacus::ToJson(SpecObject(*pc)));
      configured.insert(pc->name);
    }
    for (const PriorityClass& pc : DefaultPriorityClasses()) {
      if (configured.count(pc.name)) continue;
      json j = abacus::ToJson(SpecObject(pc));
      j["default"] = true;
      items.push_back(j);
    }
    return {{"items", items}};
  }
  std::map<std::string, json> projects_of;  // tenant → its project names, built once
  if (kind == "tenant") {
    for (const Project* p : ledger_.config().projects()) {
      auto [it, added] = projects_of.try_emplace(p->tenant, json::array());
      it->second.push_back(p->name);
    }
  }
  for (const auto& [key, obj] : ledger_.config_objects()) {
    if (StoreKindOf(obj) != kind) continue;
    json j = abacus::ToJson(obj);
    if (kind == "tenant") {
      auto it = projects_of.find(std::get<Tenant>(obj).name);
      j["projects"] = it == projects_of.end() ? json::array() : std::move(it->second);
    }
    items.push_back(std::move(j));
  }
  if (kind == "pool") AddPoolTenants(ledger_, items);  // each pool's tenants and nodes (quota_view.h)
  if (kind == "reservation") {  // each one's window in force or next and the nodes it holds
    const auto held = ledger_.ReservationNodes();
    const auto all = ledger_.config().reservations();
    for (auto& item : items) {
      for (size_t i = 0; i < all.size() && i < held.size(); ++i) {
        if (all[i]->name == item.value("name", "")) AddReservationStatus(*all[i], held[i], clock_.Now(), item);
      }
    }
  }
  return {{"items", items}};
}

Result<json> ControlPlane::GetConfig(const std::string& kind, const std::string& name) const {
  json all = ListConfig(kind);
  for (auto& o : all["items"]) {
    std::string n = o.value("name", "");
    if (kind == "project") n = o.value("tenant", "") + "/" + n;
    if (n == name || (kind == "project" && o.value("name", "") == name)) return o;
  }
  return NotFound(kind + " '" + name + "' not found");
}

}  // namespace abacus::server

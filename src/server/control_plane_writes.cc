// ControlPlane: the write path of client requests (submit, apply, cancel, scale, nodes) and the
// one commit every write goes through (Commit: batch, audit entry, change feed).
#include "server/control_plane.h"
#include "server/control_plane_commands.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <future>
#include <iterator>
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
#include "server/reservations.h"
#include "server/reserved_pool.h"
#include "server/workload_checks.h"
#include "server/workload_update.h"
#include "server/write_views_json.h"
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
    JsonTextProblem syntax = JsonSyntaxProblem(body);  // where and why, without the body's bytes
    out.diagnostics.Add(filename, syntax.line, "", "request body is " + syntax.message);
    return out;
  }
  std::vector<json> items;
  if (j.is_array()) {
    items.assign(std::make_move_iterator(j.begin()), std::make_move_iterator(j.end()));  // no copy
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
  if (!out.diagnostics.empty()) {
    // The fast JSON path keeps no positions: a body that did not decode is read again with them,
    // so its problems name their line as a YAML file's do (`job.json:7: spec.command: …`).
    ParsedDocuments located = ParseJsonDocumentsWithLines(body, filename);
    if (!located.diagnostics.empty()) out.diagnostics = std::move(located.diagnostics);
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- writes

Result<Keyed<SubmitView>> ControlPlane::Submit(std::string_view body, bool json_body,
                                               const std::string& filename, const govern::Principal* caller,
                                               const IdempotentRequest& request, bool dry_run,
                                               RequestContext* context) {
  // A repeat of a keyed request returns the first answer (issue 20): nothing is submitted twice.
  std::shared_ptr<IdempotentWrite> keyed;
  if (!dry_run) {
    ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed, context));
    if (replay) return Keyed<SubmitView>{{}, std::move(replay)};
    // A concurrent repeat waits for the first to be done, then replays its answer (it would
    // otherwise race it past the lookup and be refused "already exists").
    if (keyed->HoldKeyInFlight()) {
      ABACUS_ASSIGN_OR_RETURN(bool repeat, keyed->Check(clock_.Now()));
      if (repeat) {
        NoteRequestReplayed(context, request.key);
        return Keyed<SubmitView>{{}, keyed->first_answer()};
      }
    }
  }
  ParsedDocuments parsed = ParseBody(body, json_body, filename);
  Diagnostics& diags = parsed.diagnostics;
  for (const Document& d : parsed.documents) {
    if (d.workload() == nullptr) {
      diags.Add(d.source.file, d.source.line, "kind",
                "kind " + std::string(d.kind()) + " is configuration: use `abacus apply` (POST /api/v1/apply)");
    }
  }
  // Who may create what, by the names alone, before any reference is looked up: another
  // tenant's project is refused exactly as a missing one of that tenant would be.
  ABACUS_RETURN_IF_ERROR(governance_->AuthorizeSubmit(caller, parsed.documents, context));
  if (diags.empty() && parsed.documents.empty()) return InvalidArgument(filename + ": no workload documents");
  // References, roles and admission, secrets (workload_checks.h), against the configuration as
  // it is now, without the state lock: a submission never waits for the scheduling loop.
  ABACUS_RETURN_IF_ERROR(
      CheckWorkloads({*governance_, *secrets_, *ledger_.ConfigSnapshot()}, caller, parsed.documents, diags, context));
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
    Keyed<SubmitView> out;
    ABACUS_ASSIGN_OR_RETURN(out.answer.dry_run, DryRunExplain(records));
    return out;
  }
  // Every write waits at the one committer.
  if (governance_->committer().queued() > options_.max_queued_commits) {
    metrics_.rejected_busy.fetch_add(1);
    return ResourceExhausted("server busy: too many writes waiting for the store; retry");
  }
  std::vector<WorkloadRecord> records;
  std::vector<OpRef> puts;  // records[i]'s Put: its version after the commit
  WriteBatch batch;
  Time now = clock_.Now();
  for (Document& d : parsed.documents) {
    WorkloadRecord r;
    r.id = ids_.Next("wl");
    r.spec = std::move(std::get<Workload>(d.object));
    r.submitted = now;
    if (caller != nullptr) r.submitted_by = caller->name;
    puts.push_back(batch.PutJson(kWorkloadKind, r.id, ToJson(r), 0).LastOp());
    batch.AppendEventJson(kWorkloadKind, r.id, "Submitted",
                          EventJson(WorkloadState::kPending, "submitted to queue " + r.spec.queue), now);
    records.push_back(std::move(r));
  }
  // The request's audit entry (ids and states, as the answer lists them) commits with the
  // workloads: one commit to wait for, not two.
  json summary = json::array();
  for (const auto& r : records) summary.push_back({{"id", r.id}, {"state", "Pending"}});
  CommitResult result;
  std::optional<govern::AuditRecord> entry = RequestAuditRecord(context, summary.dump());
  const bool audited = entry.has_value();
  ABACUS_RETURN_IF_ERROR(ClaimNames(records));  // one active workload per name and project
  Keyed<SubmitView> out;
  // Work that can never run is still stored (the inventory or quota may change), and the answer
  // says so now, in the scheduler's words (fit_check.h), rather than after the next cycle.
  std::shared_ptr<const FitChecker> fit = ledger_.FitCheckerSnapshot();
  for (const WorkloadRecord& r : records) {
    SubmittedView& v =
        out.answer.submitted.emplace_back(SubmittedView{r.id, r.spec.name, r.spec.kind(), r.spec.queue, {}});
    if (fit == nullptr) continue;
    if (std::string never = fit->NeverFits(r, options_.scheduler); !never.empty()) {
      v.warnings.push_back(NeverFitsWarning(never));
    }
  }
  keyed->Stage(batch, [&] { return SubmitJson(out.answer); }, now);  // the edge's encoding (write_views_json.h)
  if (Status st = Commit(batch, &result, std::move(entry)); !st.ok()) {
    ReleaseNames(records);
    // A concurrent request with the same key committed first: its answer is this one's.
    ABACUS_ASSIGN_OR_RETURN(json concurrent, keyed->AfterFailedCommit(st, clock_.Now()));
    NoteRequestReplayed(context, request.key);
    return Keyed<SubmitView>{{}, std::move(concurrent)};
  }
  if (audited) NoteRequestAudited(context);
  for (size_t i = 0; i < records.size(); ++i) records[i].version = result.AssignedTo(puts[i]);
  metrics_.submitted.fetch_add(static_cast<int64_t>(records.size()));
  inbox_.Submit(std::move(records));
  out.encoded = keyed->TakeStaged();  // keyed: the answer as stored with the commit
  return out;
}

Result<Keyed<std::vector<AppliedView>>> ControlPlane::Apply(std::string_view body, bool json_body,
                                                            const std::string& filename,
                                                            const govern::Principal* caller,
                                                            const IdempotentRequest& request, bool dry_run,
                                                            RequestContext* context, std::string_view only_kind) {
  using Items = std::vector<AppliedView>;
  // A repeat of a keyed request returns the first answer ("created", not "unchanged").
  std::shared_ptr<IdempotentWrite> keyed;
  if (!dry_run) {
    ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed, context));
    if (replay) return Keyed<Items>{{}, std::move(replay)};
  }
  ParsedDocuments parsed = ParseBody(body, json_body, filename);
  Diagnostics& diags = parsed.diagnostics;
  for (const Document& d : parsed.documents) {
    if (d.workload() != nullptr) {
      diags.Add(d.source.file, d.source.line, "kind",
                "kind " + std::string(d.kind()) + " is a workload: use `abacus submit` (POST /api/v1/workloads)");
    }
  }
  // A per-kind route (POST /api/v1/queues) takes its kind only: a Tenant sent there is refused,
  // not created.
  auto only = [&](std::string_view kind, const SourceLocation& at) {
    if (only_kind.empty() || kind == only_kind) return;
    diags.Add(at.file, at.line, "kind",
              "this route takes " + std::string(only_kind) + " documents, got " + std::string(kind) +
                  " (POST /api/v1/apply takes any kind)");
  };
  for (const Document& d : parsed.documents) only(d.kind(), d.source);
  for (const auto& e : parsed.extensions) only(e.kind, e.source);
  for (const auto& g : parsed.governance) only(g.kind(), g.source);
  if (!diags.empty()) return diags.ToStatus();
  if (parsed.documents.empty() && parsed.extensions.empty() && parsed.governance.empty()) {
    return InvalidArgument(filename + ": no documents");
  }
  std::shared_ptr<const GovernanceApply> governed;  // roles per document; users and policies
  {
    ReaderLock lock(state_mu_);
    ABACUS_ASSIGN_OR_RETURN(governed, governance_->PlanApply(caller, parsed.documents, parsed.extensions,
                                                             parsed.governance, ledger_.config(), context));
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
  auto change = [this, docs, extensions, secrets, governed, keyed, dry_run](PendingRequestAudit* audit,
                                                                          std::function<void(Result<Items>)> done) {
    commits_.SettleAll();  // it reads and changes the configuration every record is checked against
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
    if (!diags.empty()) return done(diags.ToStatus());
    std::unordered_map<std::string, const SpecObject*> held;  // "kind/name" → what the ledger holds
    held.reserve(ledger_.config_objects().size());
    for (const auto& [key, existing] : ledger_.config_objects()) held.emplace(key, &existing);
    WriteBatch batch;
    Items out;
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
      out.push_back(AppliedView{std::string(d.kind()), name, action, std::nullopt, std::nullopt});
      if (dry_run) out.back().diff = FieldDiff(before, abacus::ToJson(d.object));
    }
    auto prices = std::make_shared<std::vector<meter::PriceList>>();
    if (Status st = StagePriceLists(*extensions, batch, out, *prices); !st.ok()) return done(st);
    for (const SecretVault::Staged& s : *secrets) {
      if (s.action != "unchanged") {
        batch.PutJson(std::string(kSecretStoreKind), s.key, s.record, s.expected);  // audited per request
      }
      out.push_back(AppliedView{std::string(kSecretKind), s.summary.name, s.action, std::nullopt, s.summary});
    }
    governed->Stage(batch, out);
    if (dry_run) return done(std::move(out));  // checked and compared; nothing stored, nothing changed in memory
    keyed->Stage(batch, [&] { return ApplyJson(out); }, clock_.Now());  // the edge's encoding; also when all are unchanged
    // Once committed (at once when nothing changed), the configuration goes into the ledger.
    auto applied = [this, docs, changed, prices, governed, out = std::move(out), done](const Status& st) mutable {
      if (!st.ok()) return done(st);
      governed->Committed();
      {
        WriterLock lock(state_mu_);
        for (auto& p : *prices) price_lists_[p.name] = std::move(p);
        ledger_.PutConfigs(changed);
      }
      pacer_.Changed();
      done(std::move(out));
    };
    if (batch.empty()) return applied(Status::OK());
    CommitForRequestOnLoop(audit, std::move(batch), {},
                           [applied = std::move(applied)](const Committer::Async& c) mutable { applied(c.status); });
  };
  if (dry_run) {
    auto checked = [change](const LoopReply<Result<Items>>& reply) {
      change(reply.audit(), [reply](Result<Items> items) { reply(std::move(items)); });
    };
    ABACUS_ASSIGN_OR_RETURN(Items items, AnswerOnLoop<Result<Items>>(context, std::move(checked)));
    return Keyed<Items>{std::move(items), std::nullopt};
  }
  return RunKeyedOnLoop<Items>(context, keyed, change);
}

Result<std::optional<json>> ControlPlane::BeginKeyed(const IdempotentRequest& request,
                                                    std::shared_ptr<IdempotentWrite>* keyed, RequestContext* context) {
  *keyed = std::make_shared<IdempotentWrite>(*store_, request, options_.idempotency_ttl);
  ABACUS_ASSIGN_OR_RETURN(bool repeat, (*keyed)->Check(clock_.Now()));
  if (!repeat) return std::optional<json>();
  NoteRequestReplayed(context, request.key);
  return std::optional<json>((*keyed)->first_answer());
}

Result<std::optional<json>> ControlPlane::RunKeyedCommand(RequestContext* context,
                                                          std::shared_ptr<IdempotentWrite> keyed, KeyedChange change) {
  using Answer = Result<std::optional<json>>;
  auto replayed = std::make_shared<bool>(false);  // set on the loop before the answer
  auto command = [this, keyed, replayed, change = std::move(change)](const LoopReply<Answer>& reply) {
    // Checked again on the loop, which makes every such change one after another: a request
    // with the same key that ran meanwhile answered first (its commit settled first, when it is
    // still in flight).
    if (keyed->request().keyed()) SettleRecord(kIdempotencyKind, keyed->store_key());
    Result<bool> repeat = keyed->Check(clock_.Now());
    if (!repeat.ok()) return reply(repeat.status());
    if (*repeat) {
      *replayed = true;
      return reply(std::optional<json>(keyed->first_answer()));
    }
    change(reply.audit(), [this, keyed, replayed, reply](const Status& changed) {
      if (changed.ok()) return reply(std::optional<json>());
      // Aborted on the key's record: a request with the same key committed first off the loop;
      // its answer is this one's (or, on another route, a 409 naming it).
      Result<json> concurrent = keyed->AfterFailedCommit(changed, clock_.Now());
      if (!concurrent.ok()) return reply(concurrent.status());
      *replayed = true;
      reply(std::optional<json>(std::move(*concurrent)));
    });
  };
  Answer answer = AnswerOnLoop<Answer>(context, std::move(command));
  if (*replayed) NoteRequestReplayed(context, keyed->request().key);
  return answer;
}

template <typename T, typename F>
Result<Keyed<T>> ControlPlane::RunKeyedOnLoop(RequestContext* context, std::shared_ptr<IdempotentWrite> keyed,
                                              F change) {
  auto answer = std::make_shared<T>();
  auto run = [answer, change = std::move(change)](PendingRequestAudit* audit, Written written) mutable {
    change(audit, [answer, written = std::move(written)](Result<T>&& changed) {
      if (changed.ok()) {
        *answer = std::move(*changed);
        return written(Status::OK());
      }
      written(changed.status());
    });
  };
  ABACUS_ASSIGN_OR_RETURN(std::optional<json> replayed, RunKeyedCommand(context, keyed, std::move(run)));
  if (replayed) return Keyed<T>{T{}, std::move(replayed)};
  return Keyed<T>{std::move(*answer), keyed->TakeStaged()};
}

Result<Keyed<WorkloadView>> ControlPlane::Cancel(const std::string& id_or_name, const std::string& reason,
                                                 const IdempotentRequest& request, RequestContext* context) {
  // A repeat of a keyed request returns the first answer, also once the workload finished.
  std::shared_ptr<IdempotentWrite> keyed;
  ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed, context));
  if (replay) return Keyed<WorkloadView>{{}, std::move(replay)};
  auto change = [this, id_or_name, reason, keyed](PendingRequestAudit* audit, WorkloadViewDone done) {
    const WorkloadRecord* found = ledger_.Resolve(id_or_name);
    if (found == nullptr) return done(NotFound("workload '" + id_or_name + "' not found"));
    const std::string id = found->id;
    SettleRecord(kWorkloadKind, id);  // a working copy of what is durable
    const WorkloadRecord* r = ledger_.FindWorkload(id);
    if (!CanTransition(r->state, WorkloadState::kCancelled)) {
      return done(FailedPrecondition("workload " + r->spec.name + " (" + r->id + ") is " +
                                     (r->state == WorkloadState::kCancelled ? "already " : "") +
                                     std::string(WorkloadStateName(r->state)) + ": nothing to cancel"));
    }
    WorkloadRecord copy = *r;
    copy.message = reason.empty() ? "cancelled by user" : "cancelled: " + reason;
    // The answer is the workload as the commit leaves it, stored with it under the key (in the
    // edge's encoding: write_views_json.h).
    auto out = std::make_shared<WorkloadView>();
    CommitTransitionOnLoop(copy, WorkloadState::kCancelled, "Cancelled", json::object(),
                           [&](WriteBatch& batch, const WorkloadRecord& next) {
                             {
                               ReaderLock lock(state_mu_);
                               *out = View(next);
                             }
                             keyed->Stage(batch, [&] { return WorkloadViewJson(*out); }, clock_.Now());
                           },
                           audit, [this, id, out, done](const Status& st) {
                             if (!st.ok()) return done(st);
                             steps_.preempting.erase(id);
                             Publish(*ledger_.FindWorkload(id));  // its agents stop what still runs
                             done(std::move(*out));
                           });
  };
  return RunKeyedOnLoop<WorkloadView>(context, keyed, std::move(change));
}

Result<Keyed<WorkloadView>> ControlPlane::Scale(const std::string& id_or_name, int32_t replicas,
                                                const IdempotentRequest& request, RequestContext* context) {
  // A repeat of a keyed request returns the first answer and scales nothing again.
  std::shared_ptr<IdempotentWrite> keyed;
  ABACUS_ASSIGN_OR_RETURN(std::optional<json> replay, BeginKeyed(request, &keyed, context));
  if (replay) return Keyed<WorkloadView>{{}, std::move(replay)};
  auto change = [this, id_or_name, replicas, keyed](PendingRequestAudit* audit, WorkloadViewDone done) {
    if (Status st = ScaleOnLoop(id_or_name, replicas, *keyed, audit, done); !st.ok()) done(st);
  };
  return RunKeyedOnLoop<WorkloadView>(context, keyed, std::move(change));
}

Status ControlPlane::ScaleOnLoop(const std::string& id_or_name, int32_t replicas, IdempotentWrite& keyed,
                                 PendingRequestAudit* audit, const WorkloadViewDone& done) {
  const WorkloadRecord* found = ledger_.Resolve(id_or_name);
  if (found == nullptr) return NotFound("workload '" + id_or_name + "' not found");
  const std::string found_id = found->id;
  SettleRecord(kWorkloadKind, found_id);  // a working copy of what is durable
  found = ledger_.FindWorkload(found_id);
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
  const OpRef put = batch.PutJson(kWorkloadKind, next.id, ToJson(next), next.version).LastOp();
  batch.AppendEventJson(kWorkloadKind, next.id, elastic ? "ScaleRequested" : "Scaled", EventJson(next.state, what),
                        now);
  usage_->Stage(found, next, batch, now);
  auto out = std::make_shared<WorkloadView>();  // the workload as the commit leaves it, stored with it under the key
  {
    ReaderLock lock(state_mu_);
    *out = View(next);
  }
  keyed.Stage(batch, [&] { return WorkloadViewJson(*out); }, now);
  const std::string id = next.id;
  CommitRecordOnLoop(std::move(batch), put, std::move(next), audit, [this, id, out, done](const Status& st) {
    if (!st.ok()) return done(st);
    Publish(*ledger_.FindWorkload(id));
    done(std::move(*out));
  });
  return Status::OK();  // `done` answers once the commit settled
}

Result<NodeRecord> ControlPlane::PutNode(const json& body, RequestContext* context) {
  // Named before anything is checked: a refused node's entry names it too.
  if (body.is_object() && body.contains("name") && body["name"].is_string()) {
    NoteRequestObject(context, "node", body["name"].get<std::string>(), "");
  }
  auto rec = NodeRecordFromJson(body);
  if (!rec.ok()) return rec.status();
  auto node = std::make_shared<NodeRecord>(std::move(*rec));
  node->agent = false;
  node->credential_sha256.clear();
  return AnswerOnLoop<Result<NodeRecord>>(context, [this, node](const LoopReply<Result<NodeRecord>>& reply) {
    commits_.SettleAll();  // a node change reads what is durable
    if (ToMicros(node->node.last_heartbeat) == 0) node->node.last_heartbeat = clock_.Now();
    const NodeRecord* old = ledger_.FindNode(node->node.name);
    if (old != nullptr && old->agent) {
      return reply(FailedPrecondition("node " + node->node.name + " is run by an agent: it registers itself"));
    }
    bool existed = old != nullptr;
    node->cordon = existed ? old->cordon : NodeCordonRecord{};  // only abacus cordon/uncordon change it
    WriteBatch batch;
    const OpRef put = batch.Put(kNodeKind, node->node.name, ToJson(*node).dump()).LastOp();
    json details = {{"simulated", node->simulated}, {"devices", node->node.devices.size()}};
    AddNodeState(*node, details);  // capacity reports read the node's life back (node_history.h)
    batch.AppendEvent(kNodeKind, node->node.name, existed ? "Updated" : "Registered", details.dump(), clock_.Now());
    CommitForRequestOnLoop(reply.audit(), std::move(batch), {},
                           [this, node, put, reply](const Committer::Async& done) {
                             if (!done.status.ok()) return reply(done.status);
                             node->version = done.result.AssignedTo(put);
                             NodeRecord out = *node;
                             {
                               WriterLock lock(state_mu_);
                               ledger_.PutNode(std::move(*node));
                             }
                             pacer_.Changed();
                             reply(std::move(out));
                           });
  });
}

}  // namespace abacus::server

#include "server/secrets.h"

#include <filesystem>

#include "common/base64.h"
#include "common/ids.h"
#include "common/json_fields.h"
#include "common/log.h"
#include "common/mutex.h"
#include "server/governance.h"
#include "tenancy/tenant.h"
#include "workload/secret_doc.h"
#include "workload/secret_refs.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;

constexpr size_t kMaxSecretBytes = 1 << 20;  // all values of one secret together

std::string StoreKey(const std::string& tenant, const std::string& project, const std::string& name) {
  return (project.empty() ? tenant : project) + "/" + name;
}

std::string Identity(const json& rec, const std::string& key) {
  return rec.value("tenant", "") + "/" + rec.value("project", "") + "/" + rec.value("name", "") + "/" +
         std::to_string(rec.value("version", 0)) + "/" + key;
}

govern::Resource SecretResource(const std::string& name, const std::string& tenant, const std::string& project) {
  govern::Resource r = govern::Resource::ForTenantObject("secret", name, tenant);
  r.project = project;
  return r;
}

std::string ScopeText(const std::string& tenant, const std::string& project) {
  return project.empty() ? "tenant " + tenant : "project " + project;
}

// The secret's scope from a body or query: a project "t/p" or a tenant "t".
Result<std::pair<std::string, std::string>> Scope(const std::string& project, const std::string& tenant) {
  if (!project.empty()) {
    auto p = ParseProjectRef(project);
    if (!p.ok()) return InvalidArgument("project: " + p.status().message());
    if (!tenant.empty() && tenant != p->first) return InvalidArgument("tenant " + tenant + " is not project " + project + "'s tenant");
    return std::make_pair(p->first, project);
  }
  if (tenant.empty()) return InvalidArgument("give the secret's project (\"tenant/project\") or tenant");
  if (!IsValidName(tenant)) return InvalidArgument("tenant: '" + tenant + "' is not a valid name");
  return std::make_pair(tenant, std::string());
}

// What a stored (sealed) record shows: names, keys and version, never a value.
SecretView Summary(const json& rec) {
  SecretView out;
  out.name = rec.value("name", "");
  out.tenant = rec.value("tenant", "");
  out.project = rec.value("project", "");
  if (auto it = rec.find("data"); it != rec.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) out.keys.push_back(k);
  }
  out.version = rec.value("version", int64_t{0});
  out.created_by = rec.value("createdBy", "");
  out.created_at = FromMicros(rec.value("createdUs", int64_t{0}));
  return out;
}

std::string Text(const json& j, const char* field) {
  return j.contains(field) && j[field].is_string() ? j[field].get<std::string>() : "";
}

}  // namespace

SecretVault::SecretVault(Store& store, Governance& governance, govern::SecretKeyring keyring)
    : store_(store), governance_(governance), keyring_(std::move(keyring)) {}

Result<SecretView> SecretVault::Create(const govern::Principal& who, const json& body, RequestContext* context) {
  ABACUS_ASSIGN_OR_RETURN(Staged staged, Stage(who, body, context));
  if (staged.action != "unchanged") {
    ABACUS_RETURN_IF_ERROR(governance_.CommitRequestChange(
        WriteBatch().PutJson(std::string(kSecretStoreKind), staged.key, staged.record, staged.expected), context));
  }
  return std::move(staged.summary);
}

Result<SecretVault::Staged> SecretVault::Prepare(const govern::Principal& who, const json& body) {
  return Stage(who, body, nullptr);  // the object of the apply's entry is the apply's
}

Result<SecretVault::Staged> SecretVault::Stage(const govern::Principal& who, const json& body, RequestContext* note) {
  // `kind` too: the same document comes through apply (kind: Secret).
  ABACUS_RETURN_IF_ERROR(OnlyFields(body, {"name", "project", "tenant", "data", "stringData", "kind"},
                                    R"({"name", "project" or "tenant", "data", "stringData"})"));
  const std::string name = Text(body, "name");
  if (!IsValidName(name)) return InvalidArgument("name: '" + name + "' is not a valid name (lower-case letters, digits, '-')");
  ABACUS_ASSIGN_OR_RETURN(auto scope, Scope(Text(body, "project"), Text(body, "tenant")));
  const auto& [tenant, project] = scope;
  NoteRequestObject(note, "secret", StoreKey(tenant, project, name), tenant);
  ABACUS_RETURN_IF_ERROR(govern::Authorize(who, Action::kCreate, SecretResource(name, tenant, project)));
  std::map<std::string, std::string> values;
  size_t total = 0;
  for (const char* field : {"data", "stringData"}) {
    if (!body.contains(field)) continue;
    if (!body[field].is_object()) return InvalidArgument(std::string(field) + ": expected a mapping of key to value");
    for (const auto& [k, v] : body[field].items()) {
      // Messages name the key, never the value.
      if (!IsValidSecretKey(k)) return InvalidArgument(std::string(field) + ": key '" + k + "' must be 1-253 of [A-Za-z0-9._-]");
      if (!v.is_string()) return InvalidArgument(std::string(field) + "." + k + ": expected a string");
      std::optional<std::string> value = v.get<std::string>();
      if (std::string_view(field) == "data") {
        value = Base64Decode(*value);
        if (!value) return InvalidArgument("data." + k + ": not valid base64 (use stringData for text)");
      }
      if (!values.emplace(k, *value).second) return InvalidArgument("key '" + k + "' is in both data and stringData");
      total += value->size();
    }
  }
  if (values.empty()) return InvalidArgument("a secret needs at least one key in data or stringData");
  if (total > kMaxSecretBytes) return InvalidArgument("secret " + name + ": values hold more than 1 MiB together");
  Staged out;
  out.key = StoreKey(tenant, project, name);
  ABACUS_ASSIGN_OR_RETURN(auto existing, store_.Get(kSecretStoreKind, out.key));
  int64_t version = 1;
  out.expected = 0;
  std::string action = "created";
  if (existing) {
    json old = json::parse(existing->json, nullptr, false);
    version = (old.is_object() ? old.value("version", int64_t{0}) : 0) + 1;
    out.expected = existing->version;
    action = "configured";
    if (old.is_object()) {
      // The same keys and values: nothing to write (an apply of an unchanged file).
      auto held = Open(Found{out.key, old});
      if (held.ok() && *held == values) {
        out.record = std::move(old);
        action = "unchanged";
      }
    }
  }
  if (action != "unchanged") {
    out.record = {{"tenant", tenant}, {"project", project}, {"name", name}, {"version", version},
                  {"createdUs", ToMicros(governance_.clock().Now())}, {"createdBy", who.name}};
    json data = json::object();
    for (const auto& [k, v] : values) data[k] = govern::SealSecret(keyring_, Identity(out.record, k), v);
    out.record["data"] = std::move(data);
  }
  out.summary = Summary(out.record);
  out.action = action;
  return out;
}

Result<SecretVault::Found> SecretVault::Lookup(const govern::Principal& who, const std::string& name,
                                               const std::string& project, const std::string& tenant) {
  if (project.empty() && tenant.empty()) {
    // No scope: the only secret of that name `who` may see.
    ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kSecretStoreKind));
    std::vector<Found> seen;
    for (const auto& r : records) {
      json rec = json::parse(r.json, nullptr, false);
      if (!rec.is_object() || rec.value("name", "") != name) continue;
      if (!govern::MaySee(who, SecretResource(name, rec.value("tenant", ""), rec.value("project", "")))) continue;
      seen.push_back(Found{r.key, std::move(rec)});
    }
    if (seen.empty()) return NotFound("secret " + name + " not found");
    if (seen.size() > 1) {
      std::string scopes;
      for (const Found& f : seen) {
        scopes += (scopes.empty() ? "" : ", ") + ScopeText(f.record.value("tenant", ""), f.record.value("project", ""));
      }
      return FailedPrecondition("secret " + name + " is in " + scopes + ": give --project or --tenant (?project= or ?tenant=)");
    }
    return std::move(seen[0]);
  }
  ABACUS_ASSIGN_OR_RETURN(auto scope, Scope(project, tenant));
  const std::string key = StoreKey(scope.first, scope.second, name);
  const std::string missing = "secret " + name + " of " + ScopeText(scope.first, scope.second) + " not found";
  if (!govern::MaySee(who, SecretResource(name, scope.first, scope.second))) return NotFound(missing);
  ABACUS_ASSIGN_OR_RETURN(auto existing, store_.Get(kSecretStoreKind, key));
  if (!existing) return NotFound(missing);
  json rec = json::parse(existing->json, nullptr, false);
  if (!rec.is_object()) return Internal("stored secret " + key + " is not JSON");
  return Found{key, std::move(rec)};
}

Result<SecretView> SecretVault::Get(const govern::Principal& who, const std::string& name, const std::string& project,
                                   const std::string& tenant) {
  ABACUS_ASSIGN_OR_RETURN(Found f, Lookup(who, name, project, tenant));
  return Summary(f.record);
}

Result<std::vector<SecretView>> SecretVault::List(const govern::Principal& who, const std::string& project,
                                                  const std::string& tenant) {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kSecretStoreKind));
  std::vector<SecretView> items;
  for (const auto& r : records) {
    json rec = json::parse(r.json, nullptr, false);
    if (!rec.is_object()) continue;
    const std::string t = rec.value("tenant", ""), p = rec.value("project", "");
    if (!project.empty() && p != project) continue;
    if (!tenant.empty() && t != tenant) continue;
    if (!govern::MaySee(who, SecretResource(rec.value("name", ""), t, p))) continue;
    items.push_back(Summary(rec));
  }
  return items;
}

Result<SecretDeletedView> SecretVault::Delete(const govern::Principal& who, const std::string& name,
                                              const std::string& project, const std::string& tenant,
                                              RequestContext* context) {
  ABACUS_ASSIGN_OR_RETURN(Found f, Lookup(who, name, project, tenant));
  const std::string t = f.record.value("tenant", ""), p = f.record.value("project", "");
  NoteRequestObject(context, "secret", f.key, t);
  ABACUS_RETURN_IF_ERROR(govern::Authorize(who, Action::kDelete, SecretResource(name, t, p)));
  ABACUS_RETURN_IF_ERROR(
      governance_.CommitRequestChange(WriteBatch().Delete(std::string(kSecretStoreKind), f.key), context));
  return SecretDeletedView{name, t, p};
}

Status CheckSecretsKeyAtStart(Store& store, const std::string& key_file) {
  std::error_code ec;
  if (std::filesystem::exists(key_file, ec) || ec) return Status::OK();  // an unreadable one: the load says why
  ABACUS_ASSIGN_OR_RETURN(auto records, store.List(kSecretStoreKind));
  if (records.empty()) return Status::OK();  // a first start, or no secret yet: a key is made
  return FailedPrecondition(
      "secrets key " + key_file + " is missing but the store holds " + std::to_string(records.size()) +
      " secret(s) sealed with it (e.g. " + records.front().key +
      "): put the key file back from its backup (docs/operations.md, \"Backup and restore\"); if it is lost, write "
      "a new one (openssl rand -hex 32 > " + key_file + "; chmod 600 " + key_file +
      "), start, and create those secrets again — their old values cannot be opened");
}

Result<std::vector<std::string>> SecretVault::SealedWithKeysNotHeld() const {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kSecretStoreKind));
  std::vector<std::string> out;
  for (const auto& r : records) {
    json rec = json::parse(r.json, nullptr, false);
    if (!rec.is_object() || !rec.contains("data") || !rec["data"].is_object()) continue;
    for (const auto& [k, v] : rec["data"].items()) {
      const std::string id = v.is_string() ? govern::SealedKeyId(v.get<std::string>()) : "";
      if (!keyring_.Has(id)) {
        out.push_back(r.key + " (key " + (id.empty() ? "unknown" : id) + ")");
        break;
      }
    }
  }
  return out;
}

Result<SecretsReencryptedView> SecretVault::Reencrypt(const govern::Principal& who, RequestContext* context) {
  if (!who.HasRole(Role::kAdmin)) return PermissionDenied(who.ToString() + " may not re-encrypt secrets (admins only)");
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kSecretStoreKind));
  WriteBatch batch;
  int64_t changed = 0;
  for (const auto& r : records) {
    json rec = json::parse(r.json, nullptr, false);
    if (!rec.is_object() || !rec.contains("data")) continue;
    bool stale = false;
    for (const auto& [k, v] : rec["data"].items()) stale |= govern::SealedKeyId(v.get<std::string>()) != keyring_.active_id();
    if (!stale) continue;
    for (auto& [k, v] : rec["data"].items()) {
      ABACUS_ASSIGN_OR_RETURN(std::string plain, govern::OpenSecret(keyring_, Identity(rec, k), v.get<std::string>()));
      v = govern::SealSecret(keyring_, Identity(rec, k), plain);
    }
    batch.PutJson(std::string(kSecretStoreKind), r.key, rec, r.version);
    ++changed;
  }
  if (changed > 0) ABACUS_RETURN_IF_ERROR(governance_.CommitRequestChange(batch, context));
  return SecretsReencryptedView{changed, keyring_.active_id()};
}

Result<SecretVault::Found> SecretVault::Resolve(const std::string& project, const std::string& name) {
  const std::string tenant = project.substr(0, project.find('/'));
  for (const std::string& key : {StoreKey(tenant, project, name), StoreKey(tenant, "", name)}) {
    ABACUS_ASSIGN_OR_RETURN(auto r, store_.Get(kSecretStoreKind, key));
    if (!r) continue;
    json rec = json::parse(r->json, nullptr, false);
    if (!rec.is_object()) return Internal("stored secret " + key + " is not JSON");
    return Found{key, std::move(rec)};
  }
  return FailedPrecondition("secret " + name + " not found in project " + project + " or tenant " + tenant +
                            ": create it first (abacus secret create " + name + " -p " + project + " ..., or kind: Secret in abacus apply)");
}

Result<std::map<std::string, std::string>> SecretVault::Open(const Found& f) {
  std::map<std::string, std::string> out;
  const json data = f.record.value("data", json::object());
  for (const auto& [k, v] : data.items()) {
    if (!v.is_string()) return Internal("stored secret " + f.key + ": value of key " + k + " is not sealed text");
    ABACUS_ASSIGN_OR_RETURN(out[k], govern::OpenSecret(keyring_, Identity(f.record, k), v.get<std::string>()));
  }
  return out;
}

Status SecretVault::CheckReferences(const Workload& w) {
  std::map<std::string, std::set<std::string>> keys;  // secret → keys named
  for (const std::string& s : w.spec.SecretNames()) keys[s];
  for (const SecretEnvVar& v : w.spec.secret_env) keys[v.secret].insert(v.key);
  for (const auto& [name, wanted] : keys) {
    auto found = Resolve(w.project, name);
    if (!found.ok()) return found.status().WithContext("workload " + w.project + "/" + w.name);
    const json data = found->record.value("data", json::object());
    for (const std::string& k : wanted) {
      if (!data.contains(k)) {
        std::string have;
        for (const auto& [dk, dv] : data.items()) have += (have.empty() ? "" : ", ") + dk;
        return FailedPrecondition("workload " + w.project + "/" + w.name + ": secret " + name + " (" + found->key +
                                  ") has no key " + k + " (keys: " + have + ")");
      }
    }
  }
  return Status::OK();
}

std::optional<SecretReferences> SecretVault::References(const Workload& w) {
  if (w.spec.SecretNames().empty()) return std::nullopt;
  return SecretReferences{w.project, w.spec.secret_env, w.spec.env_from, w.spec.secret_mounts};
}

void SecretVault::FillAssignment(const std::string& node, const SecretReferences& refs, wire::TaskAssignment& task) {
  if (task.action != wire::TaskAction::kRun) return;
  const std::string& project = refs.project;
  std::map<std::string, std::map<std::string, std::string>> opened;
  std::map<std::string, std::string> found_keys;  // secret → store key and version, for the audit
  auto open = [&](const std::string& name) -> Result<const std::map<std::string, std::string>*> {
    if (auto it = opened.find(name); it != opened.end()) return &it->second;
    ABACUS_ASSIGN_OR_RETURN(Found f, Resolve(project, name));
    ABACUS_ASSIGN_OR_RETURN(auto values, Open(f));
    found_keys[name] = f.key + " v" + std::to_string(f.record.value("version", 0));
    return &(opened[name] = std::move(values));
  };
  std::map<std::string, std::string> env = task.env;
  std::set<std::string> secret_env;  // the variables holding a value (containers pass them by name)
  std::vector<wire::SecretFileData> files;
  json uses = json::array();
  Status st = [&]() -> Status {
    for (const std::string& s : refs.env_from) {
      ABACUS_ASSIGN_OR_RETURN(auto values, open(s));
      for (const auto& [k, v] : *values) {
        env[k] = v;
        secret_env.insert(k);
      }
      uses.push_back("envFrom " + s);
    }
    for (const SecretEnvVar& e : refs.env) {
      ABACUS_ASSIGN_OR_RETURN(auto values, open(e.secret));
      auto it = values->find(e.key);
      if (it == values->end()) {
        return FailedPrecondition("secret " + e.secret + " has no key " + e.key + " (deleted or changed after submit)");
      }
      env[e.name] = it->second;
      secret_env.insert(e.name);
      uses.push_back("env " + e.name + " = " + e.secret + "." + e.key);
    }
    for (const SecretMount& m : refs.mounts) {
      ABACUS_ASSIGN_OR_RETURN(auto values, open(m.secret));
      json keys = json::array();
      for (const auto& [k, v] : *values) {
        files.push_back(wire::SecretFileData{m.path + "/" + k, Base64Encode(v)});
        keys.push_back(k);
      }
      uses.push_back("files " + m.path + "/{" + keys.dump() + "} = " + m.secret);
    }
    return Status::OK();
  }();
  if (!st.ok()) {
    task.secret_error = st.message();  // names the secret and key, never a value
    return;
  }
  task.env = std::move(env);
  task.secret_env = std::move(secret_env);
  task.secret_files = std::move(files);
  bool first = false;
  {
    MutexLock lock(used_mu_);
    if (used_.size() > 100000) used_.clear();  // bounded: a later answer may audit a use again
    first = used_.insert(task.task_id).second;
  }
  if (!first) return;
  for (const auto& [name, key] : found_keys) {
    json after = {{"task", task.task_id}, {"node", node}, {"secret", key}, {"uses", uses}};
    governance_.AppendDecision("server", "secret-use", "secret", key, project.substr(0, project.find('/')), "",
                               after.dump());
  }
}

}  // namespace abacus::server

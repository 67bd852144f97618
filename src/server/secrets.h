// Secrets for workloads (issue 24; docs/governance.md, "Secrets"): `Secret` objects of a project
// or a tenant whose values are sealed at rest (govern/secret_box.h) with a key kept outside the
// store. The API creates, lists (names, keys, versions: never values) and deletes them; values
// are opened only to answer the agent that runs a task referencing them (FillAssignment), and
// each such use is audited once per task.
//
// Store kind `secret`, key "TENANT/NAME" (tenant-scoped) or "TENANT/PROJECT/NAME":
//   {"tenant","project","name","version","createdUs","createdBy","data":{KEY: sealed}}
// Every call reads the store (no cache): HA servers sharing a store see the same secrets.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "govern/authorize.h"
#include "govern/secret_box.h"
#include "server/assignments.h"
#include "server/request_context.h"
#include "server/secret_views.h"
#include "store/store.h"
#include "workload/workload.h"

namespace abacus::server {

class Governance;

inline constexpr std::string_view kSecretStoreKind = "secret";

// Before the secrets key is loaded or created (LoadOrCreateSecretKeyring): FailedPrecondition
// when `key_file` is missing but `store` holds secrets — a new key would be made, and none of
// them could be opened again (the fifth probe: the server started silently). The message names
// the file, how many secrets and one of them, and the two ways on (put the key back from its
// backup; or, the key lost, write a new key file, start, and create the secrets again).
Status CheckSecretsKeyAtStart(Store& store, const std::string& key_file);

class SecretVault {
 public:
  SecretVault(Store& store, Governance& governance, govern::SecretKeyring keyring);

  // The stored secrets sealed (some value) with a key this keyring does not hold, as
  // "SCOPE/NAME (key ID)": tasks naming them fail until the key is back (in secrets.key or the
  // keyring). The server warns of them at its start.
  Result<std::vector<std::string>> SealedWithKeysNotHeld() const;

  // POST /api/v1/secrets: {"name", "project": "t/p" | "tenant": "t", "data": {K: base64},
  // "stringData": {K: text}}. Creates the secret, or replaces its values as the next version.
  // Needs `create` on the secret (tenant admins in their tenant, members in their project).
  // The answer never holds a value.
  // `context`, here and below: the HTTP request served (null: none), told the secret for its
  // audit entry, which commits with the change (Governance::CommitRequestChange).
  Result<SecretView> Create(const govern::Principal& who, const nlohmann::json& body, RequestContext* context);
  // A secret checked, authorized and sealed but not yet stored: `abacus apply` (kind: Secret)
  // puts it in the batch of its other documents. `summary` and `action` ("created",
  // "configured", "unchanged": the same keys and values, nothing written) are the answer's
  // entry — never a value.
  struct Staged {
    std::string key;                   // store key
    nlohmann::json record;             // sealed
    std::optional<int64_t> expected;   // the store version it replaces (0: none)
    SecretView summary;
    std::string action;
  };
  // Checks `body` (Create's) as Create does, with the same rights, for apply: the request's
  // audit entry is the apply's.
  Result<Staged> Prepare(const govern::Principal& who, const nlohmann::json& body);
  // GET /api/v1/secrets/{name}[?project=|tenant=]: the secret's summary (names, keys, version:
  // never values). Without a scope, the one secret of that name `who` may see; 404 when `who`
  // sees none, FailedPrecondition naming the scopes when several.
  Result<SecretView> Get(const govern::Principal& who, const std::string& name, const std::string& project,
                         const std::string& tenant);
  // GET /api/v1/secrets[?project=|tenant=]: the secrets `who` may see: names, keys, versions.
  Result<std::vector<SecretView>> List(const govern::Principal& who, const std::string& project,
                                       const std::string& tenant);
  // DELETE /api/v1/secrets/{name}[?project=|tenant=]: needs `delete` on the secret; 404 when
  // `who` may not see it. Without a scope, the one secret of that name `who` may see (as Get).
  Result<SecretDeletedView> Delete(const govern::Principal& who, const std::string& name,
                                   const std::string& project, const std::string& tenant, RequestContext* context);
  // POST /api/v1/secrets/reencrypt (admins): seals every value again with the active key;
  // answers how many secrets changed. After it the old keys may leave the keyring.
  Result<SecretsReencryptedView> Reencrypt(const govern::Principal& who, RequestContext* context);

  // Submit: every Secret `w` references exists in its project (or tenant) with the keys named;
  // FailedPrecondition naming the secret, key and what to do otherwise.
  Status CheckReferences(const Workload& w);
  // The agent's assignment answer: opens the values `refs` name (DesiredTasks keeps them beside
  // each task) into `task`, a copy for this answer of a task to run on `node`: its `env` (naming
  // those variables in `secret_env`) and `secret_files`; a task whose secret cannot be opened
  // gets `secret_error` instead (the agent fails it). A task to stop gets nothing. Audits each
  // task's first use ("secret-use": secret, keys and task, never values).
  void FillAssignment(const std::string& node, const SecretReferences& refs, wire::TaskAssignment& task);

  // The references of `w` as DesiredTasks keeps them beside its tasks (none: `w` names no secret).
  static std::optional<SecretReferences> References(const Workload& w);

 private:
  struct Found {
    std::string key;  // store key
    nlohmann::json record;
  };
  // The secret `name` a workload of `project` sees: the project's, else its tenant's.
  Result<Found> Resolve(const std::string& project, const std::string& name);
  Result<std::map<std::string, std::string>> Open(const Found& f);
  // The secret `name` of the scope given, or (no scope) the only one of that name `who` may
  // see; NotFound when `who` may not see it.
  Result<Found> Lookup(const govern::Principal& who, const std::string& name, const std::string& project,
                       const std::string& tenant);
  // Prepare, telling `note` (the request of the POST route; null: none) the object for its
  // audit entry.
  Result<Staged> Stage(const govern::Principal& who, const nlohmann::json& body, RequestContext* note);

  Store& store_;
  Governance& governance_;
  govern::SecretKeyring keyring_;
  Mutex used_mu_;
  std::set<std::string> used_ GUARDED_BY(used_mu_);  // task ids whose use is audited
};

}  // namespace abacus::server

// `kind: Secret` documents for `abacus apply` (issue 24; docs/specs.md, "Secrets"): read from
// YAML or JSON into the body that POST /api/v1/secrets takes, so one SecretVault checks,
// authorizes and seals both. Problems name fields and keys, never a value.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "tenancy/yaml_reader.h"

namespace abacus {

inline constexpr char kSecretKind[] = "Secret";

// Reads one Secret document:
//   kind: Secret
//   metadata: {name: db-creds, tenant: acme, project: ml}   # or name/tenant/project at the top
//   stringData: {user: app}                                  # text values
//   data: {password: czNjcmV0}                               # base64 values
// `project` is the project's name in `tenant` or "tenant/project"; without it the secret is the
// tenant's. Returns {"kind", "name", "tenant", "project"?, "data"?, "stringData"?} (the project
// as "tenant/project"), or nullopt after reporting every problem to `ctx`.
std::optional<nlohmann::json> DecodeSecretDocument(const SpecNode& doc, SpecContext& ctx);

// Makes ParseDocuments read `kind: Secret` (RegisterExtensionKind). Idempotent.
void RegisterSecretKind();

}  // namespace abacus

#include "workload/secret_doc.h"

#include "common/base64.h"
#include "tenancy/tenant.h"
#include "workload/documents.h"
#include "workload/secret_refs.h"

namespace abacus {

using nlohmann::json;

std::optional<json> DecodeSecretDocument(const SpecNode& doc, SpecContext& ctx) {
  const int errors = ctx.errors();
  MapReader top(ctx, doc, "", {"kind", "metadata", "name", "tenant", "project", "data", "stringData"});
  if (!top.valid()) return std::nullopt;
  // The names: under metadata (as Kubernetes writes them) or at the top (as other kinds here).
  std::optional<MapReader> meta = top.Map("metadata", {"name", "tenant", "project"});
  MapReader& names = meta ? *meta : top;
  if (meta) {
    for (std::string_view field : {"name", "tenant", "project"}) {
      if (top.Has(field)) top.Error(field, "give it under metadata (metadata." + std::string(field) + "), not at the top too");
    }
  }
  std::optional<std::string> name = names.Name("name", Presence::kRequired);
  std::optional<std::string> tenant = names.Name("tenant");
  std::optional<std::string> project = names.String("project");
  json out = {{"kind", kSecretKind}};
  if (name) out["name"] = *name;
  if (project) {
    std::string full = project->find('/') == std::string::npos && tenant ? *tenant + "/" + *project : *project;
    auto ref = ParseProjectRef(full);
    if (!ref.ok()) {
      names.Error("project", project->find('/') == std::string::npos && !tenant
                                 ? "give the project as tenant/project, or the tenant too"
                                 : ref.status().message());
    } else if (tenant && ref->first != *tenant) {
      names.Error("project", "project " + full + " is not in tenant " + *tenant);
    } else {
      out["tenant"] = ref->first;
      out["project"] = full;
    }
  } else if (tenant) {
    out["tenant"] = *tenant;
  } else {
    names.Error("tenant", "give the secret's tenant (and project for a project's secret)");
  }
  bool any = false;
  for (const char* field : {"stringData", "data"}) {
    auto values = top.StringMap(field);
    if (!values) continue;
    json m = json::object();
    for (const auto& [k, v] : *values) {
      // Messages name the key, never the value.
      if (!IsValidSecretKey(k)) {
        top.Error(field, "key '" + k + "' must be 1-253 of [A-Za-z0-9._-]");
      } else if (std::string_view(field) == "data" && !Base64Decode(v)) {
        top.Error(field, "value of key '" + k + "' is not valid base64 (use stringData for text)");
      } else if (out.contains("stringData") && out["stringData"].contains(k)) {
        top.Error(field, "key '" + k + "' is in both data and stringData");
      }
      m[k] = v;
      any = true;
    }
    out[field] = std::move(m);
  }
  if (!any && ctx.errors() == errors) top.Error("stringData", "a secret needs at least one key in stringData or data");
  if (ctx.errors() != errors) return std::nullopt;
  return out;
}

void RegisterSecretKind() { RegisterExtensionKind(kSecretKind, DecodeSecretDocument); }

}  // namespace abacus

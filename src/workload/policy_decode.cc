// YAML → AdmissionPolicy and User (see governance_codec.h).
#include <set>

#include "common/ids.h"
#include "tenancy/quantity_field.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/workload.h"

namespace abacus {
namespace {

using P = Presence;

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// A registry host, optionally with a port: "registry.local", "registry.local:5000",
// "localhost:5000", "docker.io".
bool IsValidRegistry(std::string_view r) {
  if (r.empty() || r.size() > 253) return false;
  size_t colon = r.find(':');
  std::string_view host = r.substr(0, colon);
  if (host.empty()) return false;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!ok) return false;
  }
  if (host.front() == '.' || host.front() == '-' || host.back() == '.' || host.back() == '-') return false;
  if (colon != std::string_view::npos) {
    std::string_view port = r.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
    }
  }
  return true;
}

void DecodeImages(MapReader& spec, AdmissionPolicy& p) {
  auto images = spec.Map("images", {"allowedRegistries", "requireImage", "requireDigestFor"});
  if (!images) return;
  if (auto list = images->StringList("allowedRegistries")) {
    std::set<std::string> seen;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string& r = (*list)[i];
      std::string field = Index(images->Path("allowedRegistries"), i);
      if (!IsValidRegistry(r)) {
        images->ctx().Error(images->LineOf("allowedRegistries"), field,
                            "invalid registry '" + r + "' (expected a lower-case host, optionally :port)");
      } else if (!seen.insert(r).second) {
        images->ctx().Error(images->LineOf("allowedRegistries"), field, "duplicate registry '" + r + "'");
      }
    }
    p.allowed_registries = *list;
  }
  p.require_image = images->Bool("requireImage").value_or(false);
  if (auto v = DecodeNameList(*images, "requireDigestFor")) p.require_digest_for = *v;
}

void DecodeMounts(MapReader& spec, AdmissionPolicy& p) {
  auto list = spec.List("mounts");
  if (!list) return;
  std::vector<MountRule> rules;
  for (size_t i = 0; i < list->size(); ++i) {
    MapReader r(spec.ctx(), (*list)[i], Index(spec.Path("mounts"), i), {"pathPrefix", "access"});
    if (!r.valid()) continue;
    MountRule rule;
    if (auto v = r.String("pathPrefix", P::kRequired)) {
      if (Status st = CheckMountPath(*v); !st.ok()) r.Error("pathPrefix", st.message());
      rule.path_prefix = *v;
    }
    if (auto v = r.String("access", P::kRequired)) {
      if (*v == "read-write") {
        rule.read_write = true;
      } else if (*v != "read-only") {
        r.Error("access", "expected read-only or read-write, got '" + *v + "'");
      }
    }
    rules.push_back(std::move(rule));
  }
  p.mounts = std::move(rules);
}

void DecodeMaxResources(MapReader& spec, AdmissionPolicy& p) {
  auto r = spec.Map("maxResources", {"cpu", "memory", "devices"});
  if (!r) return;
  p.max_resources.cpu = BoundedQty(*r, "cpu", QuantityUnit::kCpu, P::kOptional, /*positive=*/true);
  p.max_resources.memory = BoundedQty(*r, "memory", QuantityUnit::kMemory, P::kOptional, /*positive=*/true);
  p.max_resources.devices = BoundedQty(*r, "devices", QuantityUnit::kDevices);
}

RoleBinding DecodeBinding(MapReader& r) {
  RoleBinding b;
  if (auto v = r.Parsed<Role>("role", P::kRequired, ParseRole)) b.role = *v;
  if (auto v = r.String("tenant")) b.tenant = *v;
  if (auto v = r.String("project")) b.project = *v;
  if (auto v = r.String("node")) b.node = *v;
  return b;
}

}  // namespace

bool IsGovernanceKind(std::string_view kind) { return kind == kAdmissionPolicyKind || kind == kUserKind; }

bool IsGovernanceDocument(const SpecNode& doc) {
  if (!doc.IsMap()) return false;
  const SpecNode kind = doc["kind"];
  return kind.IsDefined() && kind.IsScalar() && IsGovernanceKind(kind.Scalar());
}

std::optional<AdmissionPolicy> DecodeAdmissionPolicy(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "tenants", "spec"});
  if (!r.valid()) return std::nullopt;
  AdmissionPolicy p;
  if (auto v = r.Name("name", P::kRequired)) p.name = *v;
  if (auto v = DecodeNameList(r, "tenants")) p.tenants = *v;
  if (auto spec = r.Map("spec", {"images", "mounts", "network", "maxResources", "pools", "secrets", "priorityClasses"},
                        P::kRequired)) {
    if (auto secrets = spec->Map("secrets", {"allowed", "queues"})) {
      if (auto v = secrets->StringList("allowed", P::kRequired)) {
        for (size_t i = 0; i < v->size(); ++i) {
          // A prefix ("hf-*") is valid when some valid name starts with it.
          std::string name = (*v)[i];
          const bool prefix = !name.empty() && name.back() == '*';
          if (prefix) name.back() = 'x';
          if (!IsValidName(name)) {
            secrets->Error("allowed", "expected secret names or name prefixes ending in '*', got '" + (*v)[i] + "'");
          }
        }
        p.allowed_secrets = *v;
      }
      if (auto v = DecodeNameList(*secrets, "queues")) p.secret_queues = *v;
    }
    DecodeImages(*spec, p);
    DecodeMounts(*spec, p);
    p.network = spec->Parsed<NetworkClass>("network", P::kOptional, ParseNetworkClass);
    DecodeMaxResources(*spec, p);
    if (auto v = DecodeNameList(*spec, "pools")) p.pools = *v;
    if (auto v = DecodeNameList(*spec, "priorityClasses")) p.allowed_priority_classes = *v;
  }
  if (ctx.errors() != before) return std::nullopt;
  return p;
}

std::optional<UserSpec> DecodeUserSpec(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "displayName", "email", "roles", "disabled"});
  if (!r.valid()) return std::nullopt;
  UserSpec u;
  if (auto v = r.Name("name", P::kRequired)) u.name = *v;
  if (auto v = r.String("displayName")) u.display_name = *v;
  if (auto v = r.String("email")) u.email = *v;
  u.disabled = r.Bool("disabled").value_or(false);
  if (auto list = r.List("roles", P::kRequired)) {
    if (list->size() == 0) r.Error("roles", "needs at least one role");
    for (size_t i = 0; i < list->size(); ++i) {
      MapReader br(ctx, (*list)[i], Index(r.Path("roles"), i), {"role", "tenant", "project", "node"});
      if (!br.valid()) continue;
      int errors = ctx.errors();
      RoleBinding b = DecodeBinding(br);
      if (ctx.errors() != errors) continue;
      if (b.role == Role::kAgent) {
        br.Error("role", "agent is a node credential (abacus agent --token), not a user role");
        continue;
      }
      if (Status st = b.Validate(); !st.ok()) {
        ctx.Error(br.line(), br.path(), st.message());
        continue;
      }
      for (const auto& prev : u.roles) {
        if (prev == b) {
          ctx.Error(br.line(), br.path(), "duplicate role " + b.ToString());
          break;
        }
      }
      u.roles.push_back(std::move(b));
    }
  }
  if (ctx.errors() != before) return std::nullopt;
  return u;
}

std::optional<GovernanceObject> DecodeGovernanceObject(const SpecNode& doc, SpecContext& ctx) {
  std::string kind;
  if (IsGovernanceDocument(doc)) kind = doc["kind"].Scalar();
  if (kind == kAdmissionPolicyKind) {
    if (auto p = DecodeAdmissionPolicy(doc, ctx)) return GovernanceObject(std::move(*p));
    return std::nullopt;
  }
  if (kind == kUserKind) {
    if (auto u = DecodeUserSpec(doc, ctx)) return GovernanceObject(std::move(*u));
    return std::nullopt;
  }
  ctx.Error(doc.Line(), "kind", "expected AdmissionPolicy or User");
  return std::nullopt;
}

Result<GovernanceObject> GovernanceObjectFromJson(const nlohmann::json& j) {
  Diagnostics diags;
  SpecContext ctx("", &diags);
  auto o = DecodeGovernanceObject(SpecNode(j), ctx);
  if (!o) return diags.ToStatus();
  return std::move(*o);
}

}  // namespace abacus

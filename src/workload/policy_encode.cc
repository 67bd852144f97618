// AdmissionPolicy and User → canonical JSON (see governance_codec.h).
#include "workload/governance_codec.h"

namespace abacus {

using Json = nlohmann::ordered_json;

Json EncodeAdmissionPolicy(const AdmissionPolicy& p) {
  Json j;
  j["kind"] = kAdmissionPolicyKind;
  j["name"] = p.name;
  if (!p.tenants.empty()) j["tenants"] = p.tenants;
  Json spec = Json::object();
  if (p.allowed_registries || p.require_image || !p.require_digest_for.empty()) {
    Json images = Json::object();
    if (p.allowed_registries) images["allowedRegistries"] = *p.allowed_registries;
    if (p.require_image) images["requireImage"] = true;
    if (!p.require_digest_for.empty()) images["requireDigestFor"] = p.require_digest_for;
    spec["images"] = std::move(images);
  }
  if (p.mounts) {
    Json list = Json::array();
    for (const auto& m : *p.mounts) {
      list.push_back(Json{{"pathPrefix", m.path_prefix}, {"access", m.read_write ? "read-write" : "read-only"}});
    }
    spec["mounts"] = std::move(list);
  }
  if (p.network) spec["network"] = NetworkClassName(*p.network);
  const ResourceCeiling& c = p.max_resources;
  if (c.cpu || c.memory || c.devices) {
    Json m = Json::object();
    if (c.cpu) m["cpu"] = c.cpu->ToString();
    if (c.memory) m["memory"] = c.memory->ToString();
    if (c.devices) m["devices"] = c.devices->ToString();
    spec["maxResources"] = std::move(m);
  }
  if (!p.pools.empty()) spec["pools"] = p.pools;
  if (p.allowed_priority_classes) spec["priorityClasses"] = *p.allowed_priority_classes;
  if (p.allowed_secrets) {
    Json secrets = Json::object();
    secrets["allowed"] = *p.allowed_secrets;
    if (!p.secret_queues.empty()) secrets["queues"] = p.secret_queues;
    spec["secrets"] = std::move(secrets);
  }
  j["spec"] = std::move(spec);
  return j;
}

Json EncodeUserSpec(const UserSpec& u) {
  Json j;
  j["kind"] = kUserKind;
  j["name"] = u.name;
  if (!u.display_name.empty()) j["displayName"] = u.display_name;
  if (!u.email.empty()) j["email"] = u.email;
  Json roles = Json::array();
  for (const auto& b : u.roles) {
    Json r;
    r["role"] = RoleName(b.role);
    if (!b.tenant.empty()) r["tenant"] = b.tenant;
    if (!b.project.empty()) r["project"] = b.project;
    if (!b.node.empty()) r["node"] = b.node;
    roles.push_back(std::move(r));
  }
  j["roles"] = std::move(roles);
  if (u.disabled) j["disabled"] = true;
  return j;
}

Json EncodeGovernanceObject(const GovernanceObject& o) {
  if (const auto* p = std::get_if<AdmissionPolicy>(&o)) return EncodeAdmissionPolicy(*p);
  return EncodeUserSpec(std::get<UserSpec>(o));
}

}  // namespace abacus

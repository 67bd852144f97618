#include "workload/secret_refs.h"

#include <algorithm>
#include <set>

#include "common/ids.h"

namespace abacus {

bool IsValidSecretKey(std::string_view key) {
  if (key.empty() || key.size() > 253 || key == "." || key == "..") return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::vector<std::string> WorkloadSpec::SecretNames() const {
  std::set<std::string> names(env_from.begin(), env_from.end());
  for (const SecretEnvVar& v : secret_env) names.insert(v.secret);
  for (const SecretMount& m : secret_mounts) names.insert(m.secret);
  return {names.begin(), names.end()};
}

namespace internal {
namespace {

using P = Presence;

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

bool ValidEnvName(std::string_view name) {
  return !name.empty() && name.find('=') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

void DecodeEnvList(MapReader& spec, const SpecNode& list, WorkloadSpec& s) {
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    MapReader r(spec.ctx(), list[i], Index(spec.Path("env"), i), {"name", "value", "secretRef"});
    if (!r.valid()) continue;
    auto name = r.String("name", P::kRequired);
    if (!name) continue;
    if (!ValidEnvName(*name)) {
      r.Error("name", "must be a non-empty variable name without '='");
      continue;
    }
    if (!seen.insert(*name).second) {
      r.Error("name", "duplicate variable '" + *name + "'");
      continue;
    }
    if (r.Has("value") == r.Has("secretRef")) {
      r.Error("name", "give exactly one of value and secretRef for variable '" + *name + "'");
      continue;
    }
    if (auto v = r.String("value")) {
      s.env[*name] = *v;
      continue;
    }
    auto ref = r.Map("secretRef", {"secret", "key"}, P::kRequired);
    if (!ref) continue;
    auto secret = ref->Name("secret", P::kRequired);
    auto key = ref->String("key", P::kRequired);
    if (key && !IsValidSecretKey(*key)) ref->Error("key", "must be 1-253 of [A-Za-z0-9._-], got '" + *key + "'");
    if (secret && key) s.secret_env.push_back({*name, *secret, *key});
  }
}

}  // namespace

void DecodeEnvAndSecrets(MapReader& spec, WorkloadSpec& s) {
  if (auto v = spec.Value("env"); v && v->IsSequence()) {
    DecodeEnvList(spec, *v, s);
  } else if (auto m = spec.StringMap("env")) {
    s.env = *m;
  }
  if (auto list = spec.List("envFrom")) {
    for (size_t i = 0; i < list->size(); ++i) {
      MapReader r(spec.ctx(), (*list)[i], Index(spec.Path("envFrom"), i), {"secret"});
      if (!r.valid()) continue;
      if (auto name = r.Name("secret", P::kRequired)) s.env_from.push_back(*name);
    }
  }
  if (auto list = spec.List("secretMounts")) {
    std::set<std::string> paths;
    for (size_t i = 0; i < list->size(); ++i) {
      MapReader r(spec.ctx(), (*list)[i], Index(spec.Path("secretMounts"), i), {"secret", "path"});
      if (!r.valid()) continue;
      auto name = r.Name("secret", P::kRequired);
      auto path = r.String("path", P::kRequired);
      if (!name || !path) continue;
      if (Status st = CheckMountPath("/" + *path); !st.ok() || path->empty() || path->front() == '/') {
        r.Error("path", "must be a relative path without '.', '..' or empty segments (under the task's "
                        "secrets directory), got '" + *path + "'");
        continue;
      }
      if (!paths.insert(*path).second) {
        r.Error("path", "two secretMounts at '" + *path + "'");
        continue;
      }
      s.secret_mounts.push_back({*name, *path});
    }
  }
}

}  // namespace internal
}  // namespace abacus

// Internal: the Secret references of a workload's `spec:` (issue 24; docs/specs.md, "Secrets"):
// `env` as a list with secretRef entries, `envFrom` and `secretMounts`. Used by the workload codec.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "tenancy/yaml_reader.h"
#include "workload/workload.h"

namespace abacus::internal {

// Reads `env` (a mapping of plain values, or a list of {name, value} / {name, secretRef}),
// `envFrom` and `secretMounts` of `spec` into `s`, reporting each problem at its field.
void DecodeEnvAndSecrets(MapReader& spec, WorkloadSpec& s);
// Writes `env` (a list when the spec has secretRef entries, else a mapping), `envFrom` and
// `secretMounts` of `s` into `spec` (either JSON flavour).
template <class Json>
void EncodeEnvAndSecrets(const WorkloadSpec& s, Json& spec) {
  if (s.secret_env.empty()) {
    if (!s.env.empty()) spec["env"] = s.env;
  } else {
    Json list = Json::array();
    for (const auto& [name, value] : s.env) {
      Json e;
      e["name"] = name;
      e["value"] = value;
      list.push_back(std::move(e));
    }
    for (const SecretEnvVar& v : s.secret_env) {
      Json e, ref;
      e["name"] = v.name;
      ref["secret"] = v.secret;
      ref["key"] = v.key;
      e["secretRef"] = std::move(ref);
      list.push_back(std::move(e));
    }
    spec["env"] = std::move(list);
  }
  if (!s.env_from.empty()) {
    Json list = Json::array();
    for (const std::string& name : s.env_from) {
      Json e;
      e["secret"] = name;
      list.push_back(std::move(e));
    }
    spec["envFrom"] = std::move(list);
  }
  if (!s.secret_mounts.empty()) {
    Json list = Json::array();
    for (const SecretMount& m : s.secret_mounts) {
      Json e;
      e["secret"] = m.secret;
      e["path"] = m.path;
      list.push_back(std::move(e));
    }
    spec["secretMounts"] = std::move(list);
  }
}

}  // namespace abacus::internal

namespace abacus {
// True when `key` may name a Secret key: 1–253 of [A-Za-z0-9._-], not "." or ".." (it becomes a
// file name under the task's work dir).
bool IsValidSecretKey(std::string_view key);
}  // namespace abacus

// The round-trip property the decoder fuzz targets check.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "tenancy/yaml_json.h"
#include "workload/documents.h"
#include "workload/governance_codec.h"

namespace abacus::fuzz {

[[noreturn]] inline void Fail(const std::string& what, const nlohmann::json& j) {
  std::fprintf(stderr, "round trip failed: %s\n%s\n", what.c_str(), j.dump(2).c_str());
  std::abort();
}

// Decode(Encode(o)) must give o back.
inline void CheckRoundTrip(const SpecObject& o) {
  nlohmann::json j = ToJson(o);
  auto back = SpecObjectFromJson(j);
  if (!back.ok()) Fail("re-decoding the encoded object: " + back.status().message(), j);
  if (ToJson(*back) != j) Fail("the re-decoded object encodes differently", j);
}

inline void CheckRoundTrip(const GovernanceObject& o) {
  nlohmann::json j = ToPlainJson(EncodeGovernanceObject(o));
  auto back = GovernanceObjectFromJson(j);
  if (!back.ok()) Fail("re-decoding the encoded object: " + back.status().message(), j);
  if (!(*back == o)) Fail("the re-decoded object differs", j);
}

}  // namespace abacus::fuzz

// YAML/JSON codecs of the governance kinds, AdmissionPolicy and User (docs/governance.md).
// Decoders report every problem to the context and return nullopt when there was any;
// encoders return the canonical JSON (kind first). Decode(Encode(x)) == x.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "tenancy/yaml_reader.h"
#include "workload/governance_spec.h"

namespace abacus {

// True when `kind` is "AdmissionPolicy" or "User".
bool IsGovernanceKind(std::string_view kind);
// True when `doc` is a mapping whose `kind` is a governance kind.
bool IsGovernanceDocument(const SpecNode& doc);

std::optional<AdmissionPolicy> DecodeAdmissionPolicy(const SpecNode& doc, SpecContext& ctx);
std::optional<UserSpec> DecodeUserSpec(const SpecNode& doc, SpecContext& ctx);
// Decodes a document whose kind is a governance kind (see IsGovernanceKind).
std::optional<GovernanceObject> DecodeGovernanceObject(const SpecNode& doc, SpecContext& ctx);

nlohmann::ordered_json EncodeAdmissionPolicy(const AdmissionPolicy& p);
nlohmann::ordered_json EncodeUserSpec(const UserSpec& u);
nlohmann::ordered_json EncodeGovernanceObject(const GovernanceObject& o);

// Reads one governance object from JSON (the REST form of /api/v1/policies and /users);
// InvalidArgument listing every problem as "field: message" lines.
Result<GovernanceObject> GovernanceObjectFromJson(const nlohmann::json& j);

}  // namespace abacus

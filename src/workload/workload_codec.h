// YAML/JSON codecs of the five workload kinds. DecodeWorkload reads one document and reports
// every problem ("spec.taskGroups[1].resources.accelerators.share: must be at most 1000, got
// 1500"); EncodeWorkload returns the canonical JSON (kind first). Decode(Encode(w)) == w.
// The field reference is docs/specs.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tenancy/yaml_reader.h"
#include "workload/workload.h"

namespace abacus {

// Decodes a workload document whose `kind` is one of the five workload kinds.
std::optional<Workload> DecodeWorkload(const SpecNode& doc, SpecContext& ctx);
// Returns the canonical JSON form, keys in document order.
nlohmann::ordered_json EncodeWorkload(const Workload& w);

// Returns `w` as JSON (the REST form).
nlohmann::json ToJson(const Workload& w);
// Reads a workload from JSON; InvalidArgument listing every problem ("field: message" lines).
Result<Workload> WorkloadFromJson(const nlohmann::json& j);
// Returns `w` as one YAML document.
std::string ToYaml(const Workload& w);
// Reads exactly one workload document from YAML text; InvalidArgument listing every problem.
Result<Workload> WorkloadFromYaml(std::string_view text, const std::string& filename = "");

}  // namespace abacus

// YAML output of the JSON encodings, so each spec kind needs one encoder (to JSON) and one
// decoder (reading YAML or JSON through SpecNode, spec_node.h): YAML output is emitted from
// the JSON encoding.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

namespace abacus {

// Returns `j` as YAML text in block style, keys in the JSON object's order.
std::string EmitYaml(const nlohmann::ordered_json& j);

// Returns `j` with the same content as a plain nlohmann::json (keys sorted).
nlohmann::json ToPlainJson(const nlohmann::ordered_json& j);

}  // namespace abacus

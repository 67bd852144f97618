// SpecNode: one node of a spec document as the decoders read it, whether the document came as
// YAML (a yaml-cpp node, with line numbers) or as JSON (an nlohmann value, read in place: no
// YAML tree is built for a JSON request). One decoder per kind reads both.
//
// A JSON value reads as the YAML node it would convert to: numbers as their JSON text,
// booleans as "true"/"false", null as null, objects as mappings, arrays as lists. Lines are 0.
//
//   SpecNode doc(json_value);              // or SpecNode(yaml_node)
//   if (doc.IsMap()) SpecNode kind = doc["kind"];
//
// A SpecNode refers to its document: the YAML node or the JSON value must outlive it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace abacus {

class SpecNode {
 public:
  // An absent node (IsDefined() false).
  SpecNode() = default;
  // A node of a YAML document (implicit: every decoder still takes YAML nodes as they are).
  SpecNode(const YAML::Node& node) : yaml_(node), kind_(Kind::kYaml) {}  // NOLINT
  // A value of a JSON document, which must outlive this node.
  explicit SpecNode(const nlohmann::json& value) : json_(&value), kind_(Kind::kJson) {}

  bool IsDefined() const;
  // True for YAML null and JSON null (and for an absent node).
  bool IsNull() const;
  bool IsMap() const;
  bool IsSequence() const;
  bool IsScalar() const;
  // The scalar's text; empty when not a scalar.
  std::string Scalar() const;
  // Entries of a mapping or items of a list; 0 otherwise.
  size_t size() const;
  // Item `i` of a list; absent when out of range or not a list.
  SpecNode operator[](size_t i) const;
  // The value of `key` in a mapping (its first entry, as yaml-cpp finds it); absent otherwise.
  SpecNode operator[](std::string_view key) const;
  // A mapping's entries in document order (JSON: key order); keys that are not scalars come
  // as they are (YAML allows them).
  std::vector<std::pair<SpecNode, SpecNode>> Entries() const;
  // 1-based line in the YAML text; 0 for JSON and for nodes built in memory.
  int Line() const;
  // The scalar as an integer, as yaml-cpp converts it; nullopt when it is not one.
  std::optional<long long> AsInt() const;
  // The scalar as a boolean (true/false, yes/no, on/off, as yaml-cpp reads them).
  std::optional<bool> AsBool() const;

 private:
  enum class Kind : uint8_t { kAbsent, kYaml, kJson, kKey };
  static SpecNode Key(const std::string& text);

  YAML::Node yaml_;
  const nlohmann::json* json_ = nullptr;
  const std::string* key_ = nullptr;  // a JSON object's key, read as a scalar
  Kind kind_ = Kind::kAbsent;
};

}  // namespace abacus

#include "tenancy/yaml_json.h"
#include <algorithm>

namespace abacus {
namespace {

// True when a plain scalar `s` would read back as something other than a string under YAML's
// core schema (null, a boolean or a number).
bool NeedsQuotes(const std::string& s) {
  static const char* const kWords[] = {"~",     "null", "Null", "NULL", "true", "True", "TRUE",
                                       "false", "False", "FALSE", "yes", "Yes", "YES", "no",
                                       "No",    "NO",   "on",   "On",   "ON",   "off",  "Off", "OFF",
                                       "y",     "Y",    "n",    "N"};
  if (s.empty()) return true;
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  // Number-like: optional sign, digits, dots, exponent, or a leading dot.
  size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (i == s.size()) return false;
  bool digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' && c != '_') {
      return false;
    }
  }
  return digit;
}

void Emit(YAML::Emitter& out, const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = j.begin(); it != j.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      return;
    case nlohmann::json::value_t::array: {
      // Short lists of scalars read best inline: command: [python3, train.py].
      bool flat = j.size() <= 8 &&
                  std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_primitive(); });
      if (flat) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : j) Emit(out, item);
      out << YAML::EndSeq;
      return;
    }
    case nlohmann::json::value_t::string: {
      const std::string& s = j.template get_ref<const std::string&>();
      // Quote strings that a YAML reader would take for null, a boolean or a number.
      if (NeedsQuotes(s)) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      return;
    }
    case nlohmann::json::value_t::null: out << YAML::Null; return;
    default: out << j.dump(); return;
  }
}

}  // namespace

std::string EmitYaml(const nlohmann::ordered_json& j) {
  YAML::Emitter out;
  Emit(out, j);
  return std::string(out.c_str()) + "\n";
}

nlohmann::json ToPlainJson(const nlohmann::ordered_json& j) {
  // A copy node by node (a dump and parse cost 3% of a submission's CPU).
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      nlohmann::json out = nlohmann::json::object();
      for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = ToPlainJson(it.value());
      return out;
    }
    case nlohmann::json::value_t::array: {
      nlohmann::json out = nlohmann::json::array();
      out.get_ref<nlohmann::json::array_t&>().reserve(j.size());
      for (const auto& item : j) out.push_back(ToPlainJson(item));
      return out;
    }
    case nlohmann::json::value_t::string: return j.get_ref<const std::string&>();
    case nlohmann::json::value_t::boolean: return j.get<bool>();
    case nlohmann::json::value_t::number_integer: return j.get<int64_t>();
    case nlohmann::json::value_t::number_unsigned: return j.get<uint64_t>();
    case nlohmann::json::value_t::number_float: return j.get<double>();
    case nlohmann::json::value_t::binary: return nlohmann::json::binary(j.get_binary());
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded: break;
  }
  return nullptr;
}

}  // namespace abacus

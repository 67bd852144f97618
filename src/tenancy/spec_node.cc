#include "tenancy/spec_node.h"

#include <climits>

namespace abacus {

using JsonType = nlohmann::json::value_t;

SpecNode SpecNode::Key(const std::string& text) {
  SpecNode n;
  n.key_ = &text;
  n.kind_ = Kind::kKey;
  return n;
}

bool SpecNode::IsDefined() const {
  switch (kind_) {
    case Kind::kAbsent: return false;
    case Kind::kYaml: return yaml_.IsDefined();
    case Kind::kJson:
    case Kind::kKey: return true;
  }
  return false;
}

bool SpecNode::IsNull() const {
  switch (kind_) {
    case Kind::kAbsent: return true;
    case Kind::kYaml: return yaml_.IsNull();
    case Kind::kJson: return json_->is_null() || json_->is_discarded();
    case Kind::kKey: return false;
  }
  return true;
}

bool SpecNode::IsMap() const {
  return kind_ == Kind::kYaml ? yaml_.IsMap() : kind_ == Kind::kJson && json_->is_object();
}

bool SpecNode::IsSequence() const {
  return kind_ == Kind::kYaml ? yaml_.IsSequence() : kind_ == Kind::kJson && json_->is_array();
}

bool SpecNode::IsScalar() const {
  switch (kind_) {
    case Kind::kAbsent: return false;
    case Kind::kYaml: return yaml_.IsScalar();
    case Kind::kJson: return json_->is_primitive() && !json_->is_null() && !json_->is_discarded();
    case Kind::kKey: return true;
  }
  return false;
}

std::string SpecNode::Scalar() const {
  if (!IsScalar()) return {};
  switch (kind_) {
    case Kind::kYaml: return yaml_.Scalar();
    case Kind::kKey: return *key_;
    case Kind::kJson:
      if (json_->is_string()) return json_->get_ref<const std::string&>();
      if (json_->is_boolean()) return json_->get<bool>() ? "true" : "false";
      return json_->dump();  // a number: its JSON text
    case Kind::kAbsent: break;
  }
  return {};
}

size_t SpecNode::size() const {
  if (kind_ == Kind::kYaml) return yaml_.IsMap() || yaml_.IsSequence() ? yaml_.size() : 0;
  if (kind_ == Kind::kJson && (json_->is_object() || json_->is_array())) return json_->size();
  return 0;
}

SpecNode SpecNode::operator[](size_t i) const {
  if (kind_ == Kind::kYaml && yaml_.IsSequence() && i < yaml_.size()) return SpecNode(yaml_[i]);
  if (kind_ == Kind::kJson && json_->is_array() && i < json_->size()) return SpecNode((*json_)[i]);
  return SpecNode();
}

SpecNode SpecNode::operator[](std::string_view key) const {
  if (kind_ == Kind::kYaml && yaml_.IsMap()) {
    const YAML::Node& n = yaml_;  // the const lookup never inserts
    YAML::Node v = n[std::string(key)];
    return v.IsDefined() ? SpecNode(v) : SpecNode();
  }
  if (kind_ == Kind::kJson && json_->is_object()) {
    auto it = json_->find(key);
    if (it != json_->end()) return SpecNode(*it);
  }
  return SpecNode();
}

std::vector<std::pair<SpecNode, SpecNode>> SpecNode::Entries() const {
  std::vector<std::pair<SpecNode, SpecNode>> out;
  if (kind_ == Kind::kYaml && yaml_.IsMap()) {
    out.reserve(yaml_.size());
    for (const auto& kv : yaml_) out.emplace_back(SpecNode(kv.first), SpecNode(kv.second));
  } else if (kind_ == Kind::kJson && json_->is_object()) {
    out.reserve(json_->size());
    for (auto it = json_->begin(); it != json_->end(); ++it) out.emplace_back(Key(it.key()), SpecNode(it.value()));
  }
  return out;
}

int SpecNode::Line() const {
  if (kind_ != Kind::kYaml) return 0;
  int line = yaml_.Mark().line;
  return line < 0 ? 0 : line + 1;
}

std::optional<long long> SpecNode::AsInt() const {
  if (kind_ == Kind::kJson && (json_->is_number_integer() || json_->is_number_unsigned())) {
    if (json_->is_number_unsigned() && json_->get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX)) {
      return std::nullopt;
    }
    return json_->get<long long>();
  }
  if (!IsScalar()) return std::nullopt;
  // Anything else reads as its scalar text does in YAML (hex, octal, a quoted "12").
  YAML::Node text = kind_ == Kind::kYaml ? yaml_ : YAML::Node(Scalar());
  long long n = 0;
  if (!YAML::convert<long long>::decode(text, n)) return std::nullopt;
  return n;
}

std::optional<bool> SpecNode::AsBool() const {
  if (kind_ == Kind::kJson && json_->is_boolean()) return json_->get<bool>();
  if (!IsScalar()) return std::nullopt;
  YAML::Node text = kind_ == Kind::kYaml ? yaml_ : YAML::Node(Scalar());
  bool b = false;
  if (!YAML::convert<bool>::decode(text, b)) return std::nullopt;
  return b;
}

}  // namespace abacus

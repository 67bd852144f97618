// JsonWriter: JSON text written straight into a string, for the few documents written once per
// request on a hot path (the audit entry of every write). The bytes are those nlohmann::json's
// dump() gives for the same object with its keys in the same (sorted) order, for valid UTF-8
// strings, so a document written here reads back and compares like one built as a value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace abacus {

// Appends `s` as a JSON string (quoted; ", \ and control characters escaped as dump() does:
// \b \f \n \r \t, the others as \u00xx; every other byte as is).
void AppendJsonString(std::string& out, std::string_view s);

// Writes one JSON object member by member. The caller gives the keys in the order the text
// must have (nlohmann::json's is sorted by key) and each key once.
class JsonWriter {
 public:
  // Starts an object.
  JsonWriter& Begin() {
    out_ += '{';
    first_ = true;
    return *this;
  }
  // Ends the innermost object.
  JsonWriter& End() {
    out_ += '}';
    first_ = false;
    return *this;
  }
  // Writes `"key":` (and the comma before it when needed); the value must follow.
  JsonWriter& Key(std::string_view key);
  // Writes a member with a string / integer value.
  JsonWriter& String(std::string_view key, std::string_view value) {
    Key(key);
    AppendJsonString(out_, value);
    return *this;
  }
  JsonWriter& Int(std::string_view key, int64_t value);
  // Starts a member whose value is an object (End closes it).
  JsonWriter& Object(std::string_view key) {
    Key(key);
    return Begin();
  }
  // Takes the text written.
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  bool first_ = true;
};

}  // namespace abacus

// Audit entries as JSON and JSON lines (exports, the journal's rows): apart from the chain and the
// log so that the CLI, which only reads the server's export, links neither a store nor a hash.
#include "govern/audit.h"

#include "common/json_writer.h"

namespace abacus::govern {

std::string AuditEntryJsonText(const AuditEntry& e) {
  // Written, not built as a value and dumped: one entry per write, on the committer thread.
  // Keys in std::map order (nlohmann::json's), so the text is what AuditEntryToJson dumps.
  const AuditRecord& r = e.record;
  JsonWriter w;
  w.Begin()
      .String("action", r.action)
      .String("actor", r.actor)
      .String("after", r.after)
      .String("before", r.before)
      .String("hash", e.hash)
      .Object("object")
      .String("kind", r.object_kind)
      .String("name", r.object_name)
      .End()
      .String("prevHash", e.prev_hash)
      .String("requestId", r.request_id)
      .String("result", r.result)
      .Int("seq", e.seq)
      .String("tenant", r.tenant)
      .String("time", FormatTime(e.time))
      .Int("timeUs", ToMicros(e.time))
      .End();
  return w.Take();
}

nlohmann::json AuditEntryToJson(const AuditEntry& e) { return nlohmann::json::parse(AuditEntryJsonText(e)); }

Result<AuditEntry> AuditEntryFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("audit entry: expected an object");
  auto str = [&](const nlohmann::json& obj, const char* key, std::string& out) -> Status {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string()) return InvalidArgument(std::string("audit entry: ") + key + ": expected a string");
    out = it->get<std::string>();
    return Status::OK();
  };
  auto integer = [&](const char* key, int64_t& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return InvalidArgument(std::string("audit entry: ") + key + ": expected an integer");
    out = it->get<int64_t>();
    return Status::OK();
  };
  AuditEntry e;
  AuditRecord& r = e.record;
  int64_t time_us = 0;
  ABACUS_RETURN_IF_ERROR(integer("seq", e.seq));
  ABACUS_RETURN_IF_ERROR(integer("timeUs", time_us));
  e.time = FromMicros(time_us);
  ABACUS_RETURN_IF_ERROR(str(j, "actor", r.actor));
  ABACUS_RETURN_IF_ERROR(str(j, "action", r.action));
  auto obj = j.find("object");
  if (obj == j.end() || !obj->is_object()) return InvalidArgument("audit entry: object: expected an object");
  ABACUS_RETURN_IF_ERROR(str(*obj, "kind", r.object_kind));
  ABACUS_RETURN_IF_ERROR(str(*obj, "name", r.object_name));
  ABACUS_RETURN_IF_ERROR(str(j, "tenant", r.tenant));
  ABACUS_RETURN_IF_ERROR(str(j, "before", r.before));
  ABACUS_RETURN_IF_ERROR(str(j, "after", r.after));
  ABACUS_RETURN_IF_ERROR(str(j, "result", r.result));
  ABACUS_RETURN_IF_ERROR(str(j, "requestId", r.request_id));
  ABACUS_RETURN_IF_ERROR(str(j, "prevHash", e.prev_hash));
  ABACUS_RETURN_IF_ERROR(str(j, "hash", e.hash));
  return e;
}

std::string ExportAuditJsonLines(const std::vector<AuditEntry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += AuditEntryJsonText(e);
    out += '\n';
  }
  return out;
}

Result<std::vector<AuditEntry>> ImportAuditJsonLines(std::string_view text) {
  std::vector<AuditEntry> out;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return InvalidArgument("line " + std::to_string(line_no) + ": not valid JSON");
    auto e = AuditEntryFromJson(j);
    if (!e.ok()) return e.status().WithContext("line " + std::to_string(line_no));
    out.push_back(std::move(*e));
  }
  return out;
}

}  // namespace abacus::govern

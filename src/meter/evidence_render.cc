// The evidence report as Markdown and JSON; RenderEvidence picks the format.
#include "meter/evidence_model.h"

namespace abacus::meter {
namespace {

std::string MdCell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string MdTable(const Table& t) {
  std::string out;
  if (!t.title.empty()) out += "**" + MdCell(t.title) + "**\n\n";
  if (t.rows.empty()) return out + "_No rows._\n\n";
  out += "|";
  for (const auto& c : t.columns) out += " " + MdCell(c.name) + " |";
  out += "\n|";
  for (const auto& c : t.columns) out += c.numeric ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + MdCell(cell) + " |";
    out += "\n";
  }
  for (const auto& note : t.notes) out += "\n_" + MdCell(note) + "_\n";
  return out + "\n";
}

std::string RenderMarkdown(const Evidence& e) {
  std::string out = "# " + e.title + "\n\n";
  for (const auto& [fact, value] : e.summary) out += "- **" + fact + "**: " + MdCell(value) + "\n";
  out += "\n";
  for (const auto& s : e.sections) {
    out += "## " + s.title + "\n\n";
    if (!s.text.empty()) out += s.text + "\n\n";
    for (const auto& t : s.tables) out += MdTable(t);
  }
  return out;
}

nlohmann::ordered_json EvidenceJson(const Evidence& e, const EvidenceInput& in) {
  nlohmann::ordered_json j;
  j["title"] = e.title;
  j["window"] = {{"from", FormatTime(in.window.from)}, {"to", FormatTime(in.window.to)}};
  j["generatedAt"] = FormatTime(in.generated_at);
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& [fact, value] : e.summary) summary[fact] = value;
  j["summary"] = std::move(summary);
  j["auditChain"] = {{"verified", in.audit_chain.verified}, {"ok", in.audit_chain.ok}};
  if (in.audit_chain.entries >= 0) j["auditChain"]["entries"] = in.audit_chain.entries;
  j["auditChain"]["reason"] = in.audit_chain.reason;
  nlohmann::ordered_json sections = nlohmann::ordered_json::array();
  for (const auto& s : e.sections) {
    nlohmann::ordered_json js;
    js["id"] = s.id;
    js["title"] = s.title;
    js["text"] = s.text;
    js["tables"] = nlohmann::ordered_json::array();
    for (const auto& t : s.tables) js["tables"].push_back(TableToJson(t));
    sections.push_back(std::move(js));
  }
  j["sections"] = std::move(sections);
  return j;
}

}  // namespace

Result<EvidenceFormat> ParseEvidenceFormat(std::string_view text) {
  if (text == "md" || text == "markdown") return EvidenceFormat::kMarkdown;
  if (text == "html") return EvidenceFormat::kHtml;
  if (text == "json") return EvidenceFormat::kJson;
  return InvalidArgument("unknown evidence format '" + std::string(text) + "'; use md, html or json");
}

std::string RenderEvidence(const EvidenceInput& input, EvidenceFormat format) {
  Evidence e = BuildEvidence(input);
  switch (format) {
    case EvidenceFormat::kMarkdown: return RenderMarkdown(e);
    case EvidenceFormat::kHtml: return RenderEvidenceHtml(e);
    case EvidenceFormat::kJson: return EvidenceJson(e, input).dump(2) + "\n";
  }
  return "";
}

}  // namespace abacus::meter

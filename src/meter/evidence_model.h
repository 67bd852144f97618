// The evidence document before rendering: sections of text, tables and bar charts. Built once
// by BuildEvidence, rendered by each format. Internal to src/meter/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "meter/evidence.h"
#include "meter/table.h"

namespace abacus::meter {

struct BarChart {
  std::string title;
  std::string unit;  // "device-hours", "%", "s", ...
  std::vector<std::pair<std::string, double>> bars;  // label, value >= 0
};

struct EvidenceSection {
  std::string id;  // anchor: "inventory", "queues", ...
  std::string title;
  std::string text;  // one paragraph
  std::vector<Table> tables;
  std::vector<BarChart> charts;
};

struct Evidence {
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;  // fact, value
  std::vector<EvidenceSection> sections;
};

// Section builders, one per part of the document (evidence_sections.cc).
EvidenceSection InventorySection(const EvidenceInput& in);
EvidenceSection QueueSection(const EvidenceInput& in);
EvidenceSection SubmissionSection(const EvidenceInput& in);
EvidenceSection UtilizationSection(const EvidenceInput& in);

// Computes every section from `input`.
Evidence BuildEvidence(const EvidenceInput& input);
// Returns the bars of `table`: label from columns `labels` joined by " / ", value from column
// `value`; rows whose value is empty are left out.
BarChart ChartOf(const Table& table, std::string title, std::string unit,
                 const std::vector<std::string>& labels, const std::string& value);
// Returns `e` as one self-contained HTML page (evidence_html.cc).
std::string RenderEvidenceHtml(const Evidence& e);
// Returns an inline <svg> element drawing `chart` as horizontal bars (empty when no bars).
std::string RenderSvgBars(const BarChart& chart);
// Returns `text` with & < > " ' escaped for HTML and XML.
std::string EscapeHtml(std::string_view text);

}  // namespace abacus::meter

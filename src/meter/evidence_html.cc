// The evidence report as one self-contained HTML page: inline CSS, inline SVG bar charts, no
// scripts and no external assets.
#include <algorithm>
#include <cstdio>

#include "common/markup.h"
#include "meter/evidence_model.h"

namespace abacus::meter {
namespace {

constexpr char kStyle[] = R"(body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{border-bottom:2px solid #444}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ccc;padding:3px 8px}
th{background:#f0f0f0;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:bold}
.note{color:#666;font-size:90%}svg{display:block;margin:.5em 0}
)";

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), v >= 100 ? "%.0f" : "%.2f", v);
  return buf;
}

std::string HtmlTable(const Table& t) {
  std::string out;
  if (!t.title.empty()) out += "<h3>" + EscapeHtml(t.title) + "</h3>\n";
  if (t.rows.empty()) return out + "<p class=\"note\">No rows.</p>\n";
  out += "<table>\n<tr>";
  for (const auto& c : t.columns) out += "<th>" + EscapeHtml(c.name) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      out += t.columns[i].numeric ? "<td class=\"n\">" : "<td>";
      out += EscapeHtml(row[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  for (const auto& note : t.notes) out += "<p class=\"note\">" + EscapeHtml(note) + "</p>\n";
  return out;
}

}  // namespace

std::string EscapeHtml(std::string_view text) { return EscapeMarkup(text); }

std::string RenderSvgBars(const BarChart& chart) {
  if (chart.bars.empty()) return "";
  constexpr size_t kMaxBars = 30;
  constexpr int kWidth = 760, kLabel = 260, kBarArea = 400, kRow = 20, kTop = 28;
  std::vector<std::pair<std::string, double>> bars = chart.bars;
  std::string title = chart.title + " (" + chart.unit + ")";
  if (bars.size() > kMaxBars) {
    title += ", largest " + std::to_string(kMaxBars) + " of " + std::to_string(bars.size());
    std::stable_sort(bars.begin(), bars.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    bars.resize(kMaxBars);
  }
  double max = 0;
  for (const auto& b : bars) max = std::max(max, b.second);
  const int height = kTop + kRow * static_cast<int>(bars.size()) + 8;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
                    "\" height=\"" + std::to_string(height) + "\" role=\"img\" aria-label=\"" +
                    EscapeHtml(chart.title) + "\">\n";
  out += "<text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"bold\">" + EscapeHtml(title) + "</text>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    int y = kTop + kRow * static_cast<int>(i);
    int w = max > 0 ? static_cast<int>(bars[i].second / max * kBarArea + 0.5) : 0;
    std::string label = bars[i].first.size() > 40 ? bars[i].first.substr(0, 39) + "…" : bars[i].first;
    out += "<text x=\"" + std::to_string(kLabel - 6) + "\" y=\"" + std::to_string(y + 13) +
           "\" font-size=\"12\" text-anchor=\"end\">" + EscapeHtml(label) + "</text>";
    out += "<rect x=\"" + std::to_string(kLabel) + "\" y=\"" + std::to_string(y + 2) + "\" width=\"" +
           std::to_string(w) + "\" height=\"" + std::to_string(kRow - 5) + "\" fill=\"#4a78b5\"/>";
    out += "<text x=\"" + std::to_string(kLabel + w + 4) + "\" y=\"" + std::to_string(y + 13) +
           "\" font-size=\"12\">" + Number(bars[i].second) + "</text>\n";
  }
  return out + "</svg>\n";
}

std::string RenderEvidenceHtml(const Evidence& e) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                    EscapeHtml(e.title) + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>" + EscapeHtml(e.title) + "</h1>\n<dl>\n";
  for (const auto& [fact, value] : e.summary) {
    out += "<dt>" + EscapeHtml(fact) + "</dt><dd>" + EscapeHtml(value) + "</dd>\n";
  }
  out += "</dl>\n<nav><ol>\n";
  for (const auto& s : e.sections) out += "<li><a href=\"#" + s.id + "\">" + EscapeHtml(s.title) + "</a></li>\n";
  out += "</ol></nav>\n";
  for (const auto& s : e.sections) {
    out += "<section id=\"" + s.id + "\">\n<h2>" + EscapeHtml(s.title) + "</h2>\n";
    if (!s.text.empty()) out += "<p>" + EscapeHtml(s.text) + "</p>\n";
    for (const auto& c : s.charts) out += RenderSvgBars(c);
    for (const auto& t : s.tables) out += HtmlTable(t);
    out += "</section>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace abacus::meter

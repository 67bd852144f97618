#include "sim/packing_report.h"

#include <cmath>
#include <cstdio>

#include "common/text_table.h"
#include "sim/svg_plot.h"

namespace abacus::sim {
namespace {

double Round(double v, double scale) { return std::round(v * scale) / scale; }

std::string Fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace

nlohmann::ordered_json PackingJson(const std::vector<PackingSummary>& results) {
  nlohmann::ordered_json policies = nlohmann::ordered_json::object();
  for (const auto& r : results) {
    nlohmann::ordered_json curve = nlohmann::ordered_json::array();
    for (const auto& p : r.curve) {
      curve.push_back({{"arrived_pct", p.arrived_pct},
                       {"gpu_alloc_pct", Round(p.gpu_alloc_pct, 1e4)},
                       {"frag_pct", Round(p.frag_pct, 1e4)},
                       {"frag_ratio_pct", Round(p.frag_ratio_pct, 1e4)}});
    }
    policies[std::string(PackingPolicyName(r.policy))] = {{"curve", std::move(curve)}, {"seconds", Round(r.seconds, 1e3)}};
  }
  return {{"policies", std::move(policies)}};
}

std::string PackingTable(const std::vector<PackingSummary>& results) {
  const int marks[] = {50, 80, 90, 100, 110, 120, 130};
  int32_t last = 0;
  for (const auto& r : results) {
    if (!r.curve.empty()) last = std::max(last, r.curve.back().arrived_pct);
  }
  std::vector<std::string> header = {"POLICY", "SEEDS", "ARRIVALS", "SKIPPED"};
  std::vector<int> shown;
  for (int m : marks) {
    if (m <= last) {
      shown.push_back(m);
      header.push_back("ALLOC@" + std::to_string(m) + "%");
    }
  }
  if (shown.empty() || shown.back() != last) {
    shown.push_back(last);
    header.push_back("ALLOC@" + std::to_string(last) + "%");
  }
  int frag_at = last >= 100 ? 100 : last;
  header.push_back("FRAG@" + std::to_string(frag_at) + "%");
  header.push_back("FRAG-RATIO@" + std::to_string(frag_at) + "%");
  header.push_back("SECONDS");
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    std::vector<std::string> row = {std::string(PackingPolicyName(r.policy)), std::to_string(r.seeds),
                                    Fixed(r.arrivals, 0), Fixed(r.skipped, 1)};
    for (int m : shown) {
      auto p = PointAt(r.curve, m);
      row.push_back(p ? Fixed(p->gpu_alloc_pct, 2) : "-");
    }
    auto f = PointAt(r.curve, frag_at);
    row.push_back(f ? Fixed(f->frag_pct, 2) : "-");
    row.push_back(f ? Fixed(f->frag_ratio_pct, 2) : "-");
    row.push_back(Fixed(r.seconds, 3));
    rows.push_back(std::move(row));
  }
  std::string out = RenderTextTable(header, rows, LeftThenRight(1));
  out += "ALLOC: allocated GPU / cluster GPU capacity, % (mean over seeds) at arrived GPU demand = % of capacity.\n";
  return out;
}

std::string PackingCsv(const std::vector<PackingSummary>& results) {
  std::string out = "policy,arrived_pct,gpu_alloc_pct,frag_pct,frag_ratio_pct\n";
  for (const auto& r : results) {
    for (const auto& p : r.curve) {
      out += std::string(PackingPolicyName(r.policy)) + "," + std::to_string(p.arrived_pct) + "," +
             Fixed(p.gpu_alloc_pct, 4) + "," + Fixed(p.frag_pct, 4) + "," + Fixed(p.frag_ratio_pct, 4) + "\n";
    }
  }
  return out;
}

std::string PackingSvg(const std::string& title, const std::vector<PackingSummary>& results) {
  PlotPanel alloc{"GPU allocation ratio", "arrived GPU demand (% of cluster GPU capacity)", "GPU allocated (%)", {}};
  PlotPanel frag{"GPU fragmentation ratio (fragment / idle GPU)", "arrived GPU demand (% of cluster GPU capacity)",
                 "fragmentation ratio (%)", {}};
  alloc.x_min = frag.x_min = 0;
  for (const auto& r : results) {
    PlotSeries a{std::string(PackingPolicyName(r.policy)), {}};
    PlotSeries f{a.name, {}};
    for (const auto& p : r.curve) {
      a.points.emplace_back(p.arrived_pct, p.gpu_alloc_pct);
      f.points.emplace_back(p.arrived_pct, p.frag_ratio_pct);
      alloc.x_max = frag.x_max = std::max(alloc.x_max, static_cast<double>(p.arrived_pct));
    }
    alloc.series.push_back(std::move(a));
    frag.series.push_back(std::move(f));
  }
  alloc.y_min = 0;
  alloc.y_max = 100;
  frag.y_min = 0;
  frag.y_max = 100;
  if (alloc.x_max <= 0) alloc.x_max = frag.x_max = 1;
  return RenderSvg(title, {alloc, frag});
}

}  // namespace abacus::sim

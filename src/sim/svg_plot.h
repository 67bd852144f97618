// A small hand-written SVG line chart: one or more panels, each with named series of (x, y)
// points, axes with ticks, a legend. Enough for the simulator's curves; no dependencies.
#pragma once

#include <string>
#include <vector>

namespace abacus::sim {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct PlotPanel {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<PlotSeries> series;
  // Axis ranges; when min == max the range is taken from the data (y starts at 0).
  double x_min = 0, x_max = 0;
  double y_min = 0, y_max = 0;
};

// Returns a standalone SVG document with the panels stacked vertically.
std::string RenderSvg(const std::string& title, const std::vector<PlotPanel>& panels);

// Returns `text` with &, <, >, " escaped for XML.
std::string XmlEscape(const std::string& text);

}  // namespace abacus::sim

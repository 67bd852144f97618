#include "sim/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/markup.h"

namespace abacus::sim {
namespace {

constexpr double kWidth = 860;
constexpr double kPanelHeight = 360;
constexpr double kTitleHeight = 36;
constexpr double kLeft = 70, kRight = 190, kTop = 34, kBottom = 50;

// Colour-blind friendly palette (Okabe–Ito), then greys.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                   "#56B4E9", "#000000", "#F0E442", "#999999", "#666666"};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

std::string TickLabel(double v) {
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  }
  return buf;
}

// A "nice" tick step giving about `target` ticks over `span`.
double NiceStep(double span, int target) {
  if (span <= 0) return 1;
  double raw = span / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / mag;
  double nice = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  return nice * mag;
}

void RenderPanel(const PlotPanel& p, double top, std::string* out) {
  double x0 = p.x_min, x1 = p.x_max, y0 = p.y_min, y1 = p.y_max;
  if (x0 == x1) {
    bool any = false;
    for (const auto& s : p.series) {
      for (const auto& [x, y] : s.points) {
        x0 = any ? std::min(x0, x) : x;
        x1 = any ? std::max(x1, x) : x;
        any = true;
      }
    }
    if (!any || x0 == x1) x1 = x0 + 1;
  }
  if (y0 == y1) {
    y0 = 0;
    y1 = 0;
    for (const auto& s : p.series) {
      for (const auto& pt : s.points) y1 = std::max(y1, pt.second);
    }
    if (y1 <= 0) y1 = 1;
    y1 *= 1.05;
  }
  const double pw = kWidth - kLeft - kRight;
  const double ph = kPanelHeight - kTop - kBottom;
  const double left = kLeft, ptop = top + kTop;
  auto sx = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto sy = [&](double y) { return ptop + ph - (std::clamp(y, y0, y1) - y0) / (y1 - y0) * ph; };

  *out += "<text x=\"" + Num(left) + "\" y=\"" + Num(top + 22) + "\" class=\"ptitle\">" + XmlEscape(p.title) + "</text>\n";
  // Grid and ticks.
  double xs = NiceStep(x1 - x0, 8), ys = NiceStep(y1 - y0, 6);
  for (double x = std::ceil(x0 / xs) * xs; x <= x1 + 1e-9; x += xs) {
    *out += "<line x1=\"" + Num(sx(x)) + "\" y1=\"" + Num(ptop) + "\" x2=\"" + Num(sx(x)) + "\" y2=\"" + Num(ptop + ph) +
            "\" class=\"grid\"/>\n";
    *out += "<text x=\"" + Num(sx(x)) + "\" y=\"" + Num(ptop + ph + 16) + "\" class=\"tick\" text-anchor=\"middle\">" +
            TickLabel(x) + "</text>\n";
  }
  for (double y = std::ceil(y0 / ys) * ys; y <= y1 + 1e-9; y += ys) {
    *out += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(sy(y)) + "\" x2=\"" + Num(left + pw) + "\" y2=\"" + Num(sy(y)) +
            "\" class=\"grid\"/>\n";
    *out += "<text x=\"" + Num(left - 6) + "\" y=\"" + Num(sy(y) + 4) + "\" class=\"tick\" text-anchor=\"end\">" +
            TickLabel(y) + "</text>\n";
  }
  *out += "<rect x=\"" + Num(left) + "\" y=\"" + Num(ptop) + "\" width=\"" + Num(pw) + "\" height=\"" + Num(ph) +
          "\" class=\"frame\"/>\n";
  *out += "<text x=\"" + Num(left + pw / 2) + "\" y=\"" + Num(ptop + ph + 36) + "\" class=\"label\" text-anchor=\"middle\">" +
          XmlEscape(p.x_label) + "</text>\n";
  *out += "<text transform=\"translate(" + Num(left - 50) + "," + Num(ptop + ph / 2) +
          ") rotate(-90)\" class=\"label\" text-anchor=\"middle\">" + XmlEscape(p.y_label) + "</text>\n";
  // Series and legend.
  for (size_t i = 0; i < p.series.size(); ++i) {
    const PlotSeries& s = p.series[i];
    const char* color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    if (!s.points.empty()) {
      *out += "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"2\" points=\"";
      for (const auto& [x, y] : s.points) *out += Num(sx(x)) + "," + Num(sy(y)) + " ";
      *out += "\"/>\n";
    }
    double ly = ptop + 14 + 20 * static_cast<double>(i);
    *out += "<line x1=\"" + Num(left + pw + 14) + "\" y1=\"" + Num(ly - 4) + "\" x2=\"" + Num(left + pw + 38) + "\" y2=\"" +
            Num(ly - 4) + "\" stroke=\"" + color + "\" stroke-width=\"3\"/>\n";
    *out += "<text x=\"" + Num(left + pw + 44) + "\" y=\"" + Num(ly) + "\" class=\"legend\">" + XmlEscape(s.name) + "</text>\n";
  }
}

}  // namespace

std::string XmlEscape(const std::string& text) { return EscapeMarkup(text); }

std::string RenderSvg(const std::string& title, const std::vector<PlotPanel>& panels) {
  const double height = kTitleHeight + kPanelHeight * static_cast<double>(std::max<size_t>(1, panels.size()));
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) + "\" height=\"" + Num(height) +
         "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(height) + "\">\n";
  out += "<style>text{font-family:sans-serif;fill:#222}.title{font-size:17px;font-weight:bold}"
         ".ptitle{font-size:14px;font-weight:bold}.tick{font-size:11px;fill:#555}.label{font-size:12px}"
         ".legend{font-size:12px}.grid{stroke:#e4e4e4;stroke-width:1}.frame{fill:none;stroke:#888}</style>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"24\" class=\"title\">" + XmlEscape(title) + "</text>\n";
  for (size_t i = 0; i < panels.size(); ++i) RenderPanel(panels[i], kTitleHeight + kPanelHeight * static_cast<double>(i), &out);
  out += "</svg>\n";
  return out;
}

}  // namespace abacus::sim

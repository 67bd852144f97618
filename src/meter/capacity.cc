#include "meter/capacity.h"

#include <algorithm>

namespace abacus::meter {

std::vector<CapacitySpan> NodeCapacitySpans(const std::string& node, std::span<const NodeChange> changes) {
  std::vector<CapacitySpan> out;
  for (size_t i = 0; i < changes.size(); ++i) {
    const NodeChange& c = changes[i];
    if (c.state == "Removed") continue;
    std::optional<Time> to;
    if (i + 1 < changes.size()) to = changes[i + 1].at;
    const bool drained = c.state == "Cordoned" || c.state == "Draining" || c.state == "Drained";
    const NodeCondition condition = c.state == "NotReady" ? NodeCondition::kDown
                                    : drained             ? NodeCondition::kDrained
                                                          : NodeCondition::kUp;
    for (const auto& [flavor, count] : c.devices) {
      if (count > 0) out.push_back({node, flavor, count, c.at, to, condition});
    }
  }
  return out;
}

std::map<std::string, FlavorCapacity> CapacityByFlavor(std::span<const CapacitySpan> spans, const ReportWindow& window) {
  std::map<std::string, FlavorCapacity> out;
  const Time end = window.end();
  for (const CapacitySpan& s : spans) {
    const Time a = std::max(s.from, window.from);
    const Time b = std::min(s.to.value_or(end), end);
    FlavorCapacity& f = out[s.flavor];
    if (a >= b) continue;
    const ResourceTime amount = static_cast<ResourceTime>(s.devices) * 1000 * (b - a).count();
    f.total += amount;
    if (s.condition == NodeCondition::kDown) f.down += amount;
    if (s.condition == NodeCondition::kDrained) f.drained += amount;
  }
  return out;
}

}  // namespace abacus::meter

// The InferenceService family of GET /metrics (docs/metrics.md): replicas each live service
// wants, is placed with and has ready, against its minimum and maximum, so that alerts can say
// "below its minimum" or "short of replicas" (packaging/prometheus/abacus-rules.yaml).
#include <set>

#include "server/elastic_units.h"
#include "server/metrics.h"
#include "server/metrics_inventory.h"

namespace abacus::server {

void RenderServiceMetrics(const Ledger& ledger, std::string& out) {
  out += "# HELP abacus_inference_replicas Replicas of each live InferenceService: desired, min, max, placed "
         "(holding devices) and ready (receiving traffic).\n# TYPE abacus_inference_replicas gauge\n";
  for (const auto& [id, r] : ledger.workloads()) {
    const InferenceSpec* inf = std::get_if<InferenceSpec>(&r.spec.details);
    if (inf == nullptr || IsTerminal(r.state)) continue;
    std::set<int32_t> placed, not_ready;
    for (const auto& p : r.placements) {
      const int32_t unit = UnitOf(r, p);
      placed.insert(unit);
      if (!p.routed) not_ready.insert(unit);
    }
    const size_t ready = placed.size() - not_ready.size();
    const std::string base = "abacus_inference_replicas{service=\"" + EscapeLabel(r.spec.name) + "\",tenant=\"" +
                             EscapeLabel(r.spec.tenant()) + "\",queue=\"" + EscapeLabel(r.spec.queue) + "\",state=\"";
    out += base + "desired\"} " + std::to_string(inf->replicas) + "\n";
    out += base + "min\"} " + std::to_string(inf->min_replicas) + "\n";
    out += base + "max\"} " + std::to_string(inf->max_replicas) + "\n";
    out += base + "placed\"} " + std::to_string(placed.size()) + "\n";
    out += base + "ready\"} " + std::to_string(ready) + "\n";
  }
}

}  // namespace abacus::server

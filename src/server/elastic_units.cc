#include "server/elastic_units.h"

#include <algorithm>

#include "control/inference.h"
#include "control/rollout.h"

namespace abacus::server {

bool IsElastic(const WorkloadRecord& r) {
  return r.spec.kind() == WorkloadKind::kInferenceService || r.spec.kind() == WorkloadKind::kBatchJob;
}

int32_t UnitOf(const WorkloadRecord& r, const PlacementRecord& p) {
  if (!IsElastic(r)) return p.replica;
  const auto& groups = r.spec.spec.task_groups;
  int32_t per = p.group >= 0 && p.group < static_cast<int32_t>(groups.size()) ? std::max(1, groups[p.group].replicas) : 1;
  return p.replica / per;
}

std::set<int32_t> PlacedUnits(const WorkloadRecord& r) {
  std::set<int32_t> units;
  for (const auto& p : r.placements) units.insert(UnitOf(r, p));
  return units;
}

int32_t WantedUnits(const WorkloadRecord& r) {
  if (const InferenceSpec* inf = r.spec.inference()) {
    return std::clamp(inf->replicas, inf->min_replicas, std::max(inf->min_replicas, inf->max_replicas));
  }
  if (const BatchSpec* b = r.spec.batch()) {
    // The controller's per-index status string ('P' to do); read in place, not decoded: this
    // runs for every batch in every scheduling cycle.
    int32_t left = b->tasks;
    if (r.controller_state.is_object()) {
      auto it = r.controller_state.find("status");
      if (it != r.controller_state.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
        const std::string& status = it->get_ref<const std::string&>();
        left = static_cast<int32_t>(std::count(status.begin(), status.end(), 'P'));
      }
    }
    return std::max(0, std::min(b->parallelism, left));
  }
  return 0;
}

std::vector<int32_t> MissingUnits(const WorkloadRecord& r) {
  std::vector<int32_t> out;
  if (!IsElastic(r) || (r.state != WorkloadState::kAdmitted && r.state != WorkloadState::kRunning)) return out;
  std::set<int32_t> placed = PlacedUnits(r);
  int32_t wanted = WantedUnits(r);
  for (int32_t u = 0; u < wanted; ++u) {
    if (placed.count(u) == 0) out.push_back(u);
  }
  // A batch numbers its slots freely: it misses only as many as it lacks.
  if (r.spec.batch() != nullptr) {
    int32_t lack = std::max<int32_t>(0, wanted - static_cast<int32_t>(placed.size()));
    out.resize(std::min<size_t>(out.size(), static_cast<size_t>(lack)));
  }
  return out;
}

std::string SliceId(std::string_view workload_id, int32_t unit) {
  return std::string(workload_id) + "#" + std::to_string(unit);
}

std::string InitialVersion(const WorkloadRecord& r, int32_t unit) {
  if (r.spec.inference() == nullptr) return "";
  if (!r.controller_state.is_null()) {
    if (auto s = control::InferenceStateFromJson(r.controller_state); s.ok()) {
      const std::string& v = control::WantedVersion(s->rollout, unit);
      if (!v.empty()) return v;
    }
  }
  auto it = r.spec.labels.find("version");
  return it != r.spec.labels.end() ? it->second : "";
}

}  // namespace abacus::server

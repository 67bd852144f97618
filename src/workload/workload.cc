#include "workload/workload.h"

#include <algorithm>
#include <array>
#include <utility>

namespace abacus {
namespace {
constexpr std::array<std::string_view, 5> kKindNames = {"TrainingJob", "InferenceService",
                                                       "Experiment", "Evaluation", "BatchJob"};
}  // namespace

std::string_view WorkloadKindName(WorkloadKind k) { return kKindNames[static_cast<size_t>(k)]; }

Result<WorkloadKind> ParseWorkloadKind(std::string_view text) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == text) return static_cast<WorkloadKind>(i);
  }
  return InvalidArgument("unknown workload kind '" + std::string(text) +
                         "' (expected TrainingJob, InferenceService, Experiment, Evaluation or BatchJob)");
}

bool TextMayNameWorkloadKind(std::string_view text) {
  if (text.find('\\') != std::string_view::npos) return true;
  return std::any_of(kKindNames.begin(), kKindNames.end(),
                     [&](std::string_view kind) { return text.find(kind) != std::string_view::npos; });
}

std::string_view DefaultPriorityClassFor(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kTrainingJob: return "training";
    case WorkloadKind::kInferenceService: return "production";
    case WorkloadKind::kExperiment: return "experiment";
    case WorkloadKind::kEvaluation: return "evaluation";
    case WorkloadKind::kBatchJob: return "experiment";
  }
  return "experiment";
}

bool DefaultGangFor(WorkloadKind k) { return k == WorkloadKind::kTrainingJob; }

std::string_view TopologyPolicyName(TopologyPolicy t) {
  switch (t) {
    case TopologyPolicy::kNone: return "none";
    case TopologyPolicy::kSameInterconnect: return "same-interconnect";
    case TopologyPolicy::kSameNuma: return "same-numa";
  }
  return "none";
}

Result<TopologyPolicy> ParseTopologyPolicy(std::string_view text) {
  if (text == "none") return TopologyPolicy::kNone;
  if (text == "same-interconnect") return TopologyPolicy::kSameInterconnect;
  if (text == "same-numa") return TopologyPolicy::kSameNuma;
  return InvalidArgument("unknown topology '" + std::string(text) +
                         "' (expected none, same-interconnect or same-numa)");
}

std::string Workload::tenant() const { return project.substr(0, project.find('/')); }

int64_t Workload::TaskCount() const {
  int64_t per_instance = 0;
  for (const auto& g : spec.task_groups) per_instance += g.replicas;
  if (const auto* s = inference()) return per_instance * s->replicas;
  if (const auto* b = batch()) return per_instance * b->parallelism;
  return per_instance;
}

}  // namespace abacus

#include "tenancy/pool.h"

#include <array>
#include <utility>

namespace abacus {
namespace {
constexpr std::array<std::pair<PoolPurpose, std::string_view>, 6> kPurposes = {{
    {PoolPurpose::kGeneral, "general"},
    {PoolPurpose::kTraining, "training"},
    {PoolPurpose::kInference, "inference"},
    {PoolPurpose::kExperiment, "experiment"},
    {PoolPurpose::kEvaluation, "evaluation"},
    {PoolPurpose::kBatch, "batch"},
}};
}  // namespace

std::string_view PoolPurposeName(PoolPurpose p) {
  for (const auto& [v, n] : kPurposes) {
    if (v == p) return n;
  }
  return "general";
}

Result<PoolPurpose> ParsePoolPurpose(std::string_view text) {
  for (const auto& [v, n] : kPurposes) {
    if (n == text) return v;
  }
  return InvalidArgument("unknown pool purpose '" + std::string(text) +
                         "' (expected training, inference, experiment, evaluation, batch or general)");
}

}  // namespace abacus

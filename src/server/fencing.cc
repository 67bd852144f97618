#include "server/fencing.h"

#include "common/duration_parse.h"
#include "common/split_list.h"
#include "server/records.h"

namespace abacus::server {

Duration FencingPolicy::Grace(const WorkloadRecord& r) const {
  if (const TrainingSpec* t = r.spec.training(); t != nullptr && t->checkpoint) {
    return std::chrono::seconds(t->checkpoint->grace_seconds);
  }
  auto it = grace.find(r.spec.kind());
  return it == grace.end() ? kDefaultFencingGrace : it->second;
}

std::string FencingPolicy::Signal(const WorkloadRecord& r) const {
  if (const TrainingSpec* t = r.spec.training(); t != nullptr && t->checkpoint) return t->checkpoint->signal;
  return "SIGTERM";
}

Result<FencingPolicy> ParseFencingGrace(std::string_view text) {
  FencingPolicy policy;
  for (std::string_view entry : SplitList(text)) {
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument("fencing grace '" + std::string(entry) + "': expected KIND=DURATION, e.g. TrainingJob=60s");
    }
    auto kind = ParseWorkloadKind(entry.substr(0, eq));
    if (!kind.ok()) return kind.status().WithContext("fencing grace '" + std::string(entry) + "'");
    auto d = ParseDurationSpec(entry.substr(eq + 1));
    if (!d.ok()) return d.status().WithContext("fencing grace '" + std::string(entry) + "'");
    policy.grace[*kind] = *d;
  }
  return policy;
}

}  // namespace abacus::server

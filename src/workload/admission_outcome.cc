#include "workload/admission_outcome.h"

#include <array>

namespace abacus {
namespace {
constexpr std::array<std::string_view, 3> kNetworkNames = {"isolated", "internal", "internet"};
}  // namespace

std::string_view NetworkClassName(NetworkClass c) { return kNetworkNames[static_cast<size_t>(c)]; }

Result<NetworkClass> ParseNetworkClass(std::string_view text) {
  for (size_t i = 0; i < kNetworkNames.size(); ++i) {
    if (kNetworkNames[i] == text) return static_cast<NetworkClass>(i);
  }
  return InvalidArgument("unknown network class '" + std::string(text) +
                         "' (expected isolated, internal or internet)");
}

AdmissionOutcome AdmissionFromLabels(const std::map<std::string, std::string>& labels) {
  AdmissionOutcome out;
  if (auto it = labels.find(std::string(kAllowedPoolsLabel)); it != labels.end()) {
    const std::string& v = it->second;
    size_t start = 0;
    while (start <= v.size()) {
      size_t end = v.find(',', start);
      if (end == std::string::npos) end = v.size();
      if (end > start) out.pools.push_back(v.substr(start, end - start));
      start = end + 1;
    }
  }
  if (auto it = labels.find(std::string(kNetworkLabel)); it != labels.end()) {
    if (auto c = ParseNetworkClass(it->second); c.ok()) out.network = *c;
  }
  return out;
}

void WriteAdmissionLabels(const AdmissionOutcome& outcome, std::map<std::string, std::string>& labels) {
  labels.erase(std::string(kNetworkLabel));
  labels.erase(std::string(kAllowedPoolsLabel));
  if (outcome.network) labels[std::string(kNetworkLabel)] = std::string(NetworkClassName(*outcome.network));
  if (!outcome.pools.empty()) {
    std::string joined;
    for (const auto& p : outcome.pools) joined += (joined.empty() ? "" : ",") + p;
    labels[std::string(kAllowedPoolsLabel)] = joined;
  }
}

}  // namespace abacus

#include <string_view>

#include "fuzz_targets.h"
#include "roundtrip.h"
#include "workload/workload_codec.h"

namespace abacus::fuzz {

int FuzzWorkloadJson(const uint8_t* data, size_t size) {
  if (size > kMaxFuzzInput) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  std::vector<nlohmann::json> items;
  if (j.is_array()) {
    items.assign(j.begin(), j.end());
  } else {
    items.push_back(std::move(j));
  }
  for (const auto& item : items) {
    if (auto o = SpecObjectFromJson(item); o.ok()) CheckRoundTrip(*o);
    if (auto g = GovernanceObjectFromJson(item); g.ok()) CheckRoundTrip(*g);
    (void)WorkloadFromJson(item);
  }
  return 0;
}

}  // namespace abacus::fuzz

#ifdef ABACUS_FUZZ_ENTRY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abacus::fuzz::FuzzWorkloadJson(data, size);
}
#endif

#include <string>

#include "fuzz_targets.h"
#include "roundtrip.h"

namespace abacus::fuzz {

int FuzzWorkloadYaml(const uint8_t* data, size_t size) {
  if (size > kMaxFuzzInput) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  ParsedDocuments parsed = ParseDocuments(text, "fuzz.yaml");
  Diagnostics diags;
  CheckDocuments(parsed.documents, diags);
  for (const Document& d : parsed.documents) CheckRoundTrip(d.object);
  for (const GovernanceDocument& g : parsed.governance) CheckRoundTrip(g.object);
  return 0;
}

}  // namespace abacus::fuzz

#ifdef ABACUS_FUZZ_ENTRY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abacus::fuzz::FuzzWorkloadYaml(data, size);
}
#endif

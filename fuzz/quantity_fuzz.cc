#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_targets.h"
#include "model/quantity.h"

namespace abacus::fuzz {

int FuzzQuantity(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = Quantity::Parse(text);
  if (!q.ok()) return 0;
  std::string printed = q->ToString();
  auto again = Quantity::Parse(printed);
  if (!again.ok() || *again != *q) {
    std::fprintf(stderr, "quantity '%.*s' printed as '%s' does not parse back to the same value\n",
                 static_cast<int>(size), text.data(), printed.c_str());
    std::abort();
  }
  (void)q->CeilUnits();
  return 0;
}

}  // namespace abacus::fuzz

#ifdef ABACUS_FUZZ_ENTRY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abacus::fuzz::FuzzQuantity(data, size);
}
#endif

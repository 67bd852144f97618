// One rule for the `XJson(const Result<T>&)` overloads of the edge's encoders: a result's error
// passes through, its value is encoded.
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace abacus::server {

// `r`'s error, or `encode(*r)`.
template <typename T, typename Encode>
Result<nlohmann::json> EncodeResult(const Result<T>& r, Encode encode) {
  if (!r.ok()) return r.status();
  return encode(*r);
}

}  // namespace abacus::server

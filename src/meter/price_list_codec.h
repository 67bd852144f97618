// YAML/JSON codec of `kind: PriceList`:
//
//   kind: PriceList
//   name: default                 # or metadata: {name: default}
//   spec:
//     currency: USD               # default USD
//     prices:
//       - {flavor: gpu/nvidia/A100-80G, perHour: "2.5", effectiveFrom: 2026-01-01T00:00:00Z}
//       - {flavor: "gpu/*", perHour: "1.2"}           # effectiveFrom: always
//     cpu: {perCoreHour: "0.04"}                      # or a list of {perCoreHour, effectiveFrom}
//     memory: {perGiBHour: "0.005"}                   # or a list of {perGiBHour, effectiveFrom}
//
// Problems are reported to the context as "FILE:LINE: field: message", all at once.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "meter/price_list.h"
#include "tenancy/yaml_reader.h"

namespace abacus::meter {

// Reads one PriceList document; nullopt when it had any problem (each reported to `ctx`).
std::optional<PriceList> DecodePriceList(const SpecNode& doc, SpecContext& ctx);
// Reads a PriceList from its JSON form (REST body); nullopt with problems in `ctx`.
std::optional<PriceList> DecodePriceListJson(const nlohmann::json& doc, SpecContext& ctx);
// Returns the canonical JSON form (kind first); DecodePriceList reads it back unchanged.
nlohmann::ordered_json EncodePriceList(const PriceList& prices);
// Makes ParseDocuments (src/workload/documents.h) read `kind: PriceList` documents into
// ParsedDocuments::extensions, in the canonical JSON form. Idempotent.
void RegisterPriceListKind();

}  // namespace abacus::meter

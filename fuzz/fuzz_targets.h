// Fuzz targets over the decoders: each takes arbitrary bytes, must never crash, hang or leak,
// and checks a property of what it decodes (calling std::abort when it does not hold, so that
// libFuzzer and the replay test report it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace abacus::fuzz {

// Quantity::Parse; a parsed quantity must survive Parse(ToString()).
int FuzzQuantity(const uint8_t* data, size_t size);
// ParseDocuments over multi-document YAML, then the cross-document checks; every decoded
// object must survive encode → JSON → decode unchanged.
int FuzzWorkloadYaml(const uint8_t* data, size_t size);
// JSON → SpecObjectFromJson / GovernanceObjectFromJson / WorkloadFromJson, with the same
// round-trip property.
int FuzzWorkloadJson(const uint8_t* data, size_t size);

// One raw HTTP request (request line, headers, body) served in-process by the real HttpServer
// over an in-memory ControlPlane (HttpServer::ServeRaw): `@admin@`, `@join@`, `@tadmin@`,
// `@member@` and `@viewer@` in the input become real bearer tokens. The answer must be
// well-formed HTTP, and an error answer the JSON error object.
int FuzzHttpRequest(const uint8_t* data, size_t size);

// Inputs longer than this are ignored: the decoders are meant for request bodies, which the
// server bounds, and long inputs only slow the search down.
inline constexpr size_t kMaxFuzzInput = 64 * 1024;

}  // namespace abacus::fuzz

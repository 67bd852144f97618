// The few cryptographic primitives governance needs, over OpenSSL: SHA-256, a CSPRNG and a
// constant-time comparison.
#pragma once

#include <string>
#include <string_view>

namespace abacus::govern {

// Returns the lower-case hex SHA-256 (64 characters) of `data`.
std::string Sha256Hex(std::string_view data);
// Sha256Hex of a bearer token, remembering the last token this thread hashed: an HTTP worker
// serves one kept-alive connection, whose every request carries the same token.
std::string BearerSha256Hex(std::string_view token);
// Returns `bytes` bytes from OpenSSL's CSPRNG as lower-case hex. Aborts when the CSPRNG fails
// (a process that cannot make secrets must not hand out guessable ones).
std::string RandomHex(size_t bytes);
// Returns the lower-case hex HMAC-SHA256 (64 characters) of `data` under `key`.
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// True when `a` and `b` are equal, taking time that depends only on their lengths.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

}  // namespace abacus::govern

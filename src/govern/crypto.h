// The few cryptographic primitives governance needs, over OpenSSL: SHA-256, a CSPRNG and a
// constant-time comparison.
#pragma once

#include <string>
#include <string_view>

namespace abacus::govern {

// Returns the lower-case hex SHA-256 (64 characters) of `data`.
std::string Sha256Hex(std::string_view data);
// Returns `bytes` bytes from OpenSSL's CSPRNG as lower-case hex. Aborts when the CSPRNG fails
// (a process that cannot make secrets must not hand out guessable ones).
std::string RandomHex(size_t bytes);
// True when `a` and `b` are equal, taking time that depends only on their lengths.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

}  // namespace abacus::govern

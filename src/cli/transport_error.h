// What a client says when a request got no HTTP answer: what happened and what to do, never a
// library's enum name ("Connection", "SSLServerVerification").
#pragma once

#include <httplib.h>

#include <string>

#include "cli/transport_failure.h"

namespace abacus::cli {

// Returns the library-independent failure for httplib's `error`.
TransportFailure TransportFailureOf(httplib::Error error);

// Returns "cannot connect to SERVER: connection refused or host not found — is `abacus server`
// running there? Set --server or $ABACUS_SERVER" and the like for `error`; `ca_cert` is the CA
// file in use ("" for the system's), named in the TLS hints.
std::string DescribeTransportError(httplib::Error error, const std::string& server, const std::string& ca_cert);

}  // namespace abacus::cli

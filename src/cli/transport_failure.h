// Why a request got no HTTP answer, independent of the HTTP library that sent it, and what the
// CLI says then: what happened and what to do (never a library's enum name).
#pragma once

#include <string>

namespace abacus::cli {

enum class TransportFailure {
  kOther,
  kConnect,         // refused, host not found
  kConnectTimeout,  // no answer to the connection in time
  kBind,            // the local address could not be bound
  kTlsVerify,       // the server's certificate is not trusted
  kTlsHandshake,    // no TLS on the other end, or a failed handshake
  kTlsCerts,        // the CA file could not be loaded
  kRead,            // closed or timed out before the whole answer
  kWrite,           // the request could not be sent
  kRedirects,
  kCanceled,
  kCompression,
};

// Returns "cannot connect to SERVER: connection refused or host not found — is `abacus server`
// running there? (set --server or $ABACUS_SERVER)" and the like; `ca_cert` is the CA file in
// use ("" for the system's), named in the TLS hints.
std::string DescribeTransportFailure(TransportFailure failure, const std::string& server, const std::string& ca_cert);

}  // namespace abacus::cli

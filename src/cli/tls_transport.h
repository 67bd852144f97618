// https:// for ApiClient: cpp-httplib over OpenSSL, in the full binary only (abacus-core), so
// that the lean client loads no TLS library for http:// servers (docs/cli.md "Start cost").
#pragma once

namespace abacus::cli {

// Registers the TLS transport with ApiClient (SetTlsTransportFactory).
void RegisterTlsTransport();

}  // namespace abacus::cli

#include "cli/transport_failure.h"

namespace abacus::cli {

std::string DescribeTransportFailure(TransportFailure failure, const std::string& server, const std::string& ca_cert) {
  const std::string where = "cannot connect to " + server + ": ";
  const std::string which = " (set --server or $ABACUS_SERVER)";
  const std::string ca_hint =
      ca_cert.empty() ? "; pass --ca-cert FILE or set $ABACUS_CA_CERT to the CA certificate that signed it"
                      : "; the CA in " + ca_cert + " (--ca-cert or $ABACUS_CA_CERT) did not sign it: name the CA "
                                                   "that signed the server's certificate";
  switch (failure) {
    case TransportFailure::kConnect:
      return where + "connection refused or host not found — is `abacus server` running there?" + which;
    case TransportFailure::kConnectTimeout:
      return where + "no answer to the connection within 5 s — is the host up and the port open?" + which;
    case TransportFailure::kBind:
      return where + "could not bind the local address" + which;
    case TransportFailure::kTlsVerify:
      return where + "the server's TLS certificate is not trusted" + ca_hint;
    case TransportFailure::kTlsHandshake:
      return where + "the TLS handshake failed — does the server speak https on that port? (a server without "
                     "TLS needs an http:// URL)" + which;
    case TransportFailure::kTlsCerts:
      return where + "cannot load the CA certificates" + (ca_cert.empty() ? std::string() : " from " + ca_cert) +
             "; pass --ca-cert FILE or set $ABACUS_CA_CERT to a readable PEM file";
    case TransportFailure::kRead:
      return "no answer from " + server +
             ": the connection closed or no answer came in time — is it an Abacus server, and does it speak this "
             "scheme? (a server with TLS needs an https:// URL)" + which;
    case TransportFailure::kWrite:
      return "sending the request to " + server + " failed: the connection closed — retry; if it persists, check "
                                                   "the server's log";
    case TransportFailure::kRedirects:
      return "request to " + server + " failed: too many redirects" + which;
    case TransportFailure::kCanceled:
      return "request to " + server + " was cancelled";
    case TransportFailure::kCompression:
      return "the answer of " + server + " could not be decompressed";
    case TransportFailure::kOther:
      break;
  }
  return "request to " + server + " failed before any answer came" + which;
}

}  // namespace abacus::cli

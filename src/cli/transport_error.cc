#include "cli/transport_error.h"

namespace abacus::cli {

TransportFailure TransportFailureOf(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection: return TransportFailure::kConnect;
    case httplib::Error::ConnectionTimeout: return TransportFailure::kConnectTimeout;
    case httplib::Error::BindIPAddress: return TransportFailure::kBind;
    case httplib::Error::SSLServerVerification: return TransportFailure::kTlsVerify;
    case httplib::Error::SSLConnection: return TransportFailure::kTlsHandshake;
    case httplib::Error::SSLLoadingCerts: return TransportFailure::kTlsCerts;
    case httplib::Error::Read: return TransportFailure::kRead;
    case httplib::Error::Write: return TransportFailure::kWrite;
    case httplib::Error::ExceedRedirectCount: return TransportFailure::kRedirects;
    case httplib::Error::Canceled: return TransportFailure::kCanceled;
    case httplib::Error::Compression: return TransportFailure::kCompression;
    default: return TransportFailure::kOther;
  }
}

std::string DescribeTransportError(httplib::Error error, const std::string& server, const std::string& ca_cert) {
  return DescribeTransportFailure(TransportFailureOf(error), server, ca_cert);
}

}  // namespace abacus::cli

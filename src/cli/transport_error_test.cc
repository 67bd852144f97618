#include "cli/transport_error.h"

#include <gtest/gtest.h>

namespace abacus::cli {
namespace {

// Before: "cannot reach the server: Connection (http://...)", httplib's enum name.
TEST(TransportErrorTest, SaysWhatHappenedAndWhatToDo) {
  for (int e = static_cast<int>(httplib::Error::Unknown); e <= static_cast<int>(httplib::Error::ConnectionTimeout); ++e) {
    auto error = static_cast<httplib::Error>(e);
    std::string text = DescribeTransportError(error, "https://10.0.0.1:8420", "");
    EXPECT_NE(text.find("https://10.0.0.1:8420"), std::string::npos) << text;
    EXPECT_EQ(text.find(httplib::to_string(error)), std::string::npos) << "enum name in: " << text;
  }
  std::string refused = DescribeTransportError(httplib::Error::Connection, "http://127.0.0.1:8420", "");
  EXPECT_EQ(refused,
            "cannot connect to http://127.0.0.1:8420: connection refused or host not found — is `abacus server` "
            "running there? (set --server or $ABACUS_SERVER)");
  std::string tls = DescribeTransportError(httplib::Error::SSLServerVerification, "https://h:8420", "");
  EXPECT_NE(tls.find("not trusted; pass --ca-cert FILE or set $ABACUS_CA_CERT"), std::string::npos) << tls;
  std::string wrong_ca = DescribeTransportError(httplib::Error::SSLServerVerification, "https://h:8420", "/etc/ca.pem");
  EXPECT_NE(wrong_ca.find("/etc/ca.pem"), std::string::npos) << wrong_ca;
}

}  // namespace
}  // namespace abacus::cli

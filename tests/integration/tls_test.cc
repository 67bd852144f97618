// HTTPS on the API (docs/operations.md): a server with a certificate answers clients and agents
// that trust it ($ABACUS_CA_CERT), refuses plain HTTP, and a client that does not trust the
// certificate cannot connect.
#include <gtest/gtest.h>

#include <cstdlib>

#include "server_process.h"

namespace abacus::testing {
namespace {

TEST(TlsTest, ServerSpeaksHttpsToClientsAndAgentsThatTrustIt) {
  TempDir dir;
  std::string cert = dir.path() + "/cert.pem", key = dir.path() + "/key.pem";
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key + " -out " + cert +
                    " -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a certificate";
  ServerProcess server(dir.path() + "/data", {"--tls-cert", cert, "--tls-key", key});
  ASSERT_EQ(server.url().rfind("https://127.0.0.1:", 0), 0u) << server.url();

  // Not trusted yet: the certificate is self-signed.
  unsetenv("ABACUS_CA_CERT");
  EXPECT_EQ(server.Client().Get("/readyz").status, 0);
  // Plain HTTP to the HTTPS port gets no answer.
  std::string plain = "http" + server.url().substr(5);
  EXPECT_EQ(cli::ApiClient({plain, server.token()}).Get("/readyz").status, 0);

  setenv("ABACUS_CA_CERT", cert.c_str(), 1);
  EXPECT_EQ(server.Client().Get("/readyz").status, 200);
  // An agent (it inherits the variable) registers over HTTPS.
  AgentProcess agent(server, "tls-node", "gpu:nvidia:T4:1:16Gi");
  auto node = server.Client().Get("/api/v1/nodes/tls-node");
  EXPECT_EQ(node.status, 200);
  EXPECT_TRUE(node.body.value("agent", false));
  unsetenv("ABACUS_CA_CERT");
}

}  // namespace
}  // namespace abacus::testing

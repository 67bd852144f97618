#include "cli/tls_transport.h"

#include <httplib.h>

#include "cli/client.h"
#include "cli/transport_error.h"
#include "net/http_transport.h"

namespace abacus::cli {
namespace {

class TlsTransport final : public HttpTransport {
 public:
  explicit TlsTransport(std::unique_ptr<httplib::ClientImpl> client) : client_(std::move(client)) {}
  WireAnswer Send(const std::string& method, const std::string& path, const std::string& content_type,
                  const std::string& body, const std::string& idempotency_key) override {
    httplib::Headers headers;
    if (!idempotency_key.empty()) headers.emplace("Idempotency-Key", idempotency_key);
    httplib::ClientImpl& c = *client_;
    httplib::Result r = method == "GET"      ? c.Get(path)
                        : method == "DELETE" ? c.Delete(path)
                        : method == "PUT"    ? c.Put(path, body, content_type)
                        : method == "PATCH"  ? c.Patch(path, body, content_type)
                                             : c.Post(path, headers, body, content_type);
    WireAnswer a;
    if (!r) {
      a.failure = TransportFailureOf(r.error());
      a.error = httplib::to_string(r.error());
      return a;
    }
    a.status = r->status;
    a.body = std::move(r->body);
    return a;
  }

 private:
  std::unique_ptr<httplib::ClientImpl> client_;
};

std::unique_ptr<HttpTransport> MakeTlsTransport(const ClientConfig& config, const net::ServerUrl&) {
  auto made = net::MakeClient(config.server);
  if (!made.ok()) return nullptr;
  httplib::ClientImpl& c = **made;
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(60, 0);
  c.set_write_timeout(60, 0);
  if (!config.token.empty()) c.set_bearer_token_auth(config.token.c_str());
  if (!config.ca_cert.empty()) c.set_ca_cert_path(config.ca_cert.c_str());
  return std::make_unique<TlsTransport>(std::move(*made));
}

}  // namespace

void RegisterTlsTransport() { SetTlsTransportFactory(&MakeTlsTransport); }

}  // namespace abacus::cli

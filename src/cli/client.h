// The REST client of the CLI verbs: where the server is and which token to send, and one call
// per request. Resolution order (DESIGN §6): --server/--token, else ABACUS_SERVER/ABACUS_TOKEN,
// else the config file `abacus up` writes (ABACUS_CONFIG, else $XDG_CONFIG_HOME/abacus/
// config.yaml, else ~/.config/abacus/config.yaml), else http://127.0.0.1:8420 and no token.
#pragma once

#include <nlohmann/json.hpp>
#include <memory>
#include <string>

#include "cli/wire_client.h"
#include "common/status.h"
#include "net/server_url.h"

namespace abacus::cli {

// Exit codes of the client verbs.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;      // the server said no (4xx/5xx)
inline constexpr int kExitUsage = 2;        // bad arguments, unreadable file
inline constexpr int kExitUnreachable = 3;  // no answer from the server

struct ClientConfig {
  ClientConfig() = default;
  ClientConfig(std::string server_url, std::string bearer, std::string ca_file = "")
      : server(std::move(server_url)), token(std::move(bearer)), ca_cert(std::move(ca_file)) {}

  std::string server = "http://127.0.0.1:8420";
  std::string token;
  std::string ca_cert;  // CA file for https:// servers; "" for $ABACUS_CA_CERT, else the system's
};

// Returns the config file path (see above); empty when no home is known.
std::string ClientConfigPath();
// Resolves server, token and CA file from flags, environment and the config file (`caCert`).
ClientConfig ResolveClientConfig(const std::string& flag_server, const std::string& flag_token,
                                 const std::string& flag_ca_cert = "");
// Writes the config file: `server` and `tokenFile` (read at each call).
Status WriteClientConfig(const std::string& path, const std::string& server, const std::string& token_file);

struct ApiResponse {
  int status = 0;          // HTTP status; 0 when the server could not be reached
  nlohmann::json body;     // parsed JSON (null when the body was not JSON)
  std::string text;        // raw body
  std::string error;       // what went wrong and what to do, when status == 0

  bool ok() const { return status >= 200 && status < 300; }
  // Returns the exit code for this response.
  int ExitCode() const { return ok() ? kExitOk : status == 0 ? kExitUnreachable : kExitRefused; }
  // Returns "error: MESSAGE" lines for a failed response (details one per line).
  std::string ErrorText() const;
};

// How ApiClient sends one request: http:// uses the CLI's own HTTP/1.1 client (wire_client.h,
// no TLS library); https:// a transport the full binary registers (tls_transport.h).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends one request and returns the answer, or status 0 with the failure.
  virtual WireAnswer Send(const std::string& method, const std::string& path, const std::string& content_type,
                          const std::string& body, const std::string& idempotency_key) = 0;
};
using TlsTransportFactory = std::unique_ptr<HttpTransport> (*)(const ClientConfig& config, const net::ServerUrl& url);
// Sets the transport for https:// servers (none: ApiClient refuses them, naming abacus-core).
void SetTlsTransportFactory(TlsTransportFactory factory);

class ApiClient {
 public:
  explicit ApiClient(ClientConfig config);
  ~ApiClient();
  // Movable, not copyable: a client owns its connection (a copy would share and free it twice).
  ApiClient(ApiClient&& other) noexcept;
  ApiClient& operator=(ApiClient&& other) noexcept;
  ApiResponse Get(const std::string& path);
  ApiResponse Post(const std::string& path, const std::string& body, const std::string& content_type);
  ApiResponse Delete(const std::string& path);
  // Post with an `Idempotency-Key: key` header; when no answer arrives (connection reset,
  // timeout) sends the same request once more: the server answers a repeat with the first
  // answer, so the retry never does the work twice (submit, apply, cancel).
  ApiResponse PostIdempotent(const std::string& path, const std::string& body, const std::string& content_type,
                             const std::string& key);
  ApiResponse Put(const std::string& path, const std::string& body, const std::string& content_type);
  ApiResponse Patch(const std::string& path, const std::string& body, const std::string& content_type);
  // Post for load generators: a successful answer's body is kept as text, not parsed (an error
  // answer is parsed, for ErrorText).
  ApiResponse PostUnparsed(const std::string& path, const std::string& body, const std::string& content_type);
  const ClientConfig& config() const { return config_; }

 private:
  ApiResponse Do(const std::string& method, const std::string& path, const std::string& body,
                 const std::string& content_type, bool parse_success = true, const std::string& idempotency_key = "");
  ClientConfig config_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes a path segment or query value.
std::string UrlEncode(const std::string& s);

// A fresh Idempotency-Key for one request of this CLI: "abacus-cli-" and 32 random hex digits.
std::string NewIdempotencyKey();

}  // namespace abacus::cli

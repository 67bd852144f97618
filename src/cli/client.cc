#include "cli/client.h"

#include <sys/random.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "cli/wire_client.h"
#include "common/mutex.h"
#include "common/private_file.h"
#include "net/server_url.h"

namespace abacus::cli {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// The fields of a client config file (empty when absent).
struct FileSettings {
  std::string server, token, ca, token_file;
};

// Parses the client config file at `path` once per process and version of the file (its size
// and modification time): a command resolves its connection more than once (the lean client's
// https:// check, then the verb), and YAML costs more than the rest of a short command. An
// absent or unreadable file gives empty fields (flags and env still work).
struct CachedConfigFile {
  std::string path;
  std::filesystem::file_time_type mtime;
  uintmax_t size = 0;
  FileSettings settings;
};
Mutex config_file_mu;
std::optional<CachedConfigFile> config_file_cache GUARDED_BY(config_file_mu);

FileSettings ReadConfigFile(const std::string& path) {
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path, ec);
  if (ec) return {};
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return {};
  MutexLock lock(config_file_mu);
  std::optional<CachedConfigFile>& cached = config_file_cache;
  if (cached && cached->path == path && cached->mtime == mtime && cached->size == size) return cached->settings;
  FileSettings f;
  try {
    YAML::Node n = YAML::LoadFile(path);
    if (n["server"]) f.server = n["server"].as<std::string>();
    if (n["token"]) f.token = n["token"].as<std::string>();
    if (n["caCert"]) f.ca = n["caCert"].as<std::string>();
    if (n["tokenFile"]) f.token_file = n["tokenFile"].as<std::string>();
  } catch (const std::exception&) {
    f = {};
  }
  cached = CachedConfigFile{path, mtime, size, f};
  return f;
}

}  // namespace

std::string ClientConfigPath() {
  if (std::string p = Env("ABACUS_CONFIG"); !p.empty()) return p;
  if (std::string x = Env("XDG_CONFIG_HOME"); !x.empty()) return x + "/abacus/config.yaml";
  if (std::string h = Env("HOME"); !h.empty()) return h + "/.config/abacus/config.yaml";
  return "";
}

ClientConfig ResolveClientConfig(const std::string& flag_server, const std::string& flag_token,
                                 const std::string& flag_ca_cert) {
  ClientConfig c;
  std::string file_server, file_token, file_ca;
  if (const std::string path = ClientConfigPath(); !path.empty()) {
    FileSettings f = ReadConfigFile(path);
    file_server = std::move(f.server);
    file_ca = std::move(f.ca);
    // The token file is read each time (it may be rotated under a long-running command).
    file_token = !f.token.empty() ? std::move(f.token) : !f.token_file.empty() ? ReadTrimmed(f.token_file) : "";
  }
  std::string env_server = Env("ABACUS_SERVER"), env_token = Env("ABACUS_TOKEN");
  c.server = !flag_server.empty() ? flag_server : !env_server.empty() ? env_server : !file_server.empty() ? file_server : c.server;
  c.token = !flag_token.empty() ? flag_token : !env_token.empty() ? env_token : file_token;
  std::string env_ca = Env("ABACUS_CA_CERT");
  c.ca_cert = !flag_ca_cert.empty() ? flag_ca_cert : !env_ca.empty() ? env_ca : file_ca;
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.find("://") == std::string::npos) c.server = "http://" + c.server;
  return c;
}

Status WriteClientConfig(const std::string& path, const std::string& server, const std::string& token_file) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::string text = "# Written by `abacus up`; read by the abacus client verbs.\nserver: " + server +
                     "\ntokenFile: " + token_file + "\n";
  return WritePrivateFile(path, text);
}

std::string ApiResponse::ErrorText() const {
  if (status == 0) return "error: " + error;
  std::string out;
  if (body.is_object() && body.contains("error")) {
    const auto& e = body["error"];
    if (e.contains("details") && e["details"].is_array()) {
      for (const auto& d : e["details"]) out += "error: " + d.get<std::string>() + "\n";
    } else {
      out = "error: " + e.value("message", "") + "\n";
    }
  } else {
    out = "error: HTTP " + std::to_string(status) + ": " + text + "\n";
  }
  if (status == 401) out += "hint: pass --token, set ABACUS_TOKEN, or run `abacus up` to write the config file\n";
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

namespace {

TlsTransportFactory g_tls_factory = nullptr;

// http://: the CLI's own HTTP/1.1 client (cli/wire_client.h), no TLS library loaded.
class PlainTransport final : public HttpTransport {
 public:
  PlainTransport(const ClientConfig& config, const net::ServerUrl& url)
      : client_(url.host, url.port), token_(config.token) {
    host_ = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
    host_ += ":" + std::to_string(url.port);
    client_.SetTimeouts(5, 60);
  }
  WireAnswer Send(const std::string& method, const std::string& path, const std::string& content_type,
                  const std::string& body, const std::string& idempotency_key) override {
    std::vector<std::pair<std::string, std::string>> extra;
    if (!idempotency_key.empty()) extra.emplace_back("Idempotency-Key", idempotency_key);
    const bool has_body = method != "GET" && method != "DELETE";
    return client_.RoundTrip(WireClient::Request(method, path, host_, token_, has_body ? content_type : "",
                                                 has_body ? body : "", extra));
  }

 private:
  WireClient client_;
  std::string token_;
  std::string host_;
};

}  // namespace

void SetTlsTransportFactory(TlsTransportFactory factory) { g_tls_factory = factory; }

struct ApiClient::Impl {
  std::unique_ptr<HttpTransport> transport;  // null when the server URL is invalid
  std::string url_error;
};

ApiClient::ApiClient(ClientConfig config) : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  auto url = net::ParseServerUrl(config_.server);
  if (!url.ok()) {
    impl_->url_error = "invalid " + url.status().message() + "; set --server or $ABACUS_SERVER";
    return;
  }
  if (!url->tls) {
    impl_->transport = std::make_unique<PlainTransport>(config_, *url);
  } else if (g_tls_factory != nullptr) {
    impl_->transport = g_tls_factory(config_, *url);
    if (!impl_->transport) impl_->url_error = "cannot set up TLS for " + config_.server;
  } else {
    impl_->url_error = "this client has no TLS support for " + config_.server + " (run the full binary, abacus-core)";
  }
}

ApiClient::~ApiClient() = default;
ApiClient::ApiClient(ApiClient&& other) noexcept = default;
ApiClient& ApiClient::operator=(ApiClient&& other) noexcept = default;

ApiResponse ApiClient::Do(const std::string& method, const std::string& path, const std::string& body,
                          const std::string& content_type, bool parse_success, const std::string& idempotency_key) {
  ApiResponse out;
  if (!impl_->transport) {
    out.error = impl_->url_error;
    return out;
  }
  WireAnswer r = impl_->transport->Send(method, path, content_type, body, idempotency_key);
  if (r.status == 0) {
    out.error = DescribeTransportFailure(r.failure, config_.server, config_.ca_cert);
    return out;
  }
  out.status = r.status;
  out.text = std::move(r.body);
  if (!parse_success && out.ok()) return out;
  out.body = nlohmann::json::parse(out.text, nullptr, false);
  if (out.body.is_discarded()) out.body = nullptr;
  return out;
}

ApiResponse ApiClient::Get(const std::string& path) { return Do("GET", path, "", ""); }
ApiResponse ApiClient::Post(const std::string& path, const std::string& body, const std::string& content_type) {
  return Do("POST", path, body, content_type);
}
ApiResponse ApiClient::Delete(const std::string& path) { return Do("DELETE", path, "", ""); }
ApiResponse ApiClient::PostIdempotent(const std::string& path, const std::string& body, const std::string& content_type,
                                      const std::string& key) {
  ApiResponse r = Do("POST", path, body, content_type, true, key);
  if (r.status == 0 && impl_->transport) r = Do("POST", path, body, content_type, true, key);  // the answer was lost
  return r;
}
ApiResponse ApiClient::Put(const std::string& path, const std::string& body, const std::string& content_type) {
  return Do("PUT", path, body, content_type);
}
ApiResponse ApiClient::Patch(const std::string& path, const std::string& body, const std::string& content_type) {
  return Do("PATCH", path, body, content_type);
}
ApiResponse ApiClient::PostUnparsed(const std::string& path, const std::string& body, const std::string& content_type) {
  return Do("POST", path, body, content_type, /*parse_success=*/false);
}

std::string UrlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string NewIdempotencyKey() {
  // A key only has to be unique per request: the kernel's generator, no crypto library loaded.
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out = "abacus-cli-";
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

}  // namespace abacus::cli

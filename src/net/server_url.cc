#include "net/server_url.h"

#include <string_view>

namespace abacus::net {

Result<ServerUrl> ParseServerUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("server URL '" + url + "': " + why + " (expected http://HOST:PORT or https://HOST:PORT)");
  };
  ServerUrl out;
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    out.tls = true;
  } else {
    return bad("unknown scheme");
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  std::string_view port;
  if (rest.starts_with("[")) {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return bad("unclosed '['");
    out.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && !rest.starts_with(":")) return bad("text after ']'");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    size_t colon = rest.find(':');
    out.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  out.port = out.tls ? 443 : 80;
  if (!port.empty()) {
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) return bad("port must be a number from 1 to 65535");
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return bad("port must be a number from 1 to 65535");
    out.port = p;
  }
  return out;
}

}  // namespace abacus::net

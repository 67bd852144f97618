// Where a server URL points (http:// or https://), parsed without any HTTP library so that the
// lean client can read it.
#pragma once

#include <string>

#include "common/status.h"

namespace abacus::net {

// Where an http:// or https:// server URL points.
struct ServerUrl {
  bool tls = false;
  std::string host;  // without the brackets of an IPv6 literal
  int port = 0;      // 80 or 443 when the URL names none
};

// Parses "http://HOST[:PORT][/...]" or "https://...". InvalidArgument names what is wrong.
Result<ServerUrl> ParseServerUrl(const std::string& url);

}  // namespace abacus::net

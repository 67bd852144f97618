// ServerList: the servers an agent may talk to (`--server URL1,URL2`, HA) and the one it talks to
// now. After a failed call — no answer, or a 503/421 from a server that is not the leader — the
// agent moves on: to the leader that answer named, else to the next URL in the list (the agent
// loop backs off between failed calls). Registration is idempotent, so re-registering with a new
// leader is fine. Not thread-safe: AgentClient guards it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus::agent {

class ServerList {
 public:
  // Parses "URL1,URL2,..." (spaces around commas ignored; a bare "host:port" gets http://, a
  // trailing '/' is dropped). InvalidArgument when no URL is given.
  static Result<ServerList> Parse(std::string_view servers);
  // Takes normalized URLs; `urls` must not be empty.
  explicit ServerList(std::vector<std::string> urls);

  // Returns the URL to call now.
  const std::string& current() const { return urls_[current_]; }
  // Records that a call to `url` failed. When the answer named the leader (`leader`, normalized;
  // added to the list when new), calls go there next; else to the URL after `url`. A failure of a
  // URL that is no longer the current one changes nothing (another call moved on already).
  void Failed(const std::string& url, const std::string& leader = "");
  // Returns every URL, in order (leaders learned from answers at the end).
  const std::vector<std::string>& urls() const { return urls_; }

 private:
  std::vector<std::string> urls_;
  size_t current_ = 0;
};

// Returns `server` with http:// added when it has no scheme and without trailing slashes.
std::string NormalizeServerUrl(std::string server);

}  // namespace abacus::agent

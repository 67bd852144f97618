#include "agent/loop/server_list.h"

#include <algorithm>

namespace abacus::agent {

std::string NormalizeServerUrl(std::string server) {
  while (!server.empty() && server.back() == '/') server.pop_back();
  if (!server.empty() && server.find("://") == std::string::npos) server = "http://" + server;
  return server;
}

Result<ServerList> ServerList::Parse(std::string_view servers) {
  std::vector<std::string> urls;
  while (true) {
    size_t comma = servers.find(',');
    std::string_view item = servers.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    std::string url = NormalizeServerUrl(std::string(item));
    if (!url.empty() && std::find(urls.begin(), urls.end(), url) == urls.end()) urls.push_back(std::move(url));
    if (comma == std::string_view::npos) break;
    servers.remove_prefix(comma + 1);
  }
  if (urls.empty()) return InvalidArgument("no server URL given (expected URL or URL1,URL2,...)");
  return ServerList(std::move(urls));
}

ServerList::ServerList(std::vector<std::string> urls) : urls_(std::move(urls)) {}

void ServerList::Failed(const std::string& url, const std::string& leader) {
  if (url != current()) return;
  std::string next = NormalizeServerUrl(leader);
  if (!next.empty() && next != url) {
    auto it = std::find(urls_.begin(), urls_.end(), next);
    if (it == urls_.end()) it = urls_.insert(urls_.end(), next);
    current_ = static_cast<size_t>(it - urls_.begin());
    return;
  }
  current_ = (current_ + 1) % urls_.size();
}

}  // namespace abacus::agent

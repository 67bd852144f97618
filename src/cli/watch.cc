#include "cli/watch.h"

#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <sstream>

#include "cli/client.h"
#include "cli/output.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

// Long polls end on the server after this; the client's read timeout (60 s) is longer.
constexpr int kWatchSeconds = 25;

extern "C" void OnInterrupt(int) { _exit(kExitOk); }

}  // namespace

std::string WatchPath(const std::string& path, uint64_t version) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + "watch=1&timeoutSeconds=" +
         std::to_string(kWatchSeconds) + "&resourceVersion=" + std::to_string(version);
}

json WithoutVolatileFields(json item) {
  if (item.is_object()) {
    for (const char* k : {"heartbeatAgeSeconds", "lastHeartbeatUs", "heartbeatLate", "utilization"}) item.erase(k);
  }
  return item;
}

void EndCleanlyOnInterrupt() {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

int RunWatch(ApiClient& api, const WatchSpec& spec) {
  EndCleanlyOnInterrupt();
  std::map<std::string, json> shown;  // key → the item as last printed
  bool header = true;
  uint64_t version = 0;
  while (true) {
    ApiResponse r = api.Get(WatchPath(spec.path, version));
    if (!r.ok()) {
      if (r.status == 0) {
        std::cerr << "error: the watch ended: the server at " << api.config().server
                  << " no longer answers (stopped or restarted); run the command again once it is back\n";
      } else {
        std::cerr << r.ErrorText() << "\n";
      }
      return r.ExitCode();
    }
    version = r.body.value("resourceVersion", uint64_t{0});
    json fresh = json::array();
    for (const json& item : r.body.value("items", json::array())) {
      const std::string key = item.value(spec.key, "");
      if (!spec.only.empty() && key != spec.only && item.value("name", "") != spec.only) continue;
      json compared = WithoutVolatileFields(item);
      auto it = shown.find(key);
      if (it != shown.end() && it->second == compared) continue;  // nothing new for this item
      shown[key] = std::move(compared);
      fresh.push_back(item);
    }
    if (fresh.empty()) continue;
    if (spec.output == "json") {
      for (const json& item : fresh) std::cout << item.dump() << "\n";
    } else if (spec.output == "yaml") {
      for (const json& item : fresh) {
        std::cout << "---\n";
        PrintDocument(std::cout, item, "yaml");
      }
    } else {
      std::ostringstream table;
      spec.table(fresh, table);
      std::string text = table.str();
      if (!header && spec.headed) text.erase(0, text.find('\n') + 1);
      header = false;
      std::cout << text;
    }
    std::cout.flush();
  }
}

}  // namespace abacus::cli

// `abacus get KIND -w` and `abacus events -w` (docs/cli.md "Watching"): the list, then every
// change the server streams (GET …?watch=1&resourceVersion=N long polls, docs/api.md), until
// Ctrl-C (exit 0) or the server goes away (exit 3).
#pragma once

#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace abacus::cli {

class ApiClient;

struct WatchSpec {
  std::string path;           // the list route with its query, e.g. "/api/v1/workloads?state=Running"
  std::string key = "name";   // the field that names an item ("id" for workloads)
  std::string only;           // print only the item whose key or name is this ("" : all)
  std::string output = "table";  // json / yaml: one document per changed item; else `table`
  // Prints `items` as a table; with `headed`, its first line is the header, dropped after the
  // first batch (-o name prints no header).
  std::function<void(const nlohmann::json& items, std::ostream& out)> table;
  bool headed = true;
};

// Runs the watch of `spec`; returns the exit code.
int RunWatch(ApiClient& api, const WatchSpec& spec);
// `path` (a list route) as a long poll for changes after `version` (0: the list at once).
std::string WatchPath(const std::string& path, uint64_t version);
// The fields of an item that change without news (heartbeat ages); not compared.
nlohmann::json WithoutVolatileFields(nlohmann::json item);
// Ends the process with exit 0 on Ctrl-C (SIGINT), output flushed as it was printed.
void EndCleanlyOnInterrupt();

}  // namespace abacus::cli

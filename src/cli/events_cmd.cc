// `abacus events [WORKLOAD] [-w]`: workload events as a table, streamed with -w (GET
// /api/v1/events, docs/api.md "Watching").
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "cli/client.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "cli/watch.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct EventsArgs {
  std::string server, token, ca_cert, output = "table", workload;
  bool watch = false;
};

std::string Message(const json& e) {
  const json d = e.value("details", json::object());
  if (!d.is_object()) return "-";
  std::string m = d.value("message", "");
  if (m.empty()) m = d.value("state", "");
  return m.empty() ? "-" : m;
}

void PrintEvents(const json& items, const std::string& output, bool header) {
  if (output == "json" || output == "yaml") {
    for (const json& e : items) {
      if (output == "json") {
        std::cout << e.dump() << "\n";
      } else {
        std::cout << "---\n";
        PrintDocument(std::cout, e, "yaml");
      }
    }
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const json& e : items) {
    std::string name = e.value("name", "");
    rows.push_back({e.value("time", "-"), name.empty() ? e.value("workload", "-") : name, e.value("type", "-"),
                    Message(e)});
  }
  std::ostringstream table;
  PrintTable(table, {"TIME", "WORKLOAD", "TYPE", "MESSAGE"}, rows);
  std::string text = table.str();
  if (!header) text.erase(0, text.find('\n') + 1);
  std::cout << text;
  std::cout.flush();
}

int RunEvents(const EventsArgs& a) {
  ApiClient api(ResolveClientConfig(a.server, a.token, a.ca_cert));
  std::string base = "/api/v1/events";
  if (!a.workload.empty()) base += "?workload=" + UrlEncode(a.workload);
  const char* sep = a.workload.empty() ? "?" : "&";
  if (a.watch) EndCleanlyOnInterrupt();
  std::set<std::pair<std::string, int64_t>> seen;  // (workload, seq): a listed event is not printed twice
  uint64_t version = 0;
  bool header = true;
  while (true) {
    std::string path = base;
    if (a.watch && version != 0) {
      path += std::string(sep) + "watch=1&timeoutSeconds=25&resourceVersion=" + std::to_string(version);
    }
    ApiResponse r = api.Get(path);
    if (!r.ok()) {
      if (r.status == 0 && version != 0) {
        std::cerr << "error: the watch ended: the server at " << api.config().server
                  << " no longer answers (stopped or restarted); run the command again once it is back\n";
      } else {
        std::cerr << r.ErrorText() << "\n";
      }
      return r.ExitCode();
    }
    version = r.body.value("resourceVersion", uint64_t{0});
    json fresh = json::array();
    for (const json& e : r.body.value("items", json::array())) {
      if (seen.insert({e.value("workload", ""), e.value("seq", int64_t{0})}).second) fresh.push_back(e);
    }
    if (!a.watch) {
      if (fresh.empty() && a.output == "table") {
        std::cout << "No events found.\n";
        return kExitOk;
      }
      PrintEvents(fresh, a.output, true);
      return kExitOk;
    }
    if (!fresh.empty()) {
      PrintEvents(fresh, a.output, header);
      header = false;
    }
  }
}

}  // namespace

void AddEventsCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<EventsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "events",
      "Workload events (Submitted, Admitted, Running, Preempted, Succeeded, ...) of the workloads you may see:\n"
      "one workload's from the start, or without WORKLOAD the recent ones this server holds.\n"
      "-w streams new events as the server commits them, until Ctrl-C.\n"
      "Examples: abacus events llama-ft\n"
      "          abacus events -w\n"
      "          abacus events llama-ft -w -o json");
  cmd->add_option("WORKLOAD", a->workload, "id or name (default: every workload you may see)");
  cmd->add_flag("-w,--watch", a->watch, "stream new events until Ctrl-C");
  cmd->add_option("--server", a->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", a->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", a->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  cmd->add_option("-o,--output", a->output, "table, json or yaml (json and yaml: one document per event)")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  cmd->callback([a, exit_code] { *exit_code = RunEvents(*a); });
}

}  // namespace abacus::cli

// `abacus version`: what this client is, and what the server it talks to is (GET /api/v1/version).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli/client.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "common/build_info.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct VersionOptions {
  std::string server, token, ca_cert, output = "table";
  bool client_only = false;
};

int RunVersion(const VersionOptions& o) {
  json client = {{"version", std::string(BuildVersion())},
                 {"gitCommit", std::string(BuildCommit())},
                 {"buildDate", std::string(BuildDate())}};
  json doc = {{"client", client}};
  std::string unreachable;
  ClientConfig config = ResolveClientConfig(o.server, o.token, o.ca_cert);
  if (!o.client_only) {
    ApiClient api(config);
    ApiResponse r = api.Get("/api/v1/version");
    if (r.ok()) {
      doc["server"] = r.body;
      doc["server"]["url"] = config.server;
    } else {
      unreachable = r.ErrorText();
    }
  }
  if (o.output != "table") {
    PrintDocument(std::cout, doc, o.output);
  } else {
    std::cout << "Client: abacus " << BuildVersion() << " (commit " << BuildCommit() << ", built " << BuildDate()
              << ")\n";
    if (doc.contains("server")) {
      const json& s = doc["server"];
      std::cout << "Server: abacus " << s.value("version", "?") << " (commit " << s.value("gitCommit", "?") << ", built "
                << s.value("buildDate", "?") << ", store schema " << s.value("storeSchemaVersion", 0) << ") at "
                << config.server << "\n";
    }
  }
  // The client's own version is the answer; a server that does not answer is said, not an error.
  if (!unreachable.empty()) std::cerr << "Server: not shown: " << unreachable.substr(unreachable.find(' ') + 1) << "\n";
  return kExitOk;
}

}  // namespace

void AddVersionCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<VersionOptions>();
  CLI::App* cmd = app.add_subcommand("version",
                                     "Print the client's version, git commit and build day, and the server's (with "
                                     "its store schema version) when it answers.\n"
                                     "Examples: abacus version\n"
                                     "          abacus version --client -o json");
  cmd->add_flag("--client", o->client_only, "the client's version only; do not ask the server");
  cmd->add_option("--server", o->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", o->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", o->ca_cert,
                  "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  cmd->add_option("-o,--output", o->output, "table, json or yaml")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  cmd->callback([=] { *exit_code = RunVersion(*o); });
}

}  // namespace abacus::cli

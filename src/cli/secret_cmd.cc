// `abacus secret create|list|delete|reencrypt` (issue 24; docs/cli.md, "Secrets"): values go to
// the server, never come back.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/client.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "common/base64.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct SecretOptions {
  std::string server, token, ca_cert;
  std::string name, project, tenant, output = "table";
  std::vector<std::string> literals, files;
};

void AddConnection(CLI::App* cmd, SecretOptions* o) {
  cmd->add_option("--server", o->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", o->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", o->ca_cert, "CA certificate (PEM) for an https:// server");
}

void AddScope(CLI::App* cmd, SecretOptions* o) {
  cmd->add_option("-p,--project", o->project, "the secret's project (tenant/project)");
  cmd->add_option("--tenant", o->tenant, "a tenant-wide secret (tenant admins), seen by every project of the tenant");
}

std::string ScopeQuery(const SecretOptions& o) {
  if (!o.project.empty()) return "?project=" + UrlEncode(o.project);
  if (!o.tenant.empty()) return "?tenant=" + UrlEncode(o.tenant);
  return "";
}

int Fail(const ApiResponse& r) {
  std::cerr << r.ErrorText() << "\n";
  return r.ExitCode();
}

int RunCreate(const SecretOptions& o) {
  json body = {{"name", o.name}, {"data", json::object()}, {"stringData", json::object()}};
  if (!o.project.empty()) body["project"] = o.project;
  if (!o.tenant.empty()) body["tenant"] = o.tenant;
  for (const std::string& kv : o.literals) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: --from-literal takes KEY=VALUE, got an argument without '=' before the value\n";
      return kExitUsage;
    }
    body["stringData"][kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const std::string& kv : o.files) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: --from-file takes KEY=PATH, got '" << kv << "'\n";
      return kExitUsage;
    }
    std::ifstream in(kv.substr(eq + 1), std::ios::binary);
    if (!in) {
      std::cerr << "error: --from-file " << kv.substr(0, eq) << ": cannot read " << kv.substr(eq + 1) << "\n";
      return kExitUsage;
    }
    std::ostringstream data;
    data << in.rdbuf();
    body["data"][kv.substr(0, eq)] = Base64Encode(data.str());
  }
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = api.Post("/api/v1/secrets", body.dump(), "application/json");
  if (!r.ok()) return Fail(r);
  std::cout << "secret/" << r.body.value("name", "") << " version " << r.body.value("version", 0) << " ("
            << r.body.value("keys", json::array()).size() << " keys)\n";
  return kExitOk;
}

int RunList(const SecretOptions& o) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = api.Get("/api/v1/secrets" + ScopeQuery(o));
  if (!r.ok()) return Fail(r);
  if (o.output != "table") {
    PrintDocument(std::cout, r.body["items"], o.output);
    return kExitOk;
  }
  SecretTable(r.body.value("items", json::array()), std::cout);
  return kExitOk;
}

int RunDelete(const SecretOptions& o) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = api.Delete("/api/v1/secrets/" + UrlEncode(o.name) + ScopeQuery(o));
  if (!r.ok()) return Fail(r);
  std::cout << "secret/" << o.name << " deleted\n";
  return kExitOk;
}

int RunReencrypt(const SecretOptions& o) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = api.Post("/api/v1/secrets/reencrypt", "{}", "application/json");
  if (!r.ok()) return Fail(r);
  std::cout << r.body.value("reencrypted", 0) << " secrets re-sealed with key " << r.body.value("keyId", "") << "\n";
  return kExitOk;
}

}  // namespace

void SecretTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : items) {
    std::string keys;
    for (const auto& k : s.value("keys", json::array())) keys += (keys.empty() ? "" : ",") + k.get<std::string>();
    rows.push_back({s.value("name", ""), s.value("project", s.value("tenant", "") + " (tenant)"), keys,
                    std::to_string(s.value("version", 0)), s.value("createdBy", ""), s.value("createdAt", "")});
  }
  PrintTable(out, {"NAME", "SCOPE", "KEYS", "VERSION", "CREATED BY", "CREATED"}, rows);
}

void AddSecretCommands(CLI::App& app, int* exit_code) {
  CLI::App* secret = app.add_subcommand(
      "secret", "Secrets for workloads: create, list, delete, reencrypt (values are never shown again).\n"
                "Examples: abacus secret create db-creds -p nlp/llm --from-literal user=app\n"
                "          abacus secret list -p nlp/llm");
  secret->require_subcommand(1);
  {
    auto o = std::make_shared<SecretOptions>();
    CLI::App* cmd = secret->add_subcommand(
        "create", "Create a secret, or replace its values as the next version.\n"
                  "Example: abacus secret create db-creds -p nlp/llm --from-literal user=app --from-file password=./pw.txt");
    cmd->add_option("NAME", o->name, "secret name")->required();
    cmd->add_option("--from-literal", o->literals, "KEY=VALUE (repeatable)");
    cmd->add_option("--from-file", o->files, "KEY=PATH: the file's bytes (repeatable)");
    AddScope(cmd, o.get());
    AddConnection(cmd, o.get());
    cmd->callback([=] { *exit_code = RunCreate(*o); });
  }
  {
    auto o = std::make_shared<SecretOptions>();
    CLI::App* cmd = secret->add_subcommand("list", "List the secrets you may see: names, keys, versions (never values).\n"
                                                 "Example: abacus secret list -p nlp/llm");
    AddScope(cmd, o.get());
    cmd->add_option("-o,--output", o->output, "table, json or yaml")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "json", "yaml"}));
    AddConnection(cmd, o.get());
    cmd->callback([=] { *exit_code = RunList(*o); });
  }
  {
    auto o = std::make_shared<SecretOptions>();
    CLI::App* cmd = secret->add_subcommand("delete", "Delete a secret (tasks started with it keep their copy).\n"
                                                   "Example: abacus secret delete db-creds -p nlp/llm");
    cmd->add_option("NAME", o->name, "secret name")->required();
    AddScope(cmd, o.get());
    AddConnection(cmd, o.get());
    cmd->callback([=] { *exit_code = RunDelete(*o); });
  }
  {
    auto o = std::make_shared<SecretOptions>();
    CLI::App* cmd = secret->add_subcommand(
        "reencrypt", "Re-seal every secret with the server's active key (admins), after a key rotation "
                     "(docs/governance.md, Secrets).\nExample: abacus secret reencrypt");
    AddConnection(cmd, o.get());
    cmd->callback([=] { *exit_code = RunReencrypt(*o); });
  }
}

}  // namespace abacus::cli

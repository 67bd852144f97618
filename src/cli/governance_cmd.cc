// `abacus audit` and `abacus token …`: the audit chain and API tokens (/api/v1/audit,
// /api/v1/tokens; docs/governance.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli/client.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "govern/audit.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct Connection {
  std::string server, token, ca_cert;
};

void AddConnection(CLI::App* cmd, Connection* c) {
  cmd->add_option("--server", c->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", c->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", c->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
}

int Fail(const ApiResponse& r) {
  std::cerr << r.ErrorText() << "\n";
  return r.ExitCode();
}

std::string Or(const std::string& s, const std::string& fallback = "-") { return s.empty() ? fallback : s; }

// ---------------------------------------------------------------- audit

struct AuditOptions {
  Connection c;
  bool verify = false;
  std::string since, output = "table";
};

int RunAudit(const AuditOptions& o) {
  ApiClient api(ResolveClientConfig(o.c.server, o.c.token, o.c.ca_cert));
  if (o.verify) {
    ApiResponse r = api.Get("/api/v1/audit?verify=1");
    if (!r.ok()) return Fail(r);
    if (o.output == "json" || o.output == "jsonl") {
      std::cout << r.body.dump() << "\n";
    } else if (r.body.value("ok", false)) {
      std::cout << "audit chain OK: " << r.body.value("entries", 0) << " entries verified";
      if (r.body.value("anchors", 0) > 0) {
        std::cout << ", matching " << r.body.value("anchors", 0) << " signed anchors (newest: seq "
                  << r.body.value("anchoredSeq", 0) << ")";
      }
      std::cout << "\n";
    } else {
      std::cout << "audit chain BROKEN after " << r.body.value("entries", 0)
                << " entries: " << r.body.value("reason", std::string()) << "\n";
    }
    return r.body.value("ok", false) ? kExitOk : kExitRefused;
  }
  std::string path = "/api/v1/audit";
  if (!o.since.empty()) path += "?since=" + UrlEncode(o.since);
  ApiResponse r = api.Get(path);
  if (!r.ok()) return Fail(r);
  if (o.output == "json" || o.output == "jsonl") {
    std::cout << r.text;  // JSON lines, as the server exports them
    return kExitOk;
  }
  auto entries = govern::ImportAuditJsonLines(r.text);
  if (!entries.ok()) {
    std::cerr << "error: the server's audit export is unreadable: " << entries.status().message() << "\n";
    return kExitRefused;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : *entries) {
    const auto& rec = e.record;
    std::string object = rec.object_kind + (rec.object_name.empty() ? "" : " " + rec.object_name);
    if (object.size() > 60) object = object.substr(0, 57) + "...";
    std::string result = rec.result.size() > 60 ? rec.result.substr(0, 57) + "..." : rec.result;
    rows.push_back({std::to_string(e.seq), FormatTime(e.time), rec.actor, rec.action, Or(object), Or(rec.tenant),
                    Or(result), Or(rec.request_id)});
  }
  PrintTable(std::cout, {"SEQ", "TIME", "ACTOR", "ACTION", "OBJECT", "TENANT", "RESULT", "REQUEST"}, rows);
  return kExitOk;
}

// ---------------------------------------------------------------- tokens

struct TokenOptions {
  Connection c;
  std::string user, expires, description, id, output = "table";
};

int RunTokenCreate(const TokenOptions& o) {
  ApiClient api(ResolveClientConfig(o.c.server, o.c.token, o.c.ca_cert));
  json body = {{"user", o.user}, {"description", o.description}};
  if (!o.expires.empty()) body["expires"] = o.expires;
  ApiResponse r = api.Post("/api/v1/tokens", body.dump(), "application/json");
  if (!r.ok()) return Fail(r);
  if (o.output != "table") {
    PrintDocument(std::cout, r.body, o.output);
    return kExitOk;
  }
  // The secret alone on stdout (TOKEN=$(abacus token create --user alice)); the rest on stderr.
  std::cout << r.body.value("token", std::string()) << "\n";
  std::cerr << "created " << r.body.value("id", std::string()) << " for user " << r.body.value("user", std::string())
            << ", expires " << r.body.value("expiresAt", std::string("never"))
            << "; the token is shown only this once\n";
  return kExitOk;
}

int RunTokenList(const TokenOptions& o) {
  ApiClient api(ResolveClientConfig(o.c.server, o.c.token, o.c.ca_cert));
  ApiResponse r = api.Get("/api/v1/tokens" + (o.user.empty() ? "" : "?user=" + UrlEncode(o.user)));
  if (!r.ok()) return Fail(r);
  if (o.output != "table") {
    PrintDocument(std::cout, r.body["items"], o.output);
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : r.body.value("items", json::array())) {
    std::string state = t.contains("revokedAt") ? "revoked" : t.value("active", false) ? "active" : "expired";
    rows.push_back({t.value("id", ""), t.value("user", ""), state, Or(t.value("description", "")),
                    t.value("createdAt", ""), t.value("expiresAt", "never"), t.value("lastUsedAt", "-")});
  }
  PrintTable(std::cout, {"ID", "USER", "STATE", "DESCRIPTION", "CREATED", "EXPIRES", "LAST USED"}, rows);
  return kExitOk;
}

int RunTokenRevoke(const TokenOptions& o) {
  if (o.id.empty() == o.user.empty()) {
    std::cerr << "error: token revoke takes a token ID or --user NAME (every active token of that user), not "
              << (o.id.empty() ? "neither" : "both") << "\n";
    return kExitUsage;
  }
  ApiClient api(ResolveClientConfig(o.c.server, o.c.token, o.c.ca_cert));
  std::vector<std::string> ids = {o.id};
  if (!o.user.empty()) {
    ApiResponse list = api.Get("/api/v1/tokens?user=" + UrlEncode(o.user));
    if (!list.ok()) return Fail(list);
    ids.clear();
    for (const auto& t : list.body.value("items", json::array())) {
      if (t.value("user", "") == o.user && t.value("active", false)) ids.push_back(t.value("id", ""));
    }
    if (ids.empty()) {
      std::cout << "user " << o.user << " has no active token\n";
      return kExitOk;
    }
  }
  for (const auto& id : ids) {
    ApiResponse r = api.Delete("/api/v1/tokens/" + UrlEncode(id));
    if (!r.ok()) return Fail(r);
    std::cout << "revoked " << r.body.value("id", id) << " (user " << r.body.value("user", std::string()) << ")\n";
  }
  return kExitOk;
}

int RunRotateAdmin(const TokenOptions& o) {
  ApiClient api(ResolveClientConfig(o.c.server, o.c.token, o.c.ca_cert));
  ApiResponse r = api.Post("/api/v1/tokens/rotate-admin", "{}", "application/json");
  if (!r.ok()) return Fail(r);
  if (o.output != "table") {
    PrintDocument(std::cout, r.body, o.output);
    return kExitOk;
  }
  // The secret alone on stdout (ABACUS_TOKEN=$(abacus token rotate-admin)); the rest on stderr.
  std::cout << r.body.value("token", std::string()) << "\n";
  std::cerr << "admin token rotated: the old one no longer works; the new one is in the server's DATA/admin.token "
               "(mode 0600) and shown here once — update $ABACUS_TOKEN or your config file\n";
  if (r.body.contains("warning")) std::cerr << "warning: " << r.body.value("warning", std::string()) << "\n";
  return kExitOk;
}

// ---------------------------------------------------------------- node reset

int RunNodeReset(const TokenOptions& o) {
  ApiClient api(ResolveClientConfig(o.c.server, o.c.token, o.c.ca_cert));
  ApiResponse r = api.Post("/api/v1/nodes/" + UrlEncode(o.id) + "/reset", "{}", "application/json");
  if (!r.ok()) return Fail(r);
  std::cout << r.body.value("message", "node " + o.id + " reset") << "\n";
  return kExitOk;
}

}  // namespace

// ---------------------------------------------------------------- get users, get policies

namespace {

std::string JoinStrings(const json& list, const std::string& sep = ",") {
  std::string out;
  if (!list.is_array()) return out;
  for (const auto& v : list) {
    if (v.is_string()) out += (out.empty() ? "" : sep) + v.get<std::string>();
  }
  return out;
}

std::string Text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "admin", "tenant-admin of nlp", "member of nlp/llm", "viewer".
std::string RoleText(const json& b) {
  std::string role = Text(b, "role");
  std::string scope = Text(b, "project");
  if (scope.empty()) scope = Text(b, "tenant");
  return scope.empty() ? role : role + " of " + scope;
}

// The rules of a policy in one line: "registries=registry.local; network=isolated; …".
std::string PolicyRules(const json& spec) {
  std::vector<std::string> parts;
  if (spec.contains("images")) {
    const json& im = spec["images"];
    if (im.contains("allowedRegistries")) parts.push_back("registries=" + Or(JoinStrings(im["allowedRegistries"]), "none"));
    if (im.value("requireImage", false)) parts.push_back("image required");
    if (im.contains("requireDigestFor")) parts.push_back("digest for " + JoinStrings(im["requireDigestFor"]));
  }
  if (spec.contains("mounts") && spec["mounts"].is_array()) {
    std::string mounts;
    for (const auto& m : spec["mounts"]) {
      mounts += (mounts.empty() ? "" : ",") + Text(m, "pathPrefix") + (Text(m, "access") == "read-write" ? "(rw)" : "(ro)");
    }
    parts.push_back("mounts=" + Or(mounts, "none"));
  }
  if (spec.contains("network")) parts.push_back("network=" + Text(spec, "network"));
  if (spec.contains("maxResources") && spec["maxResources"].is_object()) {
    std::string max;
    for (const auto& [k, v] : spec["maxResources"].items()) {
      max += (max.empty() ? "" : ",") + k + " " + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    parts.push_back("max " + max);
  }
  if (spec.contains("pools")) parts.push_back("pools=" + JoinStrings(spec["pools"]));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return Or(out, "none");
}

}  // namespace

void UserTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& u : items) {
    std::string roles;
    for (const auto& b : u.value("roles", json::array())) roles += (roles.empty() ? "" : ", ") + RoleText(b);
    rows.push_back({Text(u, "name"), Or(Text(u, "displayName")), Or(Text(u, "email")), Or(roles, "none"),
                    u.value("disabled", false) ? "yes" : "no"});
  }
  PrintTable(out, {"NAME", "DISPLAY NAME", "EMAIL", "ROLES", "DISABLED"}, rows);
}

void PolicyTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : items) {
    rows.push_back({Text(p, "name"), Or(JoinStrings(p.value("tenants", json::array())), "all"),
                    PolicyRules(p.value("spec", json::object()))});
  }
  PrintTable(out, {"NAME", "TENANTS", "RULES"}, rows);
}

void AddGovernanceCommands(CLI::App& app, int* exit_code) {
  {
    auto o = std::make_shared<AuditOptions>();
    CLI::App* cmd = app.add_subcommand(
        "audit",
        "The audit log: every mutating request and scheduling decision, hash-chained.\n"
        "Examples: abacus audit --since 24h\n"
        "          abacus audit -o jsonl > audit.jsonl     (export, one JSON object per line)\n"
        "          abacus audit --verify                   (exit 1 when an entry was edited or removed, or the chain no longer matches its signed anchors)");
    cmd->add_flag("--verify", o->verify, "check the hash chain on the server and report the first bad entry");
    cmd->add_option("--since", o->since, "entries from this RFC 3339 time or date, this long ago (24h, 7d), today or yesterday");
    cmd->add_option("-o,--output", o->output, "table, jsonl (json is the same)")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "jsonl", "json"}));
    AddConnection(cmd, &o->c);
    cmd->callback([=] { *exit_code = RunAudit(*o); });
  }
  CLI::App* token =
      app.add_subcommand("token", "API tokens: create, list, revoke, rotate-admin (a token is shown once).\n"
                                 "Examples: abacus token create --user mia --expires 30d\n          abacus token list");
  token->require_subcommand(1);
  {
    auto o = std::make_shared<TokenOptions>();
    CLI::App* cmd = token->add_subcommand(
        "create", "Issue an API token for a user (from a `kind: User` document); prints the token.\n"
                  "Example: abacus token create --user alice --expires 30d --description laptop");
    cmd->add_option("--user", o->user, "owner (default: yourself)");
    cmd->add_option("--expires", o->expires, "lifetime: 30d, 12h, … (default: never)");
    cmd->add_option("--description", o->description, "what it is for");
    cmd->add_option("-o,--output", o->output, "table (the token alone), json or yaml")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "json", "yaml"}));
    AddConnection(cmd, &o->c);
    cmd->callback([=] { *exit_code = RunTokenCreate(*o); });
  }
  {
    auto o = std::make_shared<TokenOptions>();
    CLI::App* cmd = token->add_subcommand("list", "List the tokens you may manage (never their secrets).\n"
                                                "Example: abacus token list -o json");
    cmd->add_option("--user", o->user, "only this user's");
    cmd->add_option("-o,--output", o->output, "table, json or yaml")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "json", "yaml"}));
    AddConnection(cmd, &o->c);
    cmd->callback([=] { *exit_code = RunTokenList(*o); });
  }
  {
    auto o = std::make_shared<TokenOptions>();
    CLI::App* cmd = token->add_subcommand("revoke",
                                          "Revoke a token by its id (tok-…), or every active token of a user; it "
                                          "stops working at once.\n"
                                          "Examples: abacus token revoke tok-3f9a1c0d2b7e4a65\n"
                                          "          abacus token revoke --user alice     (a laptop was lost)");
    cmd->add_option("ID", o->id, "token id");
    cmd->add_option("--user", o->user, "revoke every active token of this user");
    AddConnection(cmd, &o->c);
    cmd->callback([=] { *exit_code = RunTokenRevoke(*o); });
  }
  {
    auto o = std::make_shared<TokenOptions>();
    CLI::App* cmd = token->add_subcommand(
        "rotate-admin",
        "Replace the admin token (admins; audited as admin-token-rotate): the old one stops working at once, the new\n"
        "one is printed once and written to the server's DATA/admin.token. Lost every admin token? See the\n"
        "break-glass path in docs/operations.md.\n"
        "Example: export ABACUS_TOKEN=$(abacus token rotate-admin)");
    cmd->add_option("-o,--output", o->output, "table (the token alone), json or yaml")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "json", "yaml"}));
    AddConnection(cmd, &o->c);
    cmd->callback([=] { *exit_code = RunRotateAdmin(*o); });
  }
  CLI::App* node = app.add_subcommand("node", "Agent nodes: reset the credential of a node whose machine was replaced.\n"
                                               "Example: abacus node reset gpu-07");
  node->require_subcommand(1);
  {
    auto o = std::make_shared<TokenOptions>();
    CLI::App* cmd = node->add_subcommand(
        "reset",
        "Revoke an agent node's credential (admins; audited as node-reset). A registered node is registered again "
        "only with its own credential, which a restarted agent keeps in its work folder; after a reset the next "
        "agent to register under the name with the join token is accepted (a replaced machine, a lost work folder).\n"
        "Example: abacus node reset gpu-07");
    cmd->add_option("NAME", o->id, "node name")->required();
    AddConnection(cmd, &o->c);
    cmd->callback([=] { *exit_code = RunNodeReset(*o); });
  }
}

}  // namespace abacus::cli

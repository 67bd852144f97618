// `abacus rollout NAME --version V`, `rollout status|history|undo NAME`, `abacus set image NAME
// IMAGE`, and the workload half of `abacus apply` (issue 19.4): updates of a workload that exists
// through PUT/PATCH /api/v1/workloads/{id} and POST …/rollback; what changed is the server's
// diff, printed as it answers.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "cli/client.h"
#include "cli/output.h"
#include "cli/verbs.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct Opts {
  std::string server, token, ca_cert, output = "table";
};

void AddFlags(CLI::App* cmd, Opts* o) {
  cmd->add_option("--server", o->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", o->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", o->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  cmd->add_option("-o,--output", o->output, "table, json or yaml")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "yaml"}));
}

int Fail(const ApiResponse& r) {
  std::cerr << r.ErrorText() << "\n";
  return r.ExitCode();
}

std::string Shown(const json& v) {
  if (v.is_null()) return "(none)";
  if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
  return v.dump();
}

// An update's answer: "wl-1 (chat) updated to revision 2" and one line per changed field.
int PrintUpdate(const json& b, const std::string& output) {
  if (output != "table") {
    PrintDocument(std::cout, b, output);
    return kExitOk;
  }
  std::string who = b.value("id", "") + " (" + b.value("name", "") + ")";
  if (b.value("unchanged", false)) {
    std::cout << who << " unchanged\n";
    return kExitOk;
  }
  std::cout << who << " updated, revision " << b.value("revision", 0) << "\n";
  for (const auto& d : b.value("diff", json::array())) {
    std::cout << "  " << d.value("path", "") << ": " << Shown(d.value("from", json())) << " -> "
              << Shown(d.value("to", json())) << "\n";
  }
  return kExitOk;
}

// PATCH with a merge patch; retried when the workload changed meanwhile (its autoscaler).
ApiResponse PatchWorkload(ApiClient& api, const std::string& w, const json& patch) {
  ApiResponse r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = api.Patch("/api/v1/workloads/" + UrlEncode(w), patch.dump(), "application/json");
    if (r.status != 409 || r.text.find("changed while") == std::string::npos) break;
  }
  return r;
}

int RunPatch(const Opts& o, const std::string& w, const json& patch) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = PatchWorkload(api, w, patch);
  if (!r.ok()) return Fail(r);
  return PrintUpdate(r.body, o.output);
}

int RunStatus(const Opts& o, const std::string& w) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = api.Get("/api/v1/workloads/" + UrlEncode(w));
  if (!r.ok()) return Fail(r);
  json status = r.body.value("status", json::object());
  if (o.output != "table") {
    PrintDocument(std::cout, {{"id", r.body.value("id", "")}, {"name", r.body.value("name", "")}, {"status", status}},
                  o.output);
    return kExitOk;
  }
  if (!status.contains("rollout")) {
    std::cerr << "error: " << r.body.value("id", w) << " is a " << r.body.value("kind", "workload")
              << "; rollouts are an InferenceService's\n";
    return kExitRefused;
  }
  const json& ro = status["rollout"];
  std::map<std::string, int> by_version;
  std::set<int> replicas;
  for (const auto& p : r.body.value("placements", json::array())) {
    if (replicas.insert(p.value("replica", 0)).second) by_version[p.value("version", "")]++;
  }
  std::string phase = ro.value("phase", "Stable");
  std::cout << r.body.value("name", w) << ": " << phase << "; stable version " << Shown(ro.value("stableVersion", ""));
  if (phase == "Canary" || phase == "Paused") {
    std::cout << ", canary " << Shown(ro.value("canaryVersion", "")) << " on " << ro.value("canaryReplicas", 0)
              << " replica(s)";
  }
  std::cout << "\n  replicas: " << status.value("readyReplicas", 0) << " ready of " << status.value("desiredReplicas", 0)
            << " desired;";
  for (const auto& [v, n] : by_version) std::cout << " " << n << " on " << Shown(v) << ";";
  std::cout << "\n";
  return kExitOk;
}

int RunHistory(const Opts& o, const std::string& w) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  ApiResponse r = api.Get("/api/v1/workloads/" + UrlEncode(w) + "/revisions");
  if (!r.ok()) return Fail(r);
  if (o.output != "table") {
    PrintDocument(std::cout, r.body, o.output);
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : r.body.value("items", json::array())) {
    std::string change;
    for (const auto& d : v.value("diff", json::array())) {
      change += (change.empty() ? "" : "; ") + d.value("path", "") + "=" + Shown(d.value("to", json()));
    }
    rows.push_back({std::to_string(v.value("revision", 0)), Shown(v.value("version", "")),
                    v.value("image", "").empty() ? "-" : v.value("image", ""), v.value("by", "").empty() ? "-" : v.value("by", ""),
                    v.value("at", ""), change.empty() ? "(submitted)" : change});
  }
  PrintTable(std::cout, {"REVISION", "VERSION", "IMAGE", "BY", "AT", "CHANGE"}, rows);
  return kExitOk;
}

int RunUndo(const Opts& o, const std::string& w, int revision) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  json body = json::object();
  if (revision > 0) body["revision"] = revision;
  ApiResponse r = api.Post("/api/v1/workloads/" + UrlEncode(w) + "/rollback", body.dump(), "application/json");
  if (!r.ok()) return Fail(r);
  return PrintUpdate(r.body, o.output);
}

}  // namespace

json ApplyWorkloadDocument(ApiClient& api, const json& doc, std::string* error, bool dry_run) {
  // The active workload of that name in that project, if any.
  std::string name = doc.value("name", ""), project = doc.value("project", "");
  ApiResponse found = api.Get("/api/v1/workloads?name=" + UrlEncode(name) + "&project=" + UrlEncode(project));
  if (!found.ok()) {
    *error = found.ErrorText();
    return nullptr;
  }
  std::string id;
  for (const auto& w : found.body.value("items", json::array())) {
    std::string state = w.value("state", "");
    if (state != "Succeeded" && state != "Failed" && state != "Cancelled") id = w.value("id", "");
  }
  json item = {{"kind", doc.value("kind", "")}, {"name", name}};
  if (id.empty()) {
    ApiResponse r = api.Post(dry_run ? "/api/v1/workloads?dryRun=1" : "/api/v1/workloads", json::array({doc}).dump(),
                             "application/json");
    if (!r.ok()) {
      *error = r.ErrorText();
      return nullptr;
    }
    if (dry_run) return r.body["items"][0];  // {dryRun, wouldBe, text, ...}
    item["id"] = r.body["items"][0].value("id", "");
    if (r.body["items"][0].contains("warnings")) item["warnings"] = r.body["items"][0]["warnings"];
    item["action"] = "created (" + item["id"].get<std::string>() + ")";
    return item;
  }
  ApiResponse r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = api.Put("/api/v1/workloads/" + UrlEncode(id) + (dry_run ? "?dryRun=1" : ""), doc.dump(), "application/json");
    if (r.status != 409 || r.text.find("changed while") == std::string::npos) break;
  }
  if (!r.ok()) {
    *error = r.ErrorText();
    return nullptr;
  }
  item["id"] = id;
  item["diff"] = r.body.value("diff", json::array());
  std::string action = r.body.value("unchanged", false)
                           ? std::string(dry_run ? "unchanged (dry run)" : "unchanged")
                           : std::string(dry_run ? "would be updated" : "updated") + " (revision " +
                                 std::to_string(r.body.value("revision", 0)) + ")" + (dry_run ? " (dry run)" : "");
  for (const auto& d : item["diff"]) {
    action += "\n  " + d.value("path", "") + ": " + Shown(d.value("from", json())) + " -> " + Shown(d.value("to", json()));
  }
  item["action"] = action;
  return item;
}

void AddRolloutCommands(CLI::App& app, int* exit_code) {
  {
    auto o = std::make_shared<Opts>();
    auto w = std::make_shared<std::string>();
    auto version = std::make_shared<std::string>();
    auto image = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        "rollout",
        "Roll a running InferenceService forward to a version (a canary, promoted or rolled back by its controller),\n"
        "or show, list or undo its rollouts.\n"
        "Examples: abacus rollout chat --version v2 [--image registry/chat:2]\n"
        "          abacus rollout status chat;  abacus rollout history chat;  abacus rollout undo chat [--to-revision 1]");
    cmd->add_option("WORKLOAD", *w, "id or name");
    cmd->add_option("--version", *version, "the version to roll out (spec.rollout.version)");
    cmd->add_option("--image", *image, "the image of that version (spec.image)");
    AddFlags(cmd, o.get());
    cmd->callback([=] {
      if (!cmd->get_subcommands().empty()) return;
      if (w->empty() || (version->empty() && image->empty())) {
        std::cerr << "error: rollout WORKLOAD --version V [--image I], or rollout status|history|undo WORKLOAD\n";
        *exit_code = kExitUsage;
        return;
      }
      json spec = json::object();
      if (!version->empty()) spec["rollout"] = {{"version", *version}};
      if (!image->empty()) spec["image"] = *image;
      *exit_code = RunPatch(*o, *w, {{"spec", spec}});
    });
    auto sub = [&](const char* name, const char* help) {
      auto so = std::make_shared<Opts>();
      auto sw = std::make_shared<std::string>();
      CLI::App* s = cmd->add_subcommand(name, help);
      s->add_option("WORKLOAD", *sw, "id or name")->required();
      AddFlags(s, so.get());
      return std::make_tuple(s, so, sw);
    };
    {
      auto [s, so, sw] = sub("status", "The rollout of a service: phase, stable and canary versions, replicas ready.\n"
                                       "Example: abacus rollout status chat");
      s->callback([=, so = so, sw = sw] { *exit_code = RunStatus(*so, *sw); });
    }
    {
      auto [s, so, sw] = sub("history", "The revisions of a workload: version, image, who and what changed.\n"
                                       "Example: abacus rollout history chat -o json");
      s->callback([=, so = so, sw = sw] { *exit_code = RunHistory(*so, *sw); });
    }
    {
      auto [s, so, sw] = sub("undo", "Roll back to the revision before the newest (or --to-revision N), audited.\n"
                                       "Examples: abacus rollout undo chat\n          abacus rollout undo chat --to-revision 1");
      auto to = std::make_shared<int>(0);
      s->add_option("--to-revision", *to, "the revision to go back to");
      s->callback([=, so = so, sw = sw] { *exit_code = RunUndo(*so, *sw, *to); });
    }
  }
  {
    CLI::App* set = app.add_subcommand("set", "Change one field of a workload that exists.\n"
                                                 "Example: abacus set image chat registry/chat:2");
    set->require_subcommand(1);
    auto o = std::make_shared<Opts>();
    auto w = std::make_shared<std::string>();
    auto image = std::make_shared<std::string>();
    CLI::App* cmd = set->add_subcommand(
        "image", "Set a workload's image: a service rolls it out as a new version (named rN unless the\n"
                 "spec names one); other kinds run it from their next task.\nExample: abacus set image chat registry/chat:2");
    cmd->add_option("WORKLOAD", *w, "id or name")->required();
    cmd->add_option("IMAGE", *image, "the image")->required();
    AddFlags(cmd, o.get());
    cmd->callback([=] { *exit_code = RunPatch(*o, *w, {{"spec", {{"image", *image}}}}); });
  }
}

}  // namespace abacus::cli

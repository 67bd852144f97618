// Fleet verbs (issue 23; docs/cli.md "Fleet verbs"): cordon, uncordon and drain of nodes; hold,
// release, requeue, set-priority, suspend and resume of workloads (and suspend/resume of a
// queue); and bulk cancel by label selector or state. Each is one REST call per object
// (server/fleet_api.h), authorized and audited by the server.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/client.h"
#include "common/clock.h"
#include "common/duration_parse.h"
#include "cli/watch.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "workload/label_selector.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct Connection {
  std::string server, token, ca_cert;
  std::string output = "table";
};

void AddConnection(CLI::App* cmd, Connection* c) {
  cmd->add_option("--server", c->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", c->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", c->ca_cert,
                  "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  cmd->add_option("-o,--output", c->output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->capture_default_str();
}

ApiClient Client(const Connection& c) { return ApiClient(ResolveClientConfig(c.server, c.token, c.ca_cert)); }

int Fail(const ApiResponse& r) {
  std::cerr << r.ErrorText() << "\n";
  return r.ExitCode();
}

std::string Str(const json& j, const char* key, const std::string& fallback = "") {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

// Prints the answer as asked: the document (-o json|yaml) or `line` (table).
int Answer(const Connection& c, const ApiResponse& r, const std::string& line) {
  if (!r.ok()) return Fail(r);
  if (c.output != "table") {
    PrintDocument(std::cout, r.body, c.output);
  } else {
    std::cout << line << "\n";
  }
  return kExitOk;
}

// ---------------------------------------------------------------- nodes

int RunCordon(const Connection& c, const std::string& node, bool cordon, const std::string& reason) {
  ApiClient api = Client(c);
  ApiResponse r = api.Post("/api/v1/nodes/" + UrlEncode(node) + (cordon ? "/cordon" : "/uncordon"),
                           json{{"reason", reason}}.dump(), "application/json");
  return Answer(c, r, "node " + node + (cordon ? " cordoned" : " uncordoned") + "; now " +
                          Str(r.body, "schedulingState", Str(r.body, "state")));
}

struct DrainArgs {
  std::string node, grace = "10m", reason;
  bool requeue = false, wait = false;
};

int RunDrain(const Connection& c, const DrainArgs& a) {
  ApiClient api = Client(c);
  json body = {{"grace", a.grace}, {"requeue", a.requeue}, {"reason", a.reason}};
  ApiResponse r = api.Post("/api/v1/nodes/" + UrlEncode(a.node) + "/drain", body.dump(), "application/json");
  if (!r.ok()) return Fail(r);
  std::string state = Str(r.body, "schedulingState");
  // What the server holds, not what was asked: a second drain may shorten the grace, never
  // lengthen it (the probe of 2026-12-07: "grace 1h" printed while the first 10m still held).
  std::string grace = "grace " + a.grace;
  const int64_t deadline_us = r.body.value("cordon", json::object()).value("deadlineUs", int64_t{0});
  if (deadline_us > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(FromMicros(deadline_us) - SystemClock::Get().Now());
    grace = "what must wait for the grace stops by " + FormatTime(FromMicros(deadline_us)) + ", in " +
            FormatDurationSpec(std::max(left, std::chrono::seconds(0)));
  }
  if (!a.wait || state == "Drained") {
    return Answer(c, r, "node " + a.node + " " + (state == "Drained" ? "drained" : "draining") +
                            (state == "Drained" ? "" : " (" + grace + "; `abacus get nodes " + a.node +
                                                           "` shows Drained when nothing runs there)"));
  }
  // --wait: until the node is Drained (the drain goes on without us if interrupted). The nodes
  // list is watched (a long poll answers when a node changes), not polled.
  if (c.output == "table") std::cout << "node " << a.node << " draining (" << grace << "); waiting\n" << std::flush;
  uint64_t version = 0;
  while (true) {
    ApiResponse changed = api.Get(WatchPath("/api/v1/nodes", version));
    if (!changed.ok()) return Fail(changed);
    version = changed.body.value("resourceVersion", uint64_t{0});
    json node;
    for (const json& item : changed.body.value("items", json::array())) {
      if (item.value("name", "") == a.node) node = item;
    }
    if (node.is_null()) {
      std::cerr << "error: node " << a.node << " is gone (deleted while draining)\n";
      return kExitRefused;
    }
    state = Str(node, "schedulingState");
    if (state == "Drained") {
      r.body = node;
      break;
    }
    if (state != "Draining") {
      std::cerr << "error: node " << a.node << " is " << state << ", no longer draining (uncordoned?)\n";
      return kExitRefused;
    }
  }
  return Answer(c, r, "node " + a.node + " drained");
}

// ---------------------------------------------------------------- workloads

int RunWorkloadVerb(const Connection& c, const std::vector<std::string>& workloads, const std::string& verb,
                    const std::string& done) {
  ApiClient api = Client(c);
  int code = kExitOk;
  for (const auto& w : workloads) {
    ApiResponse r = api.Post("/api/v1/workloads/" + UrlEncode(w) + "/" + verb, "{}", "application/json");
    int one = Answer(c, r, Str(r.body, "id") + " (" + Str(r.body, "name") + ") " + done + "; now " + Str(r.body, "state"));
    if (one != kExitOk) code = one;
  }
  return code;
}

int RunSetPriority(const Connection& c, const std::string& w, const std::string& priority) {
  ApiClient api = Client(c);
  json body;
  body["priority"] = priority;
  ApiResponse r = api.Post("/api/v1/workloads/" + UrlEncode(w) + "/priority", body.dump(), "application/json");
  std::string now = r.body.is_object() && r.body.contains("priority") ? r.body["priority"].dump()
                                                                      : "class " + Str(r.body.value("spec", json()), "priorityClass");
  return Answer(c, r, Str(r.body, "id") + " (" + Str(r.body, "name") + ") priority set to " + now);
}

// suspend/resume WORKLOAD, or suspend/resume queue QUEUE (also `workload W`).
int RunSuspend(const Connection& c, const std::vector<std::string>& args, bool suspend) {
  const std::string verb = suspend ? "suspend" : "resume";
  if (args.size() == 2 && args[0] == "queue") {
    ApiClient api = Client(c);
    ApiResponse r = api.Post("/api/v1/queues/" + UrlEncode(args[1]) + "/" + verb, "{}", "application/json");
    return Answer(c, r, "queue " + args[1] + (suspend ? " suspended: it admits nothing new; its running work keeps running"
                                                      : " resumed"));
  }
  std::vector<std::string> workloads = args;
  if (args.size() >= 2 && args[0] == "workload") workloads.erase(workloads.begin());
  if (workloads.empty() || (args.size() > 2 && args[0] == "queue")) {
    std::cerr << "error: usage: abacus " << verb << " WORKLOAD... | abacus " << verb << " queue QUEUE\n";
    return kExitUsage;
  }
  return RunWorkloadVerb(c, workloads, verb, suspend ? "suspended" : "resumed");
}

}  // namespace

// ---------------------------------------------------------------- bulk cancel

int RunBulkCancel(const BulkCancelArgs& a) {
  const std::vector<std::string> kStates = {"Pending", "Admitted", "Running", "Preempting", "Requeued"};
  std::string state;
  if (!a.state.empty()) {
    for (const auto& s : kStates) {
      if (std::equal(s.begin(), s.end(), a.state.begin(), a.state.end(),
                     [](char x, char y) { return std::tolower(x) == std::tolower(y); })) {
        state = s;
      }
    }
    if (state.empty()) {
      std::cerr << "error: --state '" << a.state
                << "': expected one of Pending, Admitted, Running, Preempting, Requeued (any case; finished work "
                   "cannot be cancelled)\n";
      return kExitUsage;
    }
  }
  // The selector is the one of `get workloads -l` (workload/label_selector.h), applied by the
  // server; parsed here first so that a bad one is a usage error before any request.
  if (auto sel = LabelSelector::Parse(a.selector); !sel.ok()) {
    std::cerr << "error: -l: " << sel.status().message() << "\n";
    return kExitUsage;
  }
  ApiClient api(ResolveClientConfig(a.server, a.token, a.ca_cert));
  std::string path = "/api/v1/workloads?limit=100000";
  if (!state.empty()) path += "&state=" + UrlEncode(state);
  if (!a.queue.empty()) path += "&queue=" + UrlEncode(a.queue);
  if (!a.project.empty()) path += "&project=" + UrlEncode(a.project);
  if (!a.selector.empty()) path += "&labelSelector=" + UrlEncode(a.selector);
  ApiResponse list = api.Get(path);
  if (!list.ok()) return Fail(list);
  std::vector<json> targets;
  for (const auto& w : list.body.value("items", json::array())) {
    const std::string s = Str(w, "state");
    if (s == "Succeeded" || s == "Failed" || s == "Cancelled") continue;
    targets.push_back(w);
  }
  if (targets.empty()) {
    std::cout << "no active workloads match; nothing cancelled\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& w : targets) rows.push_back({Str(w, "name"), Str(w, "id"), Str(w, "queue"), Str(w, "state")});
  if (!a.yes) {
    if (!isatty(STDIN_FILENO)) {
      std::cerr << "error: would cancel " << targets.size()
                << " workloads, but stdin is not a terminal to confirm: pass --yes to cancel them\n";
      return kExitUsage;
    }
    PrintTable(std::cout, {"NAME", "ID", "QUEUE", "STATE"}, rows);
    std::cout << "Cancel these " << targets.size() << " workloads? [y/N] " << std::flush;
    std::string reply;
    std::getline(std::cin, reply);
    if (reply != "y" && reply != "Y" && reply != "yes") {
      std::cout << "nothing cancelled\n";
      return kExitOk;
    }
  }
  int code = kExitOk;
  size_t done = 0;
  for (const auto& w : targets) {
    ApiResponse r = api.PostIdempotent("/api/v1/workloads/" + UrlEncode(Str(w, "id")) + "/cancel",
                                       json{{"reason", a.reason}}.dump(), "application/json", NewIdempotencyKey());
    if (!r.ok()) {
      std::cerr << Str(w, "name") << " (" << Str(w, "id") << "): " << r.ErrorText() << "\n";
      code = r.ExitCode();
      continue;
    }
    ++done;
    std::cout << Str(w, "id") << " (" << Str(w, "name") << ") cancelled\n";
  }
  std::cout << done << " of " << targets.size() << " workloads cancelled\n";
  return code;
}

void AddFleetCommands(CLI::App& app, int* exit_code) {
  for (bool cordon : {true, false}) {
    auto c = std::make_shared<Connection>();
    auto node = std::make_shared<std::string>();
    auto reason = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        cordon ? "cordon" : "uncordon",
        cordon ? "Mark a node (agent-run or simulated) unschedulable: nothing new is placed there; what runs keeps "
                 "running (admins).\nExample: abacus cordon gpu-07 --reason 'fan replacement'"
               : "Make a cordoned, draining or drained node schedulable again (a drain in progress stops; work "
                 "already requeued stays requeued).\nExample: abacus uncordon gpu-07");
    cmd->add_option("NODE", *node, "node name")->required();
    if (cordon) cmd->add_option("--reason", *reason, "recorded in the node's events and the audit log");
    AddConnection(cmd, c.get());
    cmd->callback([=] { *exit_code = RunCordon(*c, *node, cordon, *reason); });
  }
  {
    auto c = std::make_shared<Connection>();
    auto a = std::make_shared<DrainArgs>();
    CLI::App* cmd = app.add_subcommand(
        "drain",
        "Empty a node: cordon it, stop preemptible work at once (checkpoint signal, then requeued as Drained, no "
        "retry used),\nwait up to --grace for the rest, then requeue it too; the node is Drained once nothing runs "
        "there (admins).\nExamples: abacus drain gpu-07 --grace 30m --wait\n          abacus drain gpu-07 --requeue");
    cmd->add_option("NODE", a->node, "node name")->required();
    cmd->add_option("--grace", a->grace, "how long non-preemptible work may finish (e.g. 10m, 1h30m, 0)")
        ->capture_default_str();
    auto* requeue = cmd->add_flag("--requeue", a->requeue, "requeue every workload there now (checkpoint signal first)");
    auto* wait = cmd->add_flag("--wait", a->wait, "wait until the node is Drained");
    requeue->excludes(wait);
    cmd->add_option("--reason", a->reason, "recorded in the node's events and the audit log");
    AddConnection(cmd, c.get());
    cmd->callback([=] { *exit_code = RunDrain(*c, *a); });
  }
  struct Verb {
    const char* name;
    const char* help;
    const char* done;
  };
  for (Verb v : {Verb{"hold", "Keep waiting workloads out of scheduling until released (explain says Held).\n"
                              "Example: abacus hold llama-ft",
                      "held"},
                 Verb{"release", "Let held workloads be scheduled again.\nExample: abacus release llama-ft", "released"},
                 Verb{"requeue", "Send running workloads back to wait: checkpoint signal and grace first, then "
                                 "requeued; no retry is used.\nExample: abacus requeue llama-ft",
                      "requeue requested"}}) {
    auto c = std::make_shared<Connection>();
    auto ws = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand(v.name, v.help);
    cmd->add_option("WORKLOAD", *ws, "ids or names")->required();
    AddConnection(cmd, c.get());
    std::string verb = v.name, done = v.done;
    cmd->callback([=] { *exit_code = RunWorkloadVerb(*c, *ws, verb, done); });
  }
  for (bool suspend : {true, false}) {
    auto c = std::make_shared<Connection>();
    auto args = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand(
        suspend ? "suspend" : "resume",
        suspend ? "Suspend workloads (running ones are stopped with their checkpoint signal and requeued, then kept "
                  "out of scheduling)\nor a queue (it admits nothing new; its running work keeps running).\n"
                  "Examples: abacus suspend llama-ft\n          abacus suspend queue nlp-train"
                : "Resume suspended workloads, or a suspended queue.\nExamples: abacus resume llama-ft\n"
                  "          abacus resume queue nlp-train");
    cmd->add_option("TARGET", *args, "WORKLOAD..., or: queue QUEUE")->required();
    AddConnection(cmd, c.get());
    cmd->callback([=] { *exit_code = RunSuspend(*c, *args, suspend); });
  }
  {
    auto c = std::make_shared<Connection>();
    auto w = std::make_shared<std::string>();
    auto p = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        "set-priority",
        "Set a workload's priority: an integer replaces its priority class's value (order and preemption), a class "
        "name replaces the class (tenant admins and admins).\nExamples: abacus set-priority llama-ft 800\n"
        "          abacus set-priority llama-ft high");
    cmd->add_option("WORKLOAD", *w, "id or name")->required();
    cmd->add_option("PRIORITY", *p, "integer, or a priority class name")->required();
    AddConnection(cmd, c.get());
    cmd->callback([=] { *exit_code = RunSetPriority(*c, *w, *p); });
  }
}

}  // namespace abacus::cli

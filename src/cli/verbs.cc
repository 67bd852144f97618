#include "cli/verbs.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <sstream>

#include "cli/client.h"
#include "cli/endpoints_view.h"
#include "cli/describe_view.h"
#include "cli/output.h"
#include "cli/output_format.h"
#include "cli/submit.h"
#include "cli/usage.h"
#include "cli/watch.h"
#include "govern/crypto.h"
#include "workload/documents.h"
#include "workload/label_selector.h"
#include "workload/lifecycle.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct Common {
  std::string server, token, ca_cert, output = "table";
};

void AddConnectionFlags(CLI::App* cmd, Common* c, bool output = true) {
  cmd->add_option("--server", c->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", c->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", c->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  if (output) {
    cmd->add_option("-o,--output", c->output, "table, json or yaml")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "json", "yaml"}));
  }
}

ApiClient Client(const Common& c) { return ApiClient(ResolveClientConfig(c.server, c.token, c.ca_cert)); }

int Fail(const ApiResponse& r) {
  std::cerr << r.ErrorText() << "\n";
  return r.ExitCode();
}

bool ReadFile(const std::string& path, std::string& text) {
  std::stringstream buf;
  if (path == "-") {
    buf << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "error: cannot read " << path << ": " << std::strerror(errno) << "\n";
      return false;
    }
    buf << in.rdbuf();
  }
  text = buf.str();
  return true;
}

std::string Str(const json& j, const char* key, const std::string& fallback = "-") {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (j[key].is_string()) return j[key].get<std::string>().empty() ? fallback : j[key].get<std::string>();
  return j[key].dump();
}

std::string Truncate(std::string s, size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n - 3) + "...";
}

// ---------------------------------------------------------------- tables per kind

// "16x H100-80G" per flavor the workload holds now (its placements' devices); "-" when none.
std::string HeldDevices(const json& w) {
  const std::string state = w.value("state", "");
  if (state == "Succeeded" || state == "Failed" || state == "Cancelled") return "-";  // ended: holds nothing
  std::map<std::string, int64_t> milli;
  const json flavors = w.value("groupFlavors", json::array());
  for (const auto& p : w.value("placements", json::array())) {
    size_t group = p.value("group", size_t{0});
    std::string flavor = group < flavors.size() && flavors[group].is_string() ? flavors[group].get<std::string>() : "";
    if (flavor.empty() || flavor == "cpu") continue;
    for (const auto& d : p.value("devices", json::array())) milli[flavor] += d.value("milli", int64_t{0});
  }
  std::string out;
  for (const auto& [f, m] : milli) out += (out.empty() ? "" : ",") + Devices(m) + "x " + f.substr(f.rfind('/') + 1);
  return out.empty() ? "-" : out;
}

// The nodes a workload's placements are on, comma-separated; "-" when none.
std::string PlacedNodes(const json& w) {
  std::set<std::string> nodes;
  for (const auto& p : w.value("placements", json::array())) nodes.insert(p.value("node", ""));
  std::string n;
  for (const auto& x : nodes) n += (n.empty() ? "" : ",") + x;
  return n.empty() ? "-" : n;
}

void WorkloadRows(const json& items, std::ostream& out, bool wide) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& w : items) {
    std::string reason = "-";
    if (w.contains("pendingReason")) {
      reason = Str(w["pendingReason"], "message", "");
    } else if (w.contains("placements") && !w["placements"].empty()) {
      std::set<std::string> nodes;
      for (const auto& p : w["placements"]) nodes.insert(p["node"].get<std::string>());
      std::string n;
      for (const auto& x : nodes) n += (n.empty() ? "" : ",") + x;
      reason = "on " + n;
    } else if (w.contains("message")) {
      reason = Str(w, "message");
    }
    if (wide) {
      std::string project = Str(w, "project");
      rows.push_back({Str(w, "id"), Str(w, "name"), Str(w, "kind"), project.substr(0, project.find('/')), project,
                      Str(w, "queue"), Str(w, "submittedBy"), Str(w, "priorityClass"), Str(w, "state"),
                      HeldDevices(w), PlacedNodes(w), HumanAge(w.value("submittedUs", int64_t{0})), reason});
    } else {
      rows.push_back({Str(w, "id"), Str(w, "name"), Str(w, "kind"), Str(w, "queue"), Str(w, "state"),
                      HumanAge(w.value("submittedUs", int64_t{0})), Truncate(reason, 90)});
    }
  }
  if (wide) {
    PrintTable(out, {"ID", "NAME", "KIND", "TENANT", "PROJECT", "QUEUE", "SUBMITTED BY", "PRIORITY", "STATE", "DEVICES",
                     "NODES", "AGE", "REASON/PLACEMENT"},
               rows);
  } else {
    PrintTable(out, {"ID", "NAME", "KIND", "QUEUE", "STATE", "AGE", "REASON/PLACEMENT"}, rows);
  }
}

void WorkloadTable(const json& items, std::ostream& out) { WorkloadRows(items, out, false); }
void WorkloadTableWide(const json& items, std::ostream& out) { WorkloadRows(items, out, true); }

// "4s ago", "41s ago (late)" from the server's heartbeatAgeSeconds; "-" for nodes without an agent.
std::string HeartbeatCell(const json& n) {
  if (!n.contains("heartbeatAgeSeconds")) return "-";
  std::string cell = std::to_string(n.value("heartbeatAgeSeconds", int64_t{0})) + "s ago";
  return n.value("heartbeatLate", false) ? cell + " (late)" : cell;
}

// The node's state; "NotReady (35s)" with how long, by the server's clock; a cordon after a
// comma, as kubectl's "Ready,SchedulingDisabled": "Ready,Draining".
std::string NodeStateCell(const json& n) {
  std::string state = Str(n, "state");
  if (n.contains("cordon") && n["cordon"].is_object()) state += "," + Str(n["cordon"], "state");
  if (!n.contains("notReadySinceUs") || !n.contains("lastHeartbeatUs")) return state;
  const int64_t now = n.value("lastHeartbeatUs", int64_t{0}) + n.value("heartbeatAgeSeconds", int64_t{0}) * 1'000'000;
  return state + " (" + std::to_string(std::max<int64_t>(0, now - n.value("notReadySinceUs", now)) / 1'000'000) + "s)";
}

// The SIMULATED cell: "yes" when no agent runs the node (its tasks are placed, not run), "devices"
// when an agent runs it with simulated devices (--fake-devices: its tasks run as processes),
// "no" otherwise.
std::string SimulatedCell(const json& n) {
  if (!n.value("agent", false)) return "yes";
  return n.value("simulated", false) ? "devices" : "no";
}

void NodeRows(const json& items, std::ostream& out, bool wide) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& n : items) {
    std::map<std::string, int> flavors;
    int64_t total = 0;
    for (const auto& d : n["devices"]) {
      flavors[d["flavor"].get<std::string>()]++;
      total += 1000;
    }
    std::string devs;
    for (const auto& [f, c] : flavors) devs += (devs.empty() ? "" : " ") + std::to_string(c) + "x " + f;
    std::vector<std::string> row = {
        Str(n, "name"), Str(n, "pool"), NodeStateCell(n),
        Cores(n.value("allocatedCpuMilli", int64_t{0})) + "/" + Cores(n.value("cpuMilli", int64_t{0})),
        Bytes(n.value("allocatedMemoryBytes", int64_t{0})) + "/" + Bytes(n.value("memoryBytes", int64_t{0})),
        devs.empty() ? "-" : devs, total == 0 ? "-" : Devices(n.value("freeDeviceMilli", int64_t{0})) + "/" + Devices(total),
        SimulatedCell(n), HeartbeatCell(n)};
    if (wide) {
      std::set<std::string> domains;
      for (const auto& d : n["devices"]) {
        if (!d.value("interconnectDomain", "").empty()) domains.insert(d.value("interconnectDomain", ""));
      }
      std::string dom, labels, taints;
      for (const auto& d : domains) dom += (dom.empty() ? "" : ",") + d;
      const json l = n.value("labels", json::object());
      for (const auto& [k, v] : l.items()) labels += (labels.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
      for (const auto& t : n.value("taints", json::array())) {
        taints += (taints.empty() ? "" : ",") + (t.is_string() ? t.get<std::string>() : t.value("key", t.dump()));
      }
      row.insert(row.begin() + 1, Str(n, "cluster"));
      row.insert(row.end() - 2, dom.empty() ? "-" : dom);
      row.insert(row.end() - 2, labels.empty() ? "-" : labels);
      row.insert(row.end() - 2, taints.empty() ? "-" : taints);
      row.insert(row.end() - 2, ExtendedUsedOfAll(n));
    }
    rows.push_back(std::move(row));
  }
  if (wide) {
    PrintTable(out, {"NAME", "CLUSTER", "POOL", "STATE", "CPU(USED/ALL)", "MEMORY(USED/ALL)", "DEVICES", "FREE", "DOMAINS",
                     "LABELS", "TAINTS", "EXTENDED(USED/ALL)", "SIMULATED", "HEARTBEAT"},
               rows);
  } else {
    PrintTable(out, {"NAME", "POOL", "STATE", "CPU(USED/ALL)", "MEMORY(USED/ALL)", "DEVICES", "FREE", "SIMULATED", "HEARTBEAT"},
               rows);
  }
}

void NodeTable(const json& items, std::ostream& out) { NodeRows(items, out, false); }
void NodeTableWide(const json& items, std::ostream& out) { NodeRows(items, out, true); }

void DeviceTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : items) {
    int64_t used = d.value("allocatedMilli", int64_t{0});
    rows.push_back({Str(d, "node"), std::to_string(d.value("index", 0)), Str(d, "flavor"),
                    Bytes(d.value("memoryBytes", int64_t{0})), Str(d, "health"), Str(d, "interconnectDomain"),
                    used == 0 ? "-" : Devices(used), d.value("simulated", false) ? "yes" : "no"});
  }
  PrintTable(out, {"NODE", "INDEX", "FLAVOR", "MEMORY", "HEALTH", "DOMAIN", "ALLOCATED", "SIMULATED"}, rows);
}

std::string Amount(const std::string& resource, int64_t v) {
  if (resource == "cpu") return Cores(v);
  if (resource == "memory") return Bytes(v);
  return Devices(v);
}

// "A100-80G 16 from qc" / "A100-80G 16 to qb": the server's borrowedFrom / lentTo of each
// device resource of queue `q` (`key`), "-" when none.
std::string Flows(const json& q, const char* key, const char* word) {
  std::string text;
  for (const auto& u : q.value("usage", json::array())) {
    std::string r = u.value("resource", "");
    if (r == "cpu" || r == "memory") continue;
    for (const auto& f : u.value(key, json::array())) {
      text += (text.empty() ? "" : ", ") + r.substr(r.rfind('/') + 1) + " " + Amount(r, f.value("amount", int64_t{0})) +
              " " + word + " " + f.value("queue", "");
    }
  }
  return text.empty() ? "-" : text;
}

void QueueTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : items) {
    std::string usage;
    for (const auto& u : q.value("usage", json::array())) {
      std::string r = u["resource"];
      if (r == "cpu" || r == "memory") continue;
      std::string shortname = r.substr(r.rfind('/') + 1);
      usage += (usage.empty() ? "" : " ") + shortname + "=" + Amount(r, u["used"]) + "/" + Amount(r, u["nominal"]);
    }
    rows.push_back({Str(q, "name"), Str(q, "tenant"), Str(q, "cohort"), Str(q, "queueingStrategy"),
                    std::to_string(q.value("pending", 0)), std::to_string(q.value("admitted", 0)),
                    usage.empty() ? "-" : usage, Flows(q, "borrowedFrom", "from"), Flows(q, "lentTo", "to")});
  }
  PrintTable(out, {"NAME", "TENANT", "COHORT", "STRATEGY", "PENDING", "ADMITTED", "DEVICES(USED/NOMINAL)", "BORROWED",
                   "LENT"},
             rows);
}

// `abacus get shares`, like sshare: usage in weighted device-hours (docs/scheduler.md).
void ShareTable(const json& items, std::ostream& out) {
  auto num = [](const json& j, const char* key, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, j.value(key, 0.0));
    return std::string(buf);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : items) {
    rows.push_back({Str(q, "name"), Str(q, "cohort").empty() ? "-" : Str(q, "cohort"), num(q, "rawUsage", 1),
                    num(q, "decayedUsage", 1), num(q, "weight", 2), num(q, "share", 3), num(q, "fairShare", 3)});
  }
  PrintTable(out, {"QUEUE", "COHORT", "RAW USAGE", "DECAYED USAGE", "WEIGHT", "SHARE", "FAIR SHARE"}, rows);
}

void PoolTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : items) {
    std::string tenants;
    for (const auto& t : p.value("tenantsAllowed", json::array())) {
      tenants += (tenants.empty() ? "" : ",") + t.get<std::string>();
    }
    bool open = p.value("tenants", json::array()).empty();
    rows.push_back({Str(p, "name"), Str(p, "cluster", "-"), Str(p, "purpose", "-"),
                    std::to_string(p.value("nodes", 0)), tenants.empty() ? "-" : tenants + (open ? " (open)" : ""),
                    p.value("declared", true) ? "yes" : "no (from nodes)"});
  }
  PrintTable(out, {"NAME", "CLUSTER", "PURPOSE", "NODES", "TENANTS", "DECLARED"}, rows);
}

void ReservationTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : items) {
    std::string owner = Str(r, "tenant");
    if (owner.empty() && !Str(r, "queue").empty()) owner = "queue " + Str(r, "queue");
    if (owner.empty() && !Str(r, "user").empty()) owner = "user " + Str(r, "user");
    if (owner.empty()) owner = "maintenance";
    std::string holds;
    if (r.contains("devices")) {
      holds = std::to_string(r["devices"].value("count", 0)) + " " + r["devices"].value("flavor", "");
    } else {
      for (const auto& n : r.value("nodes", json::array())) holds += (holds.empty() ? "" : ",") + n.get<std::string>();
    }
    std::string held;
    for (const auto& n : r.value("nodesHeld", json::array())) held += (held.empty() ? "" : ",") + n.get<std::string>();
    const json window = r.value("window", json::object());
    std::string every = r.contains("recurrence") ? r["recurrence"].value("every", "-") : "-";
    rows.push_back({Str(r, "name"), owner, holds, window.value("start", "-"), window.value("end", "-"), every,
                    r.value("drain", false) ? "yes" : "no", Str(r, "state", "-"), held.empty() ? "-" : held});
  }
  PrintTable(out, {"NAME", "FOR", "HOLDS", "START", "END", "EVERY", "DRAIN", "STATE", "NODES"}, rows);
}

void TenantTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : items) {
    std::string projects, pools;
    for (const auto& p : t.value("projects", json::array())) projects += (projects.empty() ? "" : ",") + p.get<std::string>();
    for (const auto& p : t.value("pools", json::array())) pools += (pools.empty() ? "" : ",") + p.get<std::string>();
    rows.push_back({Str(t, "name"), Str(t, "displayName"), projects.empty() ? "-" : projects, pools.empty() ? "any" : pools});
  }
  PrintTable(out, {"NAME", "DISPLAY NAME", "PROJECTS", "POOLS"}, rows);
}

void FlavorTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : items) {
    char weight[32];
    std::snprintf(weight, sizeof(weight), "%g", f.value("weight", 1.0));
    int devices = f.value("devices", 0);
    rows.push_back({Str(f, "name"), weight, std::to_string(f.value("nodes", 0)), std::to_string(devices),
                    devices == 0 ? "-" : Devices(f.value("freeMilli", int64_t{0}))});
  }
  PrintTable(out, {"NAME", "WEIGHT", "NODES", "DEVICES", "FREE"}, rows);
}

void ClusterTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : items) {
    std::string devices;
    const json devs = c.value("devices", json::object());  // held: items() of a temporary dangles
    for (const auto& [flavor, d] : devs.items()) {
      char used[32];
      std::snprintf(used, sizeof used, "%.1f", d.value("allocatedMilli", 0) / 1000.0);
      devices += (devices.empty() ? "" : ", ") + flavor + " " + used + "/" + std::to_string(d.value("total", 0));
    }
    rows.push_back({Str(c, "name"), Str(c, "location"), Str(c, "networkDomain"), std::to_string(c.value("nodes", 0)),
                    std::to_string(c.value("readyNodes", 0)), devices.empty() ? "-" : devices,
                    c.value("declared", false) ? "yes" : "no (from agents)"});
  }
  PrintTable(out, {"NAME", "LOCATION", "NETWORK", "NODES", "READY", "DEVICES (ALLOCATED/TOTAL)", "DECLARED"}, rows);
}

void GenericTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& o : items) {
    rows.push_back({Str(o, "kind"), Str(o, "tenant", ""), Str(o, "name"), Truncate(Str(o, "description", ""), 60)});
  }
  PrintTable(out, {"KIND", "TENANT", "NAME", "DESCRIPTION"}, rows);
}

struct KindInfo {
  std::string path;  // under /api/v1
  void (*table)(const json&, std::ostream&);  // null: the kind prints its own tables (evaluations)
  void (*wide)(const json&, std::ostream&) = nullptr;  // -o wide; null: the table
};

// Returns the route and table of a KIND argument (plural, singular or short).
std::optional<KindInfo> Kind(const std::string& k) {
  static const std::map<std::string, KindInfo> kinds = {
      {"workloads", {"workloads", WorkloadTable, WorkloadTableWide}},
      {"workload", {"workloads", WorkloadTable, WorkloadTableWide}},
      {"wl", {"workloads", WorkloadTable, WorkloadTableWide}},
      {"nodes", {"nodes", NodeTable, NodeTableWide}},
      {"node", {"nodes", NodeTable, NodeTableWide}},                {"devices", {"devices", DeviceTable}},
      {"device", {"devices", DeviceTable}},          {"queues", {"queues", QueueTable}},
      {"queue", {"queues", QueueTable}},             {"tenants", {"tenants", TenantTable}},
      {"tenant", {"tenants", TenantTable}},          {"flavors", {"flavors", FlavorTable}},
      {"flavor", {"flavors", FlavorTable}},          {"projects", {"projects", GenericTable}},
      {"project", {"projects", GenericTable}},       {"cohorts", {"cohorts", GenericTable}},
      {"cohort", {"cohorts", GenericTable}},         {"priorityclasses", {"priorityclasses", GenericTable}},
      {"priorityclass", {"priorityclasses", GenericTable}}, {"pools", {"pools", PoolTable}},
      {"pool", {"pools", PoolTable}},
      {"clusters", {"clusters", ClusterTable}},     {"cluster", {"clusters", ClusterTable}},
      {"reservations", {"reservations", ReservationTable}}, {"reservation", {"reservations", ReservationTable}},
      {"users", {"users", UserTable}},               {"user", {"users", UserTable}},
      {"secrets", {"secrets", SecretTable}},         {"secret", {"secrets", SecretTable}},
      {"policies", {"policies", PolicyTable}},       {"policy", {"policies", PolicyTable}},
      {"admissionpolicies", {"policies", PolicyTable}}, {"admissionpolicy", {"policies", PolicyTable}},
      {"evaluations", {"evaluations", nullptr}},     {"evaluation", {"evaluations", nullptr}},
      {"eval", {"evaluations", nullptr}},
      {"shares", {"shares", ShareTable}},            {"share", {"shares", ShareTable}},
      {"endpoints", {"endpoints", nullptr}},         {"endpoint", {"endpoints", nullptr}},
      {"ep", {"endpoints", nullptr}},
  };
  auto it = kinds.find(k);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

constexpr char kKinds[] =
    "workloads, nodes, devices, queues, tenants, flavors, projects, cohorts, priorityclasses, pools, clusters, "
    "reservations, users, "
    "policies, secrets, evaluations, shares, endpoints";

// "error: unknown kind 'workloda'; did you mean 'workload'? (expected ...)"; returns 2.
int UnknownKind(const std::string& kind) {
  static const std::vector<std::string> names = {
      "workloads", "workload", "wl", "nodes", "node", "devices", "device", "queues", "queue", "tenants", "tenant",
      "flavors", "flavor", "projects", "project", "cohorts", "cohort", "priorityclasses", "priorityclass", "pools",
      "pool", "clusters", "cluster", "reservations", "reservation", "users", "user", "policies", "policy", "admissionpolicies", "admissionpolicy",
      "secrets", "secret", "evaluations", "evaluation", "eval", "shares", "share", "endpoints", "endpoint", "ep"};
  std::string hint = DidYouMean(kind, names);
  std::cerr << "error: unknown kind '" << kind << "'" << (hint.empty() ? "" : ";" + hint) << " (expected " << kKinds
            << ")\n";
  return kExitUsage;
}

// Checks nothing (RunGet and RunDescribe answer an unknown kind with suggestions); names the
// kinds for --help and shell completion.
CLI::Validator KindNames() {
  std::string names = kKinds;
  std::string set;
  for (char ch : names) {
    if (ch != ' ') set += ch;
  }
  return CLI::Validator([](std::string&) { return std::string(); }, "{" + set + "}");
}

// "?project=P" or "?tenant=T" (a secret's scope), or "" for neither.
std::string SecretScopeQuery(const std::string& project, const std::string& tenant) {
  if (!project.empty()) return "?project=" + UrlEncode(project);
  if (!tenant.empty()) return "?tenant=" + UrlEncode(tenant);
  return "";
}

// The singular of a route: "workloads" → "workload", "policies" → "policy".
std::string Singular(const std::string& path) {
  if (path == "policies") return "policy";
  if (path == "priorityclasses") return "priorityclass";
  return path.substr(0, path.size() - 1);
}

// The workload state named by `text` in any case ("running" → "Running"); empty when none is.
std::string CanonicalState(const std::string& text) {
  auto lower = [](std::string v) {
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return v;
  };
  for (int i = 0; i < kWorkloadStateCount; ++i) {
    std::string name(WorkloadStateName(static_cast<WorkloadState>(i)));
    if (lower(name) == lower(text)) return name;
  }
  return "";
}

std::string StateNames() {
  std::string out;
  for (int i = 0; i < kWorkloadStateCount; ++i) {
    out += (i == 0 ? "" : ", ") + std::string(WorkloadStateName(static_cast<WorkloadState>(i)));
  }
  return out;
}

// ---------------------------------------------------------------- verbs

// A value of a diff for people: (none), "" or the JSON.
std::string DiffValue(const json& v) {
  if (v.is_null()) return "(none)";
  if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
  return v.dump();
}

int RunApplyOrSubmit(const Common& c, const std::vector<std::string>& files, bool submit, const ApplyMode& mode) {
  std::vector<SubmitSource> sources;
  for (const auto& f : files) {
    std::string text;
    if (!ReadFile(f, text)) return kExitUsage;
    sources.push_back({f == "-" ? "stdin" : f, std::move(text)});
  }
  return SubmitSources(c.server, c.token, c.ca_cert, c.output, sources, submit, mode);
}

}  // namespace

int SubmitSources(const std::string& server, const std::string& token, const std::string& ca_cert,
                  const std::string& output, const std::vector<SubmitSource>& sources, bool submit,
                  const ApplyMode& mode) {
  Common c{server, token, ca_cert, output};
  const bool dry_run = mode.dry_run || mode.diff;  // --diff shows what would change, changes nothing
  ApiClient api = Client(c);
  int code = kExitOk;
  json all = json::array();
  for (const auto& [name, text] : sources) {
    std::string path = std::string(submit ? "/api/v1/workloads" : "/api/v1/apply") + "?filename=" + UrlEncode(name);
    if (dry_run) path += "&dryRun=1";
    // The file goes as written unless it is re-encoded below (`encoded`): no copy of its text.
    std::string encoded, type = "application/yaml";
    bool as_written = true;
    if (submit) {
      // Validate here, with line numbers, and send the canonical JSON (cheaper for the server to
      // read than YAML); anything but workloads goes as written so the server explains it.
      ParsedDocuments parsed = ParseDocuments(text, name);
      if (!parsed.diagnostics.empty()) {
        std::cerr << "error: " << parsed.diagnostics.ToString();
        code = kExitRefused;
        continue;
      }
      bool all_workloads = !parsed.documents.empty() && parsed.governance.empty() && parsed.extensions.empty() &&
                           std::all_of(parsed.documents.begin(), parsed.documents.end(),
                                       [](const Document& d) { return d.workload() != nullptr; });
      if (all_workloads) {
        // Encoded straight to text, in the spec's own field order (the server reads it unordered).
        nlohmann::ordered_json docs = nlohmann::ordered_json::array();
        for (const Document& d : parsed.documents) docs.push_back(EncodeSpecObject(d.object));
        encoded = docs.dump();
        as_written = false;
        type = "application/json";
      }
    }
    if (!submit && TextMayNameWorkloadKind(text)) {
      // Workloads in an applied file: each updates the active workload of its name, or is
      // submitted (rollout_cmd.cc); the configuration documents go to /apply as before. A file
      // that names no workload kind goes as written, unparsed here (the server parses it).
      ParsedDocuments parsed = ParseDocuments(text, name);
      bool has_workloads = std::any_of(parsed.documents.begin(), parsed.documents.end(),
                                       [](const Document& d) { return d.workload() != nullptr; });
      if (has_workloads) {
        if (!parsed.diagnostics.empty()) {
          std::cerr << "error: " << parsed.diagnostics.ToString();
          code = kExitRefused;
          continue;
        }
        if (!parsed.governance.empty() || !parsed.extensions.empty()) {
          std::cerr << "error: " << name << ": apply workloads apart from users, policies and price lists\n";
          code = kExitRefused;
          continue;
        }
        json config = json::array();
        for (const Document& d : parsed.documents) {
          if (d.workload() == nullptr) config.push_back(json(EncodeSpecObject(d.object)));
        }
        encoded = config.dump();
        as_written = false;
        type = "application/json";
        for (const Document& d : parsed.documents) {
          if (d.workload() == nullptr) continue;
          std::string error;
          json item = ApplyWorkloadDocument(api, json(EncodeSpecObject(d.object)), &error, dry_run);
          if (item.is_null()) {
            std::cerr << error << "\n";
            code = kExitRefused;
          } else {
            all.push_back(item);
          }
        }
        if (config.empty()) continue;
      }
    }
    // A submission or an apply carries an Idempotency-Key: a retry after a lost answer does
    // nothing twice (and answers what the first did: "created", not "unchanged").
    const std::string& body = as_written ? text : encoded;
    ApiResponse r = dry_run ? api.Post(path, body, type) : api.PostIdempotent(path, body, type, NewIdempotencyKey());
    if (!r.ok()) {
      std::cerr << r.ErrorText() << "\n";
      if (r.status == 0) return kExitUnreachable;
      code = kExitRefused;
      continue;
    }
    for (const auto& item : r.body["items"]) all.push_back(item);
  }
  if (c.output != "table") {
    PrintDocument(std::cout, json{{"items", all}}, c.output);
    return code;
  }
  for (const auto& item : all) {
    if (item.value("dryRun", false)) {
      // A workload tried (submit --dry-run, or apply --dry-run of a new one): where it would go now.
      std::cout << Str(item, "kind") << "/" << Str(item, "name") << " in queue " << Str(item, "queue")
                << " (dry run, nothing stored): ";
      std::cout << item.value("text", "") << "\n";
    } else if (submit) {
      std::cout << Str(item, "id") << "  " << Str(item, "kind") << "/" << Str(item, "name") << " submitted to queue "
                << Str(item, "queue") << "\n";
    } else {
      // A workload's action already says "(dry run)" and lists its diff (ApplyWorkloadDocument).
      const bool workload = item.contains("id");
      std::cout << Str(item, "kind") << "/" << Str(item, "name") << " " << Str(item, "action")
                << (dry_run && !workload ? " (dry run)" : "") << "\n";
      // apply --diff: each changed field of a configuration object.
      if (mode.diff && !workload && item.contains("diff") && item["diff"].is_array() &&
          Str(item, "action") != "unchanged") {
        for (const auto& d : item["diff"]) {
          std::cout << "  " << d.value("path", "") << ": " << DiffValue(d.value("from", json())) << " -> "
                    << DiffValue(d.value("to", json())) << "\n";
        }
      }
    }
    // The server's warnings (NeverFits: it is stored but can never run as things stand).
    if (item.contains("warnings") && item["warnings"].is_array()) {
      for (const auto& w : item["warnings"]) {
        if (w.is_string()) std::cerr << "warning: " << Str(item, "name") << ": " << w.get<std::string>() << "\n";
      }
    }
  }
  return code;
}

namespace {

struct GetArgs {
  std::string kind, name, queue, state, project, tenant, model, baseline;
  std::string selector, workload_kind, user;  // workloads: -l, --kind, --user
  bool watch = false;                         // -w (watch.h)
  int limit = 1000;
};

// Checks the workload filters of `get` that only workloads have; prints the usage error.
bool WorkloadFiltersFit(const GetArgs& a, const std::string& path) {
  // The probe of 2026-12-07: `get workloads --model m1` listed every workload, exit 0.
  if (path != "evaluations") {
    for (auto [flag, value] : {std::pair<const char*, const std::string*>{"--model", &a.model}, {"--baseline", &a.baseline}}) {
      if (!value->empty()) {
        std::cerr << "error: " << flag << " filters evaluations only, not " << path << "\n";
        return false;
      }
    }
  }
  if (path == "workloads") {
    if (!a.selector.empty()) {
      auto sel = LabelSelector::Parse(a.selector);
      if (!sel.ok()) {
        std::cerr << "error: -l: " << sel.status().message() << "\n";
        return false;
      }
    }
    if (!a.workload_kind.empty() && !ParseWorkloadKind(a.workload_kind).ok()) {
      std::cerr << "error: --kind: unknown workload kind '" << a.workload_kind
                << "' (expected TrainingJob, InferenceService, Experiment, Evaluation or BatchJob)\n";
      return false;
    }
    return true;
  }
  for (auto [flag, value] : {std::pair<const char*, const std::string*>{"-l", &a.selector}, {"--kind", &a.workload_kind},
                             {"--user", &a.user}}) {
    if (!value->empty()) {
      std::cerr << "error: " << flag << " filters workloads only, not " << path << "\n";
      return false;
    }
  }
  if (a.watch && path != "nodes" && path != "queues") {
    std::cerr << "error: -w watches workloads, nodes and queues (and `abacus events -w`), not " << path << "\n";
    return false;
  }
  return true;
}

// `abacus get endpoints [SERVICE]`: where each InferenceService's replicas listen (every live
// service the caller sees without SERVICE).
int GetEndpoints(ApiClient& api, const std::string& service, const GetFormat& format, const std::string& output) {
  using F = GetFormat::Kind;
  if (format.kind == F::kName || format.kind == F::kCustomColumns) {
    std::cerr << "error: get endpoints prints table, wide, json or yaml\n";
    return kExitUsage;
  }
  json answers = json::array();
  if (!service.empty()) {
    ApiResponse r = api.Get("/api/v1/services/" + UrlEncode(service) + "/endpoints");
    if (!r.ok()) return Fail(r);
    answers.push_back(r.body);
  } else {
    ApiResponse list = api.Get("/api/v1/workloads?kind=InferenceService&limit=100000");
    if (!list.ok()) return Fail(list);
    for (const json& w : list.body.value("items", json::array())) {
      auto state = ParseWorkloadState(w.value("state", ""));
      if (!state.ok() || IsTerminal(*state)) continue;
      ApiResponse r = api.Get("/api/v1/services/" + UrlEncode(w.value("id", "")) + "/endpoints");
      if (r.ok()) answers.push_back(r.body);
    }
  }
  if (format.kind == F::kJson || format.kind == F::kYaml) {
    PrintDocument(std::cout, service.empty() ? json{{"items", answers}} : answers[0], output);
    return kExitOk;
  }
  PrintEndpoints(answers, std::cout);
  return kExitOk;
}

int RunGet(const Common& c, const GetArgs& a) {
  auto kind = Kind(a.kind);
  if (!kind) return UnknownKind(a.kind);
  auto format = ParseGetFormat(c.output);
  if (!format.ok()) {
    std::cerr << "error: -o: " << format.status().message() << "\n";
    return kExitUsage;
  }
  using F = GetFormat::Kind;
  std::string state;
  if (!a.state.empty()) {
    state = CanonicalState(a.state);
    if (kind->path != "workloads") {
      std::cerr << "error: --state filters workloads only, not " << kind->path << "\n";
      return kExitUsage;
    }
    if (state.empty()) {
      std::cerr << "error: unknown workload state '" << a.state << "' (expected one of " << StateNames()
                << "; case does not matter)\n";
      return kExitUsage;
    }
  }
  if (!WorkloadFiltersFit(a, kind->path)) return kExitUsage;
  ApiClient api = Client(c);
  std::string path = "/api/v1/" + kind->path;
  if (kind->path == "endpoints") return GetEndpoints(api, a.name, *format, c.output);
  if (kind->path == "evaluations") {
    if (!a.name.empty()) {
      std::cerr << "error: get evaluations takes no NAME; use --model MODEL to compare its versions\n";
      return kExitUsage;
    }
    std::string q;
    if (!a.model.empty()) q += "&model=" + UrlEncode(a.model);
    if (!a.baseline.empty()) q += "&baseline=" + UrlEncode(a.baseline);
    if (!q.empty()) path += "?" + q.substr(1);
    if (format->kind == F::kName || format->kind == F::kCustomColumns) {
      std::cerr << "error: get evaluations prints table, wide, json or yaml (-o name and custom-columns list "
                   "objects)\n";
      return kExitUsage;
    }
    ApiResponse r = api.Get(path);
    if (!r.ok()) return Fail(r);
    if (format->kind == F::kJson || format->kind == F::kYaml) {
      PrintDocument(std::cout, r.body, c.output);
      return kExitOk;
    }
    return PrintEvaluations(r.body, std::cout, std::cerr);
  }
  if (!a.name.empty() && !a.watch) {
    path += "/" + (kind->path == "projects" ? a.name : UrlEncode(a.name));
  } else if (kind->path == "workloads") {
    std::string q = "?limit=" + std::to_string(a.limit);
    if (!a.queue.empty()) q += "&queue=" + UrlEncode(a.queue);
    if (!state.empty()) q += "&state=" + UrlEncode(state);
    if (!a.project.empty()) q += "&project=" + UrlEncode(a.project);
    if (!a.tenant.empty()) q += "&tenant=" + UrlEncode(a.tenant);
    if (!a.selector.empty()) q += "&labelSelector=" + UrlEncode(a.selector);
    if (!a.workload_kind.empty()) q += "&kind=" + UrlEncode(std::string(WorkloadKindName(*ParseWorkloadKind(a.workload_kind))));
    if (!a.user.empty()) q += "&user=" + UrlEncode(a.user);
    path += q;
  }
  if (kind->path == "secrets") path += SecretScopeQuery(a.project, a.tenant);  // the list or the one
  if (a.watch) {
    WatchSpec spec;
    spec.path = path;
    spec.key = kind->path == "workloads" ? "id" : "name";
    spec.only = a.name;
    spec.output = format->kind == F::kJson ? "json" : format->kind == F::kYaml ? "yaml" : "table";
    spec.headed = format->kind != F::kName;
    const std::string singular = Singular(kind->path);
    spec.table = [format = *format, kind = *kind, singular](const json& items, std::ostream& out) {
      if (format.kind == F::kName) {
        PrintNames(out, singular, items);
      } else if (format.kind == F::kCustomColumns) {
        PrintCustomColumns(out, items, format.columns);
      } else if (format.kind == F::kWide && kind.wide != nullptr) {
        kind.wide(items, out);
      } else {
        kind.table(items, out);
      }
    };
    return RunWatch(api, spec);
  }
  ApiResponse r = api.Get(path);
  if (!r.ok()) return Fail(r);
  if (format->kind == F::kJson || format->kind == F::kYaml) {
    PrintDocument(std::cout, r.body, c.output);
    return kExitOk;
  }
  json items = a.name.empty() ? r.body["items"] : json::array({r.body});
  if (format->kind == F::kName) {
    PrintNames(std::cout, Singular(kind->path), items);
    return kExitOk;
  }
  if (items.empty()) {
    std::cout << "No " << kind->path << " found.\n";
    return kExitOk;
  }
  if (format->kind == F::kCustomColumns) {
    PrintCustomColumns(std::cout, items, format->columns);
  } else if (format->kind == F::kWide && kind->wide != nullptr) {
    kind->wide(items, std::cout);
  } else {
    kind->table(items, std::cout);
  }
  return kExitOk;
}

int RunDescribe(const Common& c, const std::string& kind_arg, const std::string& name, const std::string& project,
                const std::string& tenant) {
  auto kind = Kind(kind_arg);
  if (!kind) return UnknownKind(kind_arg);
  if (kind->table == nullptr) {
    std::cerr << "error: " << kind->path << " are listed, not described: abacus get " << kind->path << "\n";
    return kExitUsage;
  }
  ApiClient api = Client(c);
  if ((!project.empty() || !tenant.empty()) && kind->path != "secrets") {
    std::cerr << "error: --project and --tenant name a secret's scope; " << kind->path << " have none\n";
    return kExitUsage;
  }
  ApiResponse r = api.Get("/api/v1/" + kind->path + "/" + (kind->path == "projects" ? name : UrlEncode(name)) +
                          (kind->path == "secrets" ? SecretScopeQuery(project, tenant) : ""));
  if (!r.ok()) return Fail(r);
  json doc = r.body;
  if (kind->path == "workloads") {
    std::string id = doc.value("id", name);
    if (c.output != "table") {
      ApiResponse ev = api.Get("/api/v1/workloads/" + UrlEncode(id) + "/events");
      ApiResponse ex = api.Get("/api/v1/workloads/" + UrlEncode(id) + "/explain");
      if (ev.ok()) doc["events"] = ev.body["items"];
      if (ex.ok()) doc["explain"] = ex.body;
      PrintDocument(std::cout, doc, c.output);
      return kExitOk;
    }
    DescribeWorkload(api, doc, std::cout);  // for people (describe_view.h); raw fields: -o yaml
    return kExitOk;
  }
  if (kind->path == "nodes" && c.output == "table") {
    DescribeNode(api, doc, std::cout);
    return kExitOk;
  }
  PrintDocument(std::cout, doc, c.output == "json" ? "json" : "yaml");
  return kExitOk;
}

int RunExplain(const Common& c, const std::string& w) {
  ApiClient api = Client(c);
  ApiResponse r = api.Get("/api/v1/workloads/" + UrlEncode(w) + "/explain");
  if (!r.ok()) return Fail(r);
  if (c.output != "table") {
    PrintDocument(std::cout, r.body, c.output);
    return kExitOk;
  }
  std::cout << Str(r.body, "name") << " (" << Str(r.body, "id") << ") in queue " << Str(r.body, "queue") << ": "
            << Str(r.body, "state") << "\n"
            << r.body.value("text", "") << "\n";
  return kExitOk;
}

int RunCancel(const Common& c, const std::string& w, const std::string& reason) {
  ApiClient api = Client(c);
  json body = {{"reason", reason}};
  // Keyed: a retry after a lost answer gets the first answer, not "already Cancelled".
  ApiResponse r = api.PostIdempotent("/api/v1/workloads/" + UrlEncode(w) + "/cancel", body.dump(), "application/json",
                                     NewIdempotencyKey());
  if (!r.ok()) return Fail(r);
  if (c.output != "table") {
    PrintDocument(std::cout, r.body, c.output);
  } else {
    std::cout << Str(r.body, "id") << " (" << Str(r.body, "name") << ") cancelled\n";
  }
  return kExitOk;
}

// abacus delete reservation NAME | secret NAME: only these are deleted this way (workloads are
// cancelled).
int RunDelete(const Common& c, const std::string& kind, const std::string& name, const std::string& project,
              const std::string& tenant) {
  const bool secret = kind == "secret" || kind == "secrets";
  if (kind != "reservation" && kind != "reservations" && !secret) {
    std::cerr << "error: delete takes reservation NAME or secret NAME (a workload: abacus cancel; other "
                 "configuration stays)\n";
    return kExitUsage;
  }
  if (!secret && (!project.empty() || !tenant.empty())) {
    std::cerr << "error: --project and --tenant name a secret's scope; reservations have none\n";
    return kExitUsage;
  }
  ApiClient api = Client(c);
  ApiResponse r = secret ? api.Delete("/api/v1/secrets/" + UrlEncode(name) + SecretScopeQuery(project, tenant))
                         : api.Delete("/api/v1/reservations/" + UrlEncode(name));
  if (!r.ok()) return Fail(r);
  if (c.output != "table") {
    PrintDocument(std::cout, r.body, c.output);
  } else {
    std::cout << (secret ? "secret " : "reservation ") << name << " deleted\n";
  }
  return kExitOk;
}

int RunScale(const Common& c, const std::string& w, int replicas) {
  ApiClient api = Client(c);
  ApiResponse r = api.PostIdempotent("/api/v1/workloads/" + UrlEncode(w) + "/scale", json{{"replicas", replicas}}.dump(),
                                     "application/json", NewIdempotencyKey());
  if (!r.ok()) return Fail(r);
  if (c.output != "table") {
    PrintDocument(std::cout, r.body, c.output);
  } else {
    std::cout << Str(r.body, "id") << " (" << Str(r.body, "name") << ") scaled to " << replicas << "; now "
              << Str(r.body, "state") << "\n";
  }
  return kExitOk;
}

// approve / reject: a tenant admin's answer to an Experiment's temporary quota request.
int RunQuotaDecision(const Common& c, const std::string& w, bool approve) {
  ApiClient api = Client(c);
  ApiResponse r = api.Post("/api/v1/workloads/" + UrlEncode(w) + "/quota", json{{"approve", approve}}.dump(),
                           "application/json");
  if (!r.ok()) return Fail(r);
  if (c.output != "table") {
    PrintDocument(std::cout, r.body, c.output);
  } else {
    std::cout << "temporary quota of " << Str(r.body, "id") << " (" << Str(r.body, "name") << ") "
              << (approve ? "approved" : "rejected") << "; the workload is " << Str(r.body, "state") << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddApplyAndSubmit(CLI::App& app, int* exit_code) {
  {
    auto c = std::make_shared<Common>();
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand("apply", "Create or update tenants, projects, cohorts, queues, priority "
                                                "classes, flavors and pools from multi-document YAML;\n"
                                                "a workload updates the active one of its name in its project "
                                                "(its mutable fields, the server's diff printed), else is submitted.\n"
                                                "Examples: abacus apply -f examples/org.yaml\n"
                                                "          abacus apply -f examples/org.yaml --diff      (what would change; nothing stored)");
    auto mode = std::make_shared<ApplyMode>();
    cmd->add_option("-f,--file", *files, "YAML file(s); - reads stdin")->required();
    cmd->add_flag("--dry-run", mode->dry_run,
                  "check everything on the server (documents, references, roles, admission policies) and say what "
                  "would be created, configured or updated; store nothing");
    cmd->add_flag("--diff", mode->diff, "print each field that would change, per object (implies --dry-run)");
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunApplyOrSubmit(*c, *files, false, *mode); });
  }
  {
    auto c = std::make_shared<Common>();
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand("submit", "Submit workloads (multi-document YAML); prints each id.\n"
                                                 "Examples: abacus submit -f examples/workloads/training.yaml\n"
                                                 "          abacus submit -f job.yaml --dry-run   (checked, admission "
                                                 "policies run, where it would go now; nothing stored)");
    auto mode = std::make_shared<ApplyMode>();
    cmd->add_option("-f,--file", *files, "YAML file(s); - reads stdin")->required();
    cmd->add_flag("--dry-run", mode->dry_run,
                  "validate on the server, run the admission policies and explain where each workload would go "
                  "if the scheduler ran now; store nothing");
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunApplyOrSubmit(*c, *files, true, *mode); });
  }
}

void AddReadVerbs(CLI::App& app, int* exit_code) {
  {
    auto c = std::make_shared<Common>();
    auto a = std::make_shared<GetArgs>();
    CLI::App* cmd = app.add_subcommand("get", std::string("List objects: ") + kKinds +
                                                  ".\nevaluations: the archived results of Evaluation workloads; "
                                                  "with --model, that model's versions side by side\n"
                                                  "(rows dataset x metric, deltas against --baseline).\n"
                                                  "-o: table (default), wide (workloads: tenant, project, submitter, priority, "
                                                  "devices held, nodes; nodes: cluster, domains, labels, taints),\n"
                                                  "name (KIND/NAME per line), json, yaml, custom-columns=HEADER:.path,... "
                                                  "(.field and [N]; docs/cli.md).\n"
                                                  "Examples: abacus get workloads --queue nlp-train --state running\n"
                                                  "          abacus get workloads -l team=nlp,stage!=dev --kind TrainingJob\n"
                                                  "          abacus get workloads -w\n"
                                                  "          abacus get nodes -w -o wide\n"
                                                  "          abacus get workloads -o wide\n"
                                                  "          abacus get nodes -o name\n"
                                                  "          abacus get workloads -o custom-columns=NAME:.name,NODE:.placements[0].node\n"
                                                  "          abacus get evaluations --model llama-3-8b --baseline 1.3");
    cmd->add_option("KIND", a->kind, "what to list")->required()->check(KindNames());
    cmd->add_option("NAME", a->name, "one object (a workload: id or name)");
    cmd->add_option("--queue", a->queue, "workloads: only this queue");
    cmd->add_option("--state", a->state,
                    "workloads: only this state, any case (Pending, Admitted, Running, Preempting, Requeued, "
                    "Succeeded, Failed, Cancelled)");
    cmd->add_option("-p,--project", a->project, "workloads, secrets: only this project (tenant/project)");
    cmd->add_option("--tenant", a->tenant, "workloads: only this tenant; secrets: the tenant's own (tenant-wide)");
    cmd->add_option("-l,--selector", a->selector,
                    "workloads: only those whose labels match: k=v, k!=v, k (has it), !k (has it not), "
                    "comma-separated, all must hold");
    cmd->add_option("--kind", a->workload_kind,
                    "workloads: only this kind (TrainingJob, InferenceService, Experiment, Evaluation, BatchJob)");
    cmd->add_option("--user", a->user, "workloads: only those this user submitted");
    cmd->add_flag("-w,--watch", a->watch,
                  "workloads, nodes, queues: print the list, then each change as the server streams it, until "
                  "Ctrl-C");
    cmd->add_option("--limit", a->limit, "workloads: the newest N")->capture_default_str();
    cmd->add_option("--model", a->model, "evaluations: only this model, its versions compared side by side");
    cmd->add_option("--baseline", a->baseline,
                    "evaluations: the version deltas are against (default: the spec's baselineVersion, else the "
                    "lowest)");
    AddConnectionFlags(cmd, c.get(), false);
    cmd->add_option("-o,--output", c->output,
                    "table, wide, name, json, yaml or custom-columns=HEADER:.path,... (see above)")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](std::string& v) {
              auto f = ParseGetFormat(v);
              return f.ok() ? std::string() : f.status().message();
            },
            kGetFormats));
    cmd->callback([=] { *exit_code = RunGet(*c, *a); });
  }
  {
    auto c = std::make_shared<Common>();
    auto kind = std::make_shared<std::string>();
    auto name = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("describe", "Show one object in detail, for people: a workload with ages and "
                                                   "durations, its tasks (node, attempt, exit code,\nstart, finish, "
                                                   "duration: every task that ran), its explanation and events; a node "
                                                   "with its devices and\nwho holds them, memory in GiB. Raw fields: "
                                                   "-o yaml or -o json.\n"
                                                   "Examples: abacus describe workload llama-ft\n"
                                                   "          abacus describe node h100-a\n"
                                                   "          abacus describe workload llama-ft -o yaml\n"
                                                   "          abacus describe secret db-creds -p acme/ml   # keys, "
                                                   "version: never a value");
    cmd->add_option("KIND", *kind, "kind")->required()->check(KindNames());
    cmd->add_option("NAME", *name, "name (a workload: id or name)")->required();
    auto project = std::make_shared<std::string>();
    auto tenant = std::make_shared<std::string>();
    cmd->add_option("-p,--project", *project, "secrets: the secret's project (tenant/project), when the name is in "
                                              "several scopes");
    cmd->add_option("--tenant", *tenant, "secrets: the tenant-wide secret of this tenant");
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunDescribe(*c, *kind, *name, *project, *tenant); });
  }
  {
    auto c = std::make_shared<Common>();
    auto w = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("explain", "Why a workload waits (quota, placement, preemption, position "
                                                  "in queue) or where it was placed.\nExample: abacus explain llama-ft");
    cmd->add_option("WORKLOAD", *w, "id or name")->required();
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunExplain(*c, *w); });
  }
}

void AddChangeVerbs(CLI::App& app, int* exit_code) {
  {
    auto c = std::make_shared<Common>();
    auto w = std::make_shared<std::vector<std::string>>();
    auto reason = std::make_shared<std::string>();
    auto bulk = std::make_shared<BulkCancelArgs>();
    CLI::App* cmd = app.add_subcommand(
        "cancel", "Cancel a workload, or every active workload that matches -l/--state/--queue/--project (listed and "
                  "confirmed first;\n--yes skips the question, and is needed when stdin is not a terminal).\n"
                  "Examples: abacus cancel llama-ft\n"
                  "          abacus cancel llama-ft bert-sweep eval-7   # several: each is cancelled, the rest go on after a failure\n"
                  "          abacus cancel -l team=vision,stage!=prod --yes\n"
                  "          abacus cancel --state pending --queue nlp-train");
    cmd->add_option("WORKLOAD", *w, "ids or names, one or more (or use the filters below)");
    cmd->add_option("--reason", *reason, "recorded in the workload's events");
    cmd->add_option("-l,--selector", bulk->selector, "labels: k=v,k2!=v (all must hold)");
    cmd->add_option("--state", bulk->state, "only this state, any case (Pending, Admitted, Running, Preempting, Requeued)");
    cmd->add_option("--queue", bulk->queue, "only this queue");
    cmd->add_option("--project", bulk->project, "only this project (tenant/project)");
    cmd->add_flag("-y,--yes", bulk->yes, "cancel without asking");
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] {
      const bool filtered = !bulk->selector.empty() || !bulk->state.empty() || !bulk->queue.empty() || !bulk->project.empty();
      if (filtered == !w->empty()) {
        std::cerr << "error: cancel takes a WORKLOAD or filters (-l, --state, --queue, --project), "
                  << (filtered ? "not both" : "one of them") << "\n";
        *exit_code = kExitUsage;
        return;
      }
      if (!filtered) {
        // Each named workload in turn; one that fails (not found, already ended) does not stop
        // the others, and the exit code is the first failure's.
        *exit_code = kExitOk;
        for (const std::string& name : *w) {
          const int code = RunCancel(*c, name, *reason);
          if (*exit_code == kExitOk) *exit_code = code;
        }
        return;
      }
      BulkCancelArgs args = *bulk;
      args.server = c->server;
      args.token = c->token;
      args.ca_cert = c->ca_cert;
      args.reason = *reason;
      *exit_code = RunBulkCancel(args);
    });
  }
  {
    auto c = std::make_shared<Common>();
    auto kind = std::make_shared<std::string>();
    auto name = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("delete", "Delete a reservation (kind Reservation; admins; nodes its maintenance "
                                                 "window cordoned are uncordoned)\nor a secret (as its creator may: "
                                                 "members of its project, tenant admins; tasks started with it keep "
                                                 "their copy).\n"
                                                 "Examples: abacus delete reservation node3-maint\n"
                                                 "          abacus delete secret db-creds -p acme/ml");
    cmd->add_option("KIND", *kind, "reservation or secret")->required();
    cmd->add_option("NAME", *name, "its name")->required();
    auto project = std::make_shared<std::string>();
    auto tenant = std::make_shared<std::string>();
    cmd->add_option("-p,--project", *project, "secrets: the secret's project (tenant/project); without it and "
                                              "--tenant, the one secret of NAME you may see");
    cmd->add_option("--tenant", *tenant, "secrets: the tenant-wide secret of this tenant");
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunDelete(*c, *kind, *name, *project, *tenant); });
  }
  AddLogsCommand(app, exit_code);  // logs_cmd.cc
  {
    auto c = std::make_shared<Common>();
    auto w = std::make_shared<std::string>();
    auto replicas = std::make_shared<int>(1);
    CLI::App* cmd = app.add_subcommand("scale", "Scale an InferenceService (replicas) or a BatchJob (parallelism).\n"
                                                "Example: abacus scale chat-llama --replicas 4");
    cmd->add_option("WORKLOAD", *w, "id or name")->required();
    cmd->add_option("--replicas", *replicas, "new replicas / parallelism")->required();
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunScale(*c, *w, *replicas); });
  }
  for (bool approve : {true, false}) {
    auto c = std::make_shared<Common>();
    auto w = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        approve ? "approve" : "reject",
        approve ? "Approve an Experiment's pending temporary quota request (tenant admins and admins).\n"
                  "The extra quota counts from admission until spec.temporaryQuota.expires; then the\n"
                  "experiment is reclaimed. Example: abacus approve notebook-7"
                : "Reject an Experiment's pending temporary quota request: it waits on its queue's quota.\n"
                  "Example: abacus reject notebook-7");
    cmd->add_option("WORKLOAD", *w, "id or name")->required();
    AddConnectionFlags(cmd, c.get());
    cmd->callback([=] { *exit_code = RunQuotaDecision(*c, *w, approve); });
  }
}

}  // namespace abacus::cli

#include "cli/describe_view.h"

#include "cli/endpoints_view.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include "cli/client.h"
#include "cli/endpoints_view.h"
#include "cli/output.h"
#include "common/clock.h"
#include "common/control_chars.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

std::string S(const json& j, const char* key, const std::string& fallback = "-") {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return fallback;
  if (j[key].is_string()) return j[key].get<std::string>().empty() ? fallback : j[key].get<std::string>();
  return j[key].dump();
}

int64_t Us(const json& j, const char* key) { return j.is_object() ? j.value(key, int64_t{0}) : 0; }

int64_t NowUs() { return ToMicros(SystemClock::Get().Now()); }

// "2d ago (2026-12-02T18:59:44Z)"; "-" for 0.
std::string When(int64_t us) {
  if (us == 0) return "-";
  return HumanAgo(us) + " (" + FormatTime(FromMicros(us)) + ")";
}

void Field(std::ostream& out, const std::string& name, const std::string& value) {
  std::string label = name + ":";
  label.resize(std::max<size_t>(label.size() + 1, 14), ' ');
  out << label << EscapeControl(value) << "\n";  // a value a client sent reaches no terminal raw
}

std::string Indented(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += pad;
  }
  return out;
}

void Table(std::ostream& out, const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::string> h = headers;
  h[0] = "  " + h[0];
  std::vector<std::vector<std::string>> r = rows;
  for (auto& row : r) row[0] = "  " + row[0];
  PrintTable(out, h, r);
}

}  // namespace

std::string HumanDuration(int64_t micros) {
  if (micros < 0) return "-";
  int64_t s = micros / 1'000'000;
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400), static_cast<long long>(s / 3600 % 24));
  }
  return buf;
}

std::string HumanBytes(int64_t bytes) {
  constexpr double kGi = 1024.0 * 1024 * 1024, kMi = 1024.0 * 1024;
  char buf[48];
  if (bytes == 0 || bytes >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / kGi);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / kMi);
  }
  std::string s = buf;
  if (size_t dot = s.find(".0 "); dot != std::string::npos) s.erase(dot, 2);  // "80.0 GiB" → "80 GiB"
  return s;
}

void DescribeWorkload(ApiClient& api, const json& doc, std::ostream& out) {
  const std::string id = S(doc, "id");
  const json spec = doc.value("spec", json::object());
  Field(out, "Name", S(doc, "name"));
  Field(out, "ID", id);
  Field(out, "Kind", S(doc, "kind"));
  Field(out, "Project", S(doc, "project"));
  Field(out, "Queue", S(doc, "queue"));
  Field(out, "Priority", S(doc, "priorityClass"));
  const int attempt = doc.value("requeues", 0) + 1;
  Field(out, "State", S(doc, "state") + (attempt > 1 ? " (attempt " + std::to_string(attempt) + ")" : "") +
                          (doc.contains("failureReason") ? ", " + S(doc, "failureReason") : ""));
  if (doc.contains("message")) Field(out, "Message", S(doc, "message"));
  std::string labels;
  const json label_map = spec.value("labels", json::object());  // held: items() of a temporary dangles
  for (const auto& [k, v] : label_map.items()) {
    labels += (labels.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  Field(out, "Labels", labels.empty() ? "-" : labels);
  Field(out, "Submitted", When(Us(doc, "submittedUs")) + (doc.contains("submittedBy") ? " by " + S(doc, "submittedBy") : ""));
  const int64_t submitted = Us(doc, "submittedUs"), admitted = Us(doc, "admittedUs"), first = Us(doc, "firstAdmittedUs");
  const int64_t started = Us(doc, "startedUs"), finished = Us(doc, "finishedUs");
  if (admitted != 0 || first != 0) {
    Field(out, "Admitted", When(admitted != 0 ? admitted : first) + ", waited " +
                               HumanDuration((first != 0 ? first : admitted) - submitted));
  }
  if (started != 0) Field(out, "Started", When(started));
  if (finished != 0) Field(out, "Finished", When(finished));
  if (started != 0) Field(out, "Ran", HumanDuration((finished != 0 ? finished : NowUs()) - started) + (finished == 0 ? " so far" : ""));
  // What each task group asks.
  const json groups = spec.value("spec", json::object()).value("taskGroups", json::array());
  for (const json& g : groups) {
    const json res = g.value("resources", json::object());
    std::string asks;
    for (const auto& [k, v] : res.items()) {
      std::string ask;
      if (k == "accelerators" && v.is_object()) {  // "8x gpu/nvidia/* (40Gi each)"
        ask = S(v, "count") + "x " + S(v, "flavor") + (v.contains("memory") ? " (" + S(v, "memory") + " each)" : "");
      } else {
        ask = k + " " + (v.is_string() ? v.get<std::string>() : v.dump());
      }
      asks += (asks.empty() ? "" : ", ") + ask;
    }
    Field(out, "Group " + S(g, "name"), std::to_string(g.value("replicas", 1)) + " x {" + asks + "}");
  }

  // Tasks: the current run of each slot (from the placements) and every earlier task that wrote
  // output (GET …/tasks: each attempt, each array task).
  std::map<std::string, std::vector<std::string>> rows;  // task id → row
  auto task_id = [&](const json& p, int at) {
    std::string t = id + "." + std::to_string(p.value("group", 0)) + "." + std::to_string(p.value("replica", 0)) + "." +
                    std::to_string(at);
    if (p.value("run", 0) > 0) t += "." + std::to_string(p.value("run", 0));
    return t;
  };
  for (const json& p : doc.value("placements", json::array())) {
    const int64_t s = Us(p, "startedUs"), f = Us(p, "finishedUs");
    std::string exit = p.contains("exitCode") && (S(p, "phase") == "Exited" || S(p, "phase") == "Lost")
                           ? std::to_string(p.value("exitCode", 0)) : "-";
    if (p.value("oomKilled", false)) exit += " (OOM)";
    if (p.contains("signal")) exit += " (signal " + S(p, "signal") + ")";
    rows[task_id(p, attempt)] = {task_id(p, attempt), S(p, "node"), std::to_string(attempt),
                                 p.contains("index") ? S(p, "index") : "-", S(p, "phase", "Placed"), exit,
                                 s != 0 ? HumanAgo(s) : "-", f != 0 ? HumanAgo(f) : "-",
                                 s != 0 ? HumanDuration((f != 0 ? f : NowUs()) - s) : "-"};
  }
  ApiResponse ev = api.Get("/api/v1/workloads/" + UrlEncode(id) + "/events");
  const json events = ev.ok() ? ev.body.value("items", json::array()) : json::array();
  for (const json& e : events) {  // every task that ended: each array task, each attempt
    if (S(e, "type") != "TaskEnded") continue;
    const json d = e.value("details", json::object());
    const std::string tid = S(d, "task");
    if (rows.count(tid) > 0) continue;  // the slot's current run, as it is now
    const int64_t s = Us(d, "startedUs"), f = Us(d, "finishedUs");
    std::string exit = S(d, "phase") == "Lost" ? "- (" + S(d, "lostReason") + ")" : S(d, "exitCode");
    if (d.value("oomKilled", false)) exit += " (OOM)";
    if (d.contains("signal")) exit += " (signal " + S(d, "signal") + ")";
    rows[tid] = {tid, S(d, "node"), S(d, "attempt"), d.contains("index") ? S(d, "index") : "-", S(d, "phase"), exit,
                 s != 0 ? HumanAgo(s) : "-", f != 0 ? HumanAgo(f) : "-", s != 0 && f != 0 ? HumanDuration(f - s) : "-"};
  }
  ApiResponse tasks = api.Get("/api/v1/workloads/" + UrlEncode(id) + "/tasks");
  if (tasks.ok()) {
    for (const json& t : tasks.body.value("items", json::array())) {
      const std::string tid = S(t, "taskId");
      if (rows.count(tid) > 0) continue;
      rows[tid] = {tid, "-", S(t, "attempt"), "-", "ended", "-", "-", "-", "-"};
    }
  }
  out << "\nTasks:\n";
  if (rows.empty()) {
    out << "  none yet\n";
  } else {
    std::vector<std::vector<std::string>> list;
    for (auto& [_, row] : rows) list.push_back(row);
    Table(out, {"TASK", "NODE", "ATTEMPT", "INDEX", "PHASE", "EXIT", "STARTED", "FINISHED", "DURATION"}, list);
  }
  if (S(doc, "kind") == "InferenceService") {  // where a gateway sends its requests (endpoints_view.h)
    ApiResponse ep = api.Get("/api/v1/services/" + UrlEncode(id) + "/endpoints");
    if (ep.ok()) {
      out << "\nEndpoints:\n";
      PrintEndpoints(json::array({ep.body}), out, "  ");
    }
  }
  ApiResponse ex = api.Get("/api/v1/workloads/" + UrlEncode(id) + "/explain");
  if (ex.ok()) out << "\nExplain:\n" << Indented(ex.body.value("text", ""), "  ") << "\n";
  if (ev.ok()) {
    out << "\nEvents:\n";
    std::vector<std::vector<std::string>> list;
    for (const json& e : events) {
      if (S(e, "type") == "TaskEnded") continue;  // in Tasks above
      const json d = e.value("details", json::object());
      list.push_back({HumanAgo(Us(e, "timeUs")), S(e, "type"), d.is_object() ? S(d, "message", "") : ""});
    }
    Table(out, {"AGE", "TYPE", "MESSAGE"}, list);
  }
}

void DescribeNode(ApiClient& api, const json& doc, std::ostream& out) {
  const std::string name = S(doc, "name");
  Field(out, "Name", name);
  // The agent's liveness, and what the scheduler sees when an operator cordoned or drains it.
  const std::string scheduling = doc.value("schedulingState", "");
  Field(out, "State", S(doc, "state") + (!scheduling.empty() && scheduling != S(doc, "state") ? ", " + scheduling : ""));
  if (doc.contains("cordon") && doc["cordon"].is_object()) {
    const auto& c = doc["cordon"];
    std::string line = S(c, "state");
    if (c.contains("by")) line += " by " + S(c, "by");
    if (c.contains("since")) line += " since " + S(c, "since");
    if (c.contains("deadline")) line += ", grace until " + S(c, "deadline");
    if (c.contains("reason") && !S(c, "reason").empty()) line += ": " + S(c, "reason");
    Field(out, "Cordon", line);
  }
  Field(out, "Cluster", S(doc, "cluster"));
  Field(out, "Pool", S(doc, "pool"));
  Field(out, "CPU", Cores(doc.value("allocatedCpuMilli", int64_t{0})) + " of " + Cores(doc.value("cpuMilli", int64_t{0})) +
                        " cores allocated");
  Field(out, "Memory", HumanBytes(doc.value("allocatedMemoryBytes", int64_t{0})) + " of " +
                           HumanBytes(doc.value("memoryBytes", int64_t{0})) + " allocated");
  if (doc.contains("extended")) Field(out, "Extended", ExtendedUsedOfAll(doc) + " allocated");
  Field(out, "Run by", doc.contains("agentVersion")      ? "agent " + S(doc, "agentVersion")
                       : doc.value("simulated", false) ? "nothing (simulated)"
                                                        : "no agent (registered through the API)");
  if (doc.contains("lastHeartbeatUs")) {
    // Ages by the server's clock: its heartbeatAgeSeconds, not this machine's.
    const int64_t last = Us(doc, "lastHeartbeatUs");
    const int64_t server_now = last + doc.value("heartbeatAgeSeconds", int64_t{0}) * 1'000'000;
    Field(out, "Last heartbeat", HumanDuration(server_now - last) + " ago (" + S(doc, "lastHeartbeat") + ")" +
                                     (doc.value("heartbeatLate", false) ? ", late" : ""));
    if (doc.contains("notReadySinceUs")) {
      Field(out, "NotReady since", HumanDuration(std::max<int64_t>(0, server_now - Us(doc, "notReadySinceUs"))) +
                                       " ago (" + S(doc, "notReadySince") + ")");
    }
  }
  std::string labels;
  const json label_map = doc.value("labels", json::object());  // held: items() of a temporary dangles
  for (const auto& [k, v] : label_map.items()) {
    labels += (labels.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  Field(out, "Labels", labels.empty() ? "-" : labels);
  // Holders: the workloads (that the caller may see) whose placements on this node hold a device.
  std::map<int, std::vector<std::string>> holders;
  std::vector<std::vector<std::string>> tasks;
  ApiResponse wl = api.Get("/api/v1/workloads?limit=100000");
  if (wl.ok()) {
    for (const json& w : wl.body.value("items", json::array())) {
      const std::string st = S(w, "state");
      if (st != "Admitted" && st != "Running" && st != "Preempting") continue;
      for (const json& p : w.value("placements", json::array())) {
        if (S(p, "node") != name) continue;
        std::string devs;
        for (const json& d : p.value("devices", json::array())) {
          const int milli = d.value("milli", 0);
          holders[d.value("index", -1)].push_back(S(w, "name") + (milli < 1000 ? " (" + std::to_string(milli) + "m)" : ""));
          devs += (devs.empty() ? "" : ",") + std::to_string(d.value("index", -1));
        }
        tasks.push_back({S(w, "name"), S(w, "id"), std::to_string(p.value("group", 0)) + "." + std::to_string(p.value("replica", 0)),
                         Cores(p.value("cpuMilli", int64_t{0})), HumanBytes(p.value("memoryBytes", int64_t{0})),
                         devs.empty() ? "-" : devs, S(p, "phase", "Placed")});
      }
    }
  }
  out << "\nDevices:\n";
  std::vector<std::vector<std::string>> devices;
  for (const json& d : doc.value("devices", json::array())) {
    const int index = d.value("index", -1);
    std::string held;
    for (const auto& h : holders[index]) held += (held.empty() ? "" : ", ") + h;
    devices.push_back({std::to_string(index), S(d, "flavor"), HumanBytes(d.value("memoryBytes", int64_t{0})),
                       S(d, "health", "Healthy"), S(d, "interconnectDomain"), held.empty() ? "-" : held});
  }
  if (devices.empty()) {
    out << "  none (CPU only)\n";
  } else {
    Table(out, {"INDEX", "FLAVOR", "MEMORY", "HEALTH", "DOMAIN", "HELD BY"}, devices);
  }
  out << "\nWorkloads on it:\n";
  if (tasks.empty()) {
    out << "  none\n";
  } else {
    Table(out, {"NAME", "ID", "TASK", "CPU", "MEMORY", "DEVICES", "PHASE"}, tasks);
  }
}

}  // namespace abacus::cli

#include "server/watch_api.h"

#include <httplib.h>

#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <unordered_set>

#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/records.h"
#include "server/read_views_json.h"
#include "server/route_table.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

constexpr int kDefaultTimeoutSeconds = 30;
constexpr int kMaxTimeoutSeconds = 300;

struct WatchParams {
  uint64_t resource_version = 0;  // 0: list first
  steady_clock::time_point deadline;
  std::unique_ptr<ChangeFeed::Place> place;  // a watch's (null for a plain list)
};

// Reads resourceVersion and timeoutSeconds; answers 400 and returns nullopt when malformed.
std::optional<WatchParams> ReadParams(const ControlPlane& cp, const httplib::Request& req, httplib::Response& res) {
  WatchParams p;
  int timeout = kDefaultTimeoutSeconds;
  try {
    if (req.has_param("resourceVersion") && !req.get_param_value("resourceVersion").empty()) {
      size_t used = 0;
      const std::string v = req.get_param_value("resourceVersion");
      p.resource_version = std::stoull(v, &used);
      if (used != v.size()) throw std::invalid_argument(v);
    }
  } catch (...) {
    SendError(res, 400, "invalid_argument", "resourceVersion: expected the resourceVersion of the previous answer (a number), got '" +
                        req.get_param_value("resourceVersion") + "'");
    return std::nullopt;
  }
  if (req.has_param("timeoutSeconds")) {
    const std::string v = req.get_param_value("timeoutSeconds");
    try {
      size_t used = 0;
      timeout = std::stoi(v, &used);
      if (used != v.size() || timeout < 1 || timeout > kMaxTimeoutSeconds) throw std::out_of_range(v);
    } catch (...) {
      SendError(res, 400, "invalid_argument", "timeoutSeconds: expected 1 to " + std::to_string(kMaxTimeoutSeconds) + ", got '" + v + "'");
      return std::nullopt;
    }
  }
  p.deadline = CallerDeadline(cp, steady_clock::now() + std::chrono::seconds(timeout));
  if (IsWatchRequest(req)) {
    p.place = TakeLongPollPlace(cp, res);
    if (p.place == nullptr) return std::nullopt;  // 429 sent
  }
  return p;
}

json Body(const char* type, json items, uint64_t version) {
  return {{"type", type}, {"items", std::move(items)}, {"resourceVersion", version}};
}

// An item as compared by ServeListWatch: without the fields a heartbeat changes.
json Comparable(json item) {
  if (item.is_object()) {
    for (const char* k : {"heartbeatAgeSeconds", "lastHeartbeatUs", "heartbeatLate", "utilization"}) item.erase(k);
  }
  return item;
}

std::map<std::string, json> ByName(const json& list) {
  std::map<std::string, json> out;
  for (const json& item : list.value("items", json::array())) out[item.value("name", "")] = Comparable(item);
  return out;
}

// The visible events among `changes` (workload events only), each with the workload's id and name.
json VisibleEvents(const ControlPlane& cp, const std::vector<FeedChange>& changes,
                   const std::function<bool(const Workload&)>& visible, const std::string& only_id) {
  std::map<std::string, std::optional<std::string>> names;  // id → name when visible
  json items = json::array();
  for (const FeedChange& c : changes) {
    if (c.event_type.empty() || c.kind != kWorkloadKind) continue;
    if (!only_id.empty() && c.key != only_id) continue;
    auto [it, fresh] = names.try_emplace(c.key);
    if (fresh) {
      it->second = cp.Read([&](const Ledger& l) -> std::optional<std::string> {
        const WorkloadRecord* r = l.FindWorkload(c.key);
        if (r == nullptr || (visible && !visible(r->spec))) return std::nullopt;
        return r->spec.name;
      });
      if (!it->second && cp.ResolveWorkload(c.key, visible).ok()) {  // submitted, not yet ingested
        auto view = cp.GetWorkload(c.key);
        if (view.ok()) it->second = view->record.spec.name;
      }
    }
    if (!it->second) continue;
    json details = json::parse(c.event_json, nullptr, false);
    if (details.is_discarded()) details = nullptr;
    items.push_back({{"seq", c.event_seq},
                     {"time", FormatTime(FromMicros(c.event_time_us))},
                     {"timeUs", c.event_time_us},
                     {"type", c.event_type},
                     {"workload", c.key},
                     {"name", *it->second},
                     {"details", std::move(details)}});
  }
  return items;
}

}  // namespace

bool IsWatchRequest(const httplib::Request& req) {
  if (!req.has_param("watch")) return false;
  const std::string v = req.get_param_value("watch");
  return v == "1" || v == "true" || v.empty();
}

void ServeWorkloadWatch(const ControlPlane& cp, WorkloadFilter filter, const httplib::Request& req,
                        httplib::Response& res) {
  std::optional<WatchParams> p = ReadParams(cp, req, res);
  if (!p) return;
  ChangeFeed& feed = cp.feed();
  uint64_t version = p->resource_version;
  while (true) {
    ChangeFeed::Since since = feed.ChangesSince(version);
    if (version == 0 || !since.complete) {
      // The version was taken before the list: a change made meanwhile comes again next time.
      return SendJson(res, 200, Body("List", ListWorkloadsJson(cp, filter)["items"], since.version));
    }
    std::unordered_set<std::string> ids;
    for (const FeedChange& c : since.changes) {
      if (c.kind == kWorkloadKind) ids.insert(c.key);
    }
    if (!ids.empty()) {
      WorkloadFilter changed = filter;
      changed.ids = &ids;
      changed.limit = std::numeric_limits<size_t>::max();
      json items = ListWorkloadsJson(cp, changed)["items"];
      if (!items.empty()) return SendJson(res, 200, Body("Changes", std::move(items), since.version));
    }
    version = since.version;  // nothing the caller may see changed: wait on
    if (steady_clock::now() >= p->deadline || !feed.WaitPast(version, p->deadline)) {
      return SendJson(res, 200, Body("Changes", json::array(), version));
    }
    if (!CallerStillStands(cp, req, res)) return;  // revoked, disabled or changed while it waited
  }
}

void ServeListWatch(const ControlPlane& cp, const std::function<json()>& list, const httplib::Request& req,
                    httplib::Response& res) {
  std::optional<WatchParams> p = ReadParams(cp, req, res);
  if (!p) return;
  ChangeFeed& feed = cp.feed();
  uint64_t version = feed.version();
  json first = list();
  // A first call, or changes since the caller's version: the list now.
  if (p->resource_version == 0 || p->resource_version != version) {
    return SendJson(res, 200, Body("List", first.value("items", json::array()), version));
  }
  const std::map<std::string, json> before = ByName(first);
  while (true) {
    if (steady_clock::now() >= p->deadline || !feed.WaitPast(version, p->deadline)) {
      return SendJson(res, 200, Body("Changes", json::array(), version));
    }
    if (!CallerStillStands(cp, req, res)) return;
    if (feed.version() == version) continue;  // woken for a credential change, not a change
    version = feed.version();
    json now = list();
    json changed = json::array();
    for (const json& item : now.value("items", json::array())) {
      auto it = before.find(item.value("name", ""));
      if (it == before.end() || it->second != Comparable(item)) changed.push_back(item);
    }
    if (!changed.empty()) return SendJson(res, 200, Body("Changes", std::move(changed), version));
  }
}

void AddEventRoutes(RouteTable& t, const ControlPlane& cp) {
  t.Get("/api/v1/events", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<WatchParams> p = ReadParams(cp, req, res);
    if (!p) return;
    const std::function<bool(const Workload&)> visible = RequestWorkloadFilter();
    std::string only_id;
    if (req.has_param("workload") && !req.get_param_value("workload").empty()) {
      auto id = cp.ResolveWorkload(req.get_param_value("workload"), visible);
      if (!id.ok()) {
        const bool missing = id.status().code() == StatusCode::kNotFound;
        return SendJson(res, missing ? 404 : 409,
                      {{"error", {{"code", missing ? "not_found" : "failed_precondition"}, {"message", id.status().message()}}}});
      }
      only_id = *id;
    }
    ChangeFeed& feed = cp.feed();
    uint64_t version = p->resource_version;
    const bool watch = IsWatchRequest(req);
    while (true) {
      ChangeFeed::Since since = feed.ChangesSince(version);
      if (!watch || version == 0 || !since.complete) {
        // Listed: the workload's stored events, or the recent events this server holds.
        json items;
        if (!only_id.empty()) {
          auto stored = WorkloadEventsJson(cp.Events(only_id));
          if (!stored.ok()) return SendJson(res, 500, {{"error", {{"code", "internal"}, {"message", stored.status().message()}}}});
          items = (*stored)["items"];
          auto view = cp.GetWorkload(only_id);
          const std::string name = view.ok() ? view->record.spec.name : "";
          for (json& e : items) {
            e["workload"] = only_id;
            e["name"] = name;
          }
        } else {
          items = VisibleEvents(cp, feed.Recent().changes, visible, "");
        }
        return SendJson(res, 200, Body("List", std::move(items), since.version));
      }
      json items = VisibleEvents(cp, since.changes, visible, only_id);
      if (!items.empty()) return SendJson(res, 200, Body("Changes", std::move(items), since.version));
      version = since.version;
      if (steady_clock::now() >= p->deadline || !feed.WaitPast(version, p->deadline)) {
        return SendJson(res, 200, Body("Changes", json::array(), version));
      }
      if (!CallerStillStands(cp, req, res)) return;
    }
  });
}

}  // namespace abacus::server

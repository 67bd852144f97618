// Watches (docs/api.md "Watching"): a list route with ?watch=1&resourceVersion=N answers when
// something newer than N that the caller may see exists, or after timeoutSeconds (default 30,
// at most 300), or at once when the server stops. The answer is
//   {"type": "Changes", "items": [what changed], "resourceVersion": M}
// or, when N is 0, absent, of another server life or too old, the whole list as
//   {"type": "List", "items": [...], "resourceVersion": M};
// the caller passes M to its next call. Answers are filtered exactly as the list is.
// The server's ChangeFeed (change_feed.h) is the long poll; nothing polls on a timer.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "server/control_plane.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace abacus::server {

class RouteTable;

// True when the request asks for a watch (?watch=1 or ?watch=true).
bool IsWatchRequest(const httplib::Request& req);
// GET /api/v1/workloads?watch=1: the workloads `filter` keeps (its `ids` and `limit` are set
// here) that changed after the request's resourceVersion.
void ServeWorkloadWatch(const ControlPlane& cp, WorkloadFilter filter, const httplib::Request& req,
                        httplib::Response& res);
// GET /api/v1/nodes?watch=1, /api/v1/queues?watch=1: `list` (the caller's view, {"items": [...]})
// is compared item by item (by "name") with the view at the request's start; the items that
// differ are the changes. Fields that change on every heartbeat are not compared.
void ServeListWatch(const ControlPlane& cp, const std::function<nlohmann::json()>& list, const httplib::Request& req,
                    httplib::Response& res);
// Adds GET /api/v1/events[?workload=W][&watch=1&resourceVersion=N]: events of the workloads the
// caller may see — W's stored events, or (no W) the recent ones this server holds.
void AddEventRoutes(RouteTable& t, const ControlPlane& cp);

}  // namespace abacus::server

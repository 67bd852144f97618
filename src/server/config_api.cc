#include "server/config_api.h"

#include <httplib.h>

#include <string>
#include <vector>

#include "common/build_info.h"
#include "server/control_plane.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/request_thread.h"
#include "server/write_views_json.h"
#include "server/read_views_json.h"
#include "server/request_authorization.h"
#include "server/route_table.h"
#include "server/watch_api.h"
#include "store/migration.h"

namespace abacus::server {

using nlohmann::json;

void AddConfigRoutes(RouteTable& t, ControlPlane& cp) {
  struct ConfigRoute {
    const char* path;
    const char* kind;
  };
  for (ConfigRoute r : {ConfigRoute{"tenants", "tenant"}, ConfigRoute{"projects", "project"},
                        ConfigRoute{"cohorts", "cohort"}, ConfigRoute{"priorityclasses", "priorityclass"},
                        ConfigRoute{"pools", "pool"}, ConfigRoute{"clusters", "cluster"},
                        ConfigRoute{"reservations", "reservation"}}) {
    std::string kind = r.kind;
    t.Get(std::string("/api/v1/") + r.path, AnyUser(),
          [&cp, kind](const httplib::Request&, httplib::Response& res) {
      SendJson(res, 200, FilterVisibleConfig(kind, ConfigListJson(cp.ListConfig(kind))));
    });
    t.Get(std::string("/api/v1/") + r.path + "/(.+)", AnyUser(),
          [&cp, kind](const httplib::Request& req, httplib::Response& res) {
      Send(res, VisibleConfig(kind, ConfigItemJson(cp.GetConfig(kind, req.matches[1]))));
    });
  }
  t.Get("/api/v1/queues", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    auto list = [&cp] { return FilterVisibleConfig("queue", QueuesJson(cp.ListQueues())); };
    if (IsWatchRequest(req)) return ServeListWatch(cp, list, req, res);
    SendJson(res, 200, list());
  });
  t.Get(R"(/api/v1/queues/([^/]+))", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, VisibleConfig("queue", QueueJson(cp.GetQueue(req.matches[1]))));
  });
  // What this server is: any authenticated user may read it (`abacus version`).
  t.Get("/api/v1/version", AnyUser(), [](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200,
             {{"version", std::string(BuildVersion())},
              {"gitCommit", std::string(BuildCommit())},
              {"buildDate", std::string(BuildDate())},
              {"storeSchemaVersion", SqliteMigrations().empty() ? 0 : SqliteMigrations().back().version}});
  });
  t.Get("/api/v1/flavors", AnyUser(),
        [&cp](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, FlavorsJson(cp.ListFlavors())); });
  t.Get("/api/v1/flavors/(.+)", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    json all = FlavorsJson(cp.ListFlavors());
    for (auto& f : all["items"]) {
      if (f["name"] == req.matches[1].str()) return SendJson(res, 200, f);
    }
    SendError(res, 404, "not_found", "flavor '" + req.matches[1].str() + "' not found");
  });
}

void AddApplyRoutes(RouteTable& t, ControlPlane& cp) {
  // `only_kind`: the kind a per-kind route takes ("": POST /api/v1/apply, any).
  auto apply = [&cp](std::string only_kind) {
    return [&cp, only_kind](const httplib::Request& req, httplib::Response& res) {
      const bool dry_run = IsDryRun(req);
      auto r = cp.Apply(req.body, IsJsonBody(req), Param(req, "filename", "request"), &RequestPrincipal(),
                         dry_run ? IdempotentRequest{} : KeyedRequest(req), dry_run, CurrentRequest(), only_kind);
      if (!r.ok()) return SendStatus(res, r.status());
      SendJson(res, 200,
               {{"items", KeyedJson(*r, [](const std::vector<AppliedView>& a) { return ApplyJson(a); })}});
    };
  };
  // Any user: Apply checks each document. Users and policies are their own objects; a
  // reservation has no dry run.
  t.Post("/api/v1/apply", WithDryRun(AnyUser("apply", "config")), apply(""));
  struct KindRoute {
    const char* path;
    const char* kind;
  };
  for (KindRoute r : {KindRoute{"tenants", "Tenant"}, KindRoute{"projects", "Project"}, KindRoute{"cohorts", "Cohort"},
                      KindRoute{"queues", "Queue"}, KindRoute{"priorityclasses", "PriorityClass"},
                      KindRoute{"pools", "Pool"}, KindRoute{"clusters", "Cluster"}, KindRoute{"flavors", "Flavor"}}) {
    t.Post(std::string("/api/v1/") + r.path, WithDryRun(AnyUser("apply", "config")), apply(r.kind));
  }
  t.Post("/api/v1/users", WithDryRun(AnyUser("apply", "user")), apply("User"));
  t.Post("/api/v1/policies", WithDryRun(AnyUser("apply", "policy")), apply("AdmissionPolicy"));
  t.Post("/api/v1/reservations", AnyUser("apply", "config"), apply("Reservation"));
}

}  // namespace abacus::server

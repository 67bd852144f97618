#include "server/shares_api.h"

#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "net/http_framing.h"
#include "sched/tenancy_snapshot.h"
#include "server/control_plane.h"
#include "server/error_detail.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/http_server.h"
#include "server/read_views_json.h"
#include "server/route_table.h"

namespace abacus::server {
namespace {

using nlohmann::json;

double Rounded(double v, double scale) { return std::round(v * scale) / scale; }

}  // namespace

json SharesJson(const std::vector<sched::QueueShare>& shares, const std::vector<std::string>& tenant_of,
                Duration half_life) {
  // By cohort, then queue name (siblings together, as sshare lists an account's children).
  std::vector<size_t> order(shares.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(shares[a].cohort, shares[a].queue) < std::tie(shares[b].cohort, shares[b].queue);
  });
  json items = json::array();
  for (size_t i : order) {
    const sched::QueueShare& s = shares[i];
    items.push_back({{"name", s.queue},
                     {"tenant", i < tenant_of.size() ? tenant_of[i] : ""},
                     {"cohort", s.cohort},
                     {"rawUsage", Rounded(s.raw_usage / 3600.0, 1e3)},
                     {"decayedUsage", Rounded(s.decayed_usage / 3600.0, 1e3)},
                     {"weight", Rounded(static_cast<double>(s.weight_milli) / 1000.0, 1e3)},
                     {"share", Rounded(s.share, 1e6)},
                     {"usageNorm", Rounded(s.usage_norm, 1e6)},
                     {"fairShare", Rounded(s.factor, 1e6)}});
  }
  return {{"halfLifeSeconds", std::chrono::duration_cast<std::chrono::seconds>(half_life).count()},
          {"unit", "weighted device-hours"},
          {"items", std::move(items)}};
}

SharesView ControlPlane::ListShares() const {
  sched::Snapshot tenancy;
  sched::AddTenancy(*ledger_.ConfigSnapshot(), &tenancy);
  std::vector<std::string> tenant_of;
  for (const auto& q : tenancy.queues) tenant_of.push_back(q.tenant);
  const FairShareBook* book = usage_ ? &usage_->shares() : nullptr;  // null: not open yet
  const Duration half_life = book != nullptr ? book->half_life() : Duration(0);
  std::vector<sched::QueueShare> shares;
  if (book != nullptr) {
    shares = book->Shares(tenancy, clock_.Now());
  } else {
    shares = sched::ComputeShares(tenancy.queues, tenancy.cohorts, tenancy.flavor_weight_milli,
                                  sched::UsageHistory(half_life), clock_.Now());
  }
  return {std::move(shares), std::move(tenant_of), half_life};
}

void AddSharesRoutes(RouteTable& t, ControlPlane& cp) {
  t.Get("/api/v1/shares", AnyUser(), [&cp](const httplib::Request&, httplib::Response& res) {
    Send(res, FilterVisibleConfig("queue", SharesJson(cp.ListShares())));
  });
  t.Get(R"(/api/v1/shares/([^/]+))", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1];
    json all = SharesJson(cp.ListShares());
    for (auto& q : all["items"]) {
      if (q["name"] == name) {
        q["halfLifeSeconds"] = all["halfLifeSeconds"];
        return Send(res, VisibleConfig("queue", Result<json>(std::move(q))));
      }
    }
    Send(res, NotFound("queue '" + name + "' not found; `abacus get shares` lists the queues you may see"));
  });
}

}  // namespace abacus::server

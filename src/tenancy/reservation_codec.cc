// kind Reservation: YAML/JSON → ReservationConfig and back (see tenancy_codec.h, docs/specs.md).
#include "common/duration_parse.h"
#include "tenancy/tenancy_codec.h"

namespace abacus {
namespace {

using P = Presence;
constexpr Duration kDay = std::chrono::hours(24);

std::optional<ReservationConfig> Done(SpecContext& ctx, int before, ReservationConfig value) {
  if (ctx.errors() != before) return std::nullopt;
  return value;
}

std::optional<Time> TimeField(MapReader& r, std::string_view key) {
  auto text = r.String(key, P::kRequired);
  if (!text) return std::nullopt;
  auto t = ParseTime(*text);
  if (!t.ok()) {
    r.Error(key, t.status().message());
    return std::nullopt;
  }
  return *t;
}

}  // namespace

std::string ReservationOwner(const ReservationConfig& r) {
  if (!r.tenant.empty()) return r.tenant;
  if (!r.queue.empty()) return "queue " + r.queue;
  if (!r.user.empty()) return "user " + r.user;
  return "maintenance";
}

std::optional<ReservationConfig> DecodeReservation(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "nodes", "devices", "tenant", "queue", "user", "start", "end",
                             "recurrence", "drain", "drainGrace", "description"});
  ReservationConfig c;
  if (auto v = r.Name("name", P::kRequired)) c.name = *v;
  if (auto v = r.StringList("nodes")) c.nodes = *v;
  if (auto d = r.Map("devices", {"flavor", "count", "pool", "cluster"})) {
    if (auto v = d->Parsed<Flavor>("flavor", P::kRequired, Flavor::Parse)) {
      c.flavor = *v;
      if (!v->is_accelerator()) d->Error("flavor", "a reservation holds accelerators: expected gpu/… or npu/…");
    }
    if (auto v = d->Int("count", P::kRequired, 1, 1'000'000)) c.count = static_cast<int32_t>(*v);
    if (auto v = d->Name("pool")) c.pool = *v;
    if (auto v = d->Name("cluster")) c.cluster = *v;
  }
  if (r.Has("nodes") == r.Has("devices")) r.Error("nodes", "give nodes or devices, one of them");
  if (auto v = r.Name("tenant")) c.tenant = *v;
  if (auto v = r.Name("queue")) c.queue = *v;
  if (auto v = r.String("user")) c.user = *v;
  if (int owners = !c.tenant.empty() + !c.queue.empty() + !c.user.empty(); owners > 1) {
    r.Error("tenant", "a reservation is for one owner: tenant, queue or user (none: a maintenance window)");
  }
  auto start = TimeField(r, "start");
  auto end = TimeField(r, "end");
  if (start) c.start = *start;
  if (end) c.end = *end;
  if (start && end && *end <= *start) r.Error("end", "must be after start");
  if (auto v = r.Value("recurrence")) {
    if (v->IsScalar()) {
      std::string every = v->Scalar();
      if (every == "daily") {
        c.every = kDay;
      } else if (every == "weekly") {
        c.every = 7 * kDay;
      } else {
        r.Error("recurrence", "expected daily, weekly or {every: DURATION}, got '" + every + "'");
      }
    } else if (auto m = r.Map("recurrence", {"every"})) {
      if (auto d = m->Dur("every", P::kRequired)) c.every = *d;
    }
    if (c.every.count() > 0 && start && end && c.every < *end - *start) {
      r.Error("recurrence", "repeats every " + FormatDurationSpec(c.every) + ", less than the window (" +
                                FormatDurationSpec(*end - *start) + ")");
    }
  }
  if (auto v = r.Bool("drain")) c.drain = *v;
  if (auto v = r.Dur("drainGrace")) c.drain_grace = *v;
  if (r.Has("drainGrace") && !c.drain) r.Error("drainGrace", "only a drain: true reservation drains");
  if (auto v = r.String("description")) c.description = *v;
  return Done(ctx, before, std::move(c));
}

nlohmann::ordered_json EncodeReservation(const ReservationConfig& c) {
  nlohmann::ordered_json j;
  j["kind"] = kReservationKind;
  j["name"] = c.name;
  if (!c.nodes.empty()) j["nodes"] = c.nodes;
  if (c.count > 0) {
    nlohmann::ordered_json d;
    d["flavor"] = c.flavor.name();
    d["count"] = c.count;
    if (!c.pool.empty()) d["pool"] = c.pool;
    if (!c.cluster.empty()) d["cluster"] = c.cluster;
    j["devices"] = std::move(d);
  }
  if (!c.tenant.empty()) j["tenant"] = c.tenant;
  if (!c.queue.empty()) j["queue"] = c.queue;
  if (!c.user.empty()) j["user"] = c.user;
  j["start"] = FormatTime(c.start);
  j["end"] = FormatTime(c.end);
  if (c.every.count() > 0) j["recurrence"] = {{"every", FormatDurationSpec(c.every)}};
  if (c.drain) {
    j["drain"] = true;
    j["drainGrace"] = FormatDurationSpec(c.drain_grace);
  }
  if (!c.description.empty()) j["description"] = c.description;
  return j;
}

}  // namespace abacus

// The stored JSON form of InferenceState. Times are integers: microseconds since the epoch.
#include "control/inference.h"

namespace abacus::control {

using nlohmann::json;

json ToJson(const InferenceState& s) {
  json history = json::array();
  for (const Recommendation& r : s.autoscaler.history) history.push_back({ToMicros(r.time), r.replicas});
  json ready = json::object();
  for (const auto& [r, t] : s.ready) ready[std::to_string(r)] = ToMicros(t);
  json restarts = json::object();
  for (const auto& [r, rr] : s.restarts) restarts[std::to_string(r)] = {{"count", rr.count}, {"last", ToMicros(rr.last)}};
  const RolloutState& ro = s.rollout;
  return {{"autoscaler",
           {{"desired", s.autoscaler.desired}, {"lastScale", ToMicros(s.autoscaler.last_scale)}, {"history", history}}},
          {"rollout",
           {{"initialized", ro.initialized},
            {"phase", RolloutPhaseName(ro.phase)},
            {"stableVersion", ro.stable_version},
            {"canaryVersion", ro.canary_version},
            {"canaryReplicas", ro.canary_replicas},
            {"started", ToMicros(ro.started)},
            {"healthySince", ToMicros(ro.healthy_since)},
            {"failedVersion", ro.failed_version}}},
          {"shortage",
           {{"open", s.shortage.open},
            {"start", ToMicros(s.shortage.start)},
            {"wanted", s.shortage.wanted},
            {"available", s.shortage.available}}},
          {"ready", ready},
          {"restarts", restarts}};
}

Result<InferenceState> InferenceStateFromJson(const json& j) {
  InferenceState s;
  if (j.is_null()) return s;
  if (!j.is_object()) return InvalidArgument("inference state must be an object");
  auto time = [](const json& o, const char* k) { return FromMicros(o.value(k, int64_t{0})); };
  try {
    json a = j.value("autoscaler", json::object());
    s.autoscaler.desired = a.value("desired", 0);
    s.autoscaler.last_scale = time(a, "lastScale");
    json history = a.value("history", json::array());
    for (const json& h : history) {
      s.autoscaler.history.push_back({FromMicros(h.at(0).get<int64_t>()), h.at(1).get<int32_t>()});
    }
    json ro = j.value("rollout", json::object());
    s.rollout.initialized = ro.value("initialized", false);
    auto phase = ParseRolloutPhase(ro.value("phase", "Stable"));
    if (!phase.ok()) return phase.status().WithContext("inference state");
    s.rollout.phase = *phase;
    s.rollout.stable_version = ro.value("stableVersion", "");
    s.rollout.canary_version = ro.value("canaryVersion", "");
    s.rollout.canary_replicas = ro.value("canaryReplicas", 0);
    s.rollout.started = time(ro, "started");
    s.rollout.healthy_since = time(ro, "healthySince");
    s.rollout.failed_version = ro.value("failedVersion", "");
    json sh = j.value("shortage", json::object());
    s.shortage = {sh.value("open", false), time(sh, "start"), sh.value("wanted", 0), sh.value("available", 0)};
    json ready = j.value("ready", json::object());
    for (const auto& [k, v] : ready.items()) s.ready[std::stoi(k)] = FromMicros(v.get<int64_t>());
    json restarts = j.value("restarts", json::object());
    for (const auto& [k, v] : restarts.items()) {
      s.restarts[std::stoi(k)] = {v.value("count", 0), time(v, "last")};
    }
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("inference state: ") + e.what());
  }
  return s;
}

}  // namespace abacus::control

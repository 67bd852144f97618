#include "control/decision.h"

#include <type_traits>

namespace abacus::control {

using nlohmann::json;

namespace {

json RefJson(const TaskRef& r) { return {{"group", r.group}, {"replica", r.replica}}; }

json Fields(const SetState& d) {
  return {{"to", WorkloadStateName(d.to)}, {"reason", d.reason}, {"message", d.message}};
}
json Fields(const Requeue& d) {
  return {{"consumeRetry", d.consume_retry}, {"notBefore", FormatTime(d.not_before)}, {"reason", d.reason},
          {"message", d.message}, {"env", d.env}};
}
json Fields(const StopTasks& d) {
  json tasks = json::array();
  for (const TaskRef& r : d.tasks) tasks.push_back(RefJson(r));
  return {{"tasks", tasks}, {"signal", d.signal}, {"graceSeconds", d.grace_seconds}, {"reason", d.reason}};
}
json Fields(const RestartReplica& d) {
  return {{"replica", d.replica}, {"notBefore", FormatTime(d.not_before)}, {"reason", d.reason}};
}
json Fields(const StartTask& d) { return {{"index", d.index}}; }
json Fields(const ScaleTo& d) { return {{"replicas", d.replicas}, {"reason", d.reason}}; }
json Fields(const SetVersion& d) { return {{"replica", d.replica}, {"version", d.version}}; }
json Fields(const SetReady& d) { return {{"replica", d.replica}, {"ready", d.ready}}; }
json Fields(const GrantQuota& d) {
  json j = {{"resource", d.resource.Name()}, {"amount", d.amount.ToString()}};
  if (d.until) j["until"] = FormatTime(*d.until);
  return j;
}
json Fields(const RevokeQuota& d) {
  return {{"resource", d.resource.Name()}, {"amount", d.amount.ToString()}, {"reason", d.reason}};
}
json Fields(const RecordShortage& d) {
  json j = {{"wanted", d.wanted}, {"available", d.available}, {"start", FormatTime(d.start)}};
  if (d.end) j["end"] = FormatTime(*d.end);
  return j;
}
json Fields(const CollectResults& d) { return {{"path", d.path}, {"archive", d.archive}}; }
json Fields(const Event& d) { return {{"event", d.type}, {"message", d.message}, {"details", d.details}}; }

template <typename T>
constexpr std::string_view NameOf() {
  if constexpr (std::is_same_v<T, SetState>) return "SetState";
  if constexpr (std::is_same_v<T, Requeue>) return "Requeue";
  if constexpr (std::is_same_v<T, StopTasks>) return "StopTasks";
  if constexpr (std::is_same_v<T, RestartReplica>) return "RestartReplica";
  if constexpr (std::is_same_v<T, StartTask>) return "StartTask";
  if constexpr (std::is_same_v<T, ScaleTo>) return "ScaleTo";
  if constexpr (std::is_same_v<T, SetVersion>) return "SetVersion";
  if constexpr (std::is_same_v<T, SetReady>) return "SetReady";
  if constexpr (std::is_same_v<T, GrantQuota>) return "GrantQuota";
  if constexpr (std::is_same_v<T, RevokeQuota>) return "RevokeQuota";
  if constexpr (std::is_same_v<T, RecordShortage>) return "RecordShortage";
  if constexpr (std::is_same_v<T, CollectResults>) return "CollectResults";
  if constexpr (std::is_same_v<T, Event>) return "Event";
}

}  // namespace

std::string_view DecisionName(const Decision& d) {
  return std::visit([](const auto& x) { return NameOf<std::decay_t<decltype(x)>>(); }, d);
}

json ToJson(const Decision& d) {
  json j = std::visit([](const auto& x) { return Fields(x); }, d);
  j["type"] = DecisionName(d);
  return j;
}

Event MakeEvent(std::string type, std::string message, json details, std::string_view reason) {
  if (!details.is_object()) details = json::object();
  if (!reason.empty()) details["reason"] = reason;
  return Event{std::move(type), std::move(message), std::move(details)};
}

const Event* FindEvent(const Decisions& ds, std::string_view type) {
  for (const Decision& d : ds) {
    if (const Event* e = std::get_if<Event>(&d); e != nullptr && e->type == type) return e;
  }
  return nullptr;
}

}  // namespace abacus::control

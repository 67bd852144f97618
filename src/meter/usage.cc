#include "meter/usage.h"

#include <algorithm>
#include <array>

namespace abacus::meter {
namespace {

constexpr std::array<std::pair<EndReason, std::string_view>, 11> kReasons = {{
    {EndReason::kOpen, "Open"},
    {EndReason::kSucceeded, "Succeeded"},
    {EndReason::kFailed, "Failed"},
    {EndReason::kPreempted, "Preempted"},
    {EndReason::kReclaimed, "Reclaimed"},
    {EndReason::kCancelled, "Cancelled"},
    {EndReason::kNodeLost, "NodeLost"},
    {EndReason::kScaledDown, "ScaledDown"},
    {EndReason::kServerRestart, "ServerRestart"},
    {EndReason::kDrained, "Drained"},
    {EndReason::kRequeued, "Requeued"},
}};

}  // namespace

std::string_view EndReasonName(EndReason reason) {
  for (const auto& [r, name] : kReasons) {
    if (r == reason) return name;
  }
  return "Open";
}

Result<EndReason> ParseEndReason(std::string_view text) {
  for (const auto& [r, name] : kReasons) {
    if (name == text) return r;
  }
  return InvalidArgument("unknown end reason '" + std::string(text) + "'");
}

nlohmann::json UsageToJson(const UsageInterval& iv) {
  nlohmann::json j = {
      {"id", iv.id},
      {"workload", iv.workload_id},
      {"task", iv.task_id},
      {"tenant", iv.tenant},
      {"project", iv.project},
      {"queue", iv.queue},
      {"priorityClass", iv.priority_class},
      {"kind", iv.kind},
      {"model", iv.model},
      {"user", iv.user},
      {"node", iv.node},
      {"cluster", iv.cluster},
      {"pool", iv.pool},
      {"flavor", iv.flavor},
      {"deviceMilli", iv.device_milli},
      {"devices", iv.devices},
      {"deviceMemoryBytes", iv.device_memory_bytes},
      {"cpuMilli", iv.cpu_milli},
      {"memoryBytes", iv.memory_bytes},
      {"start", FormatTime(iv.start)},
      {"startUs", ToMicros(iv.start)},
      {"endReason", EndReasonName(iv.end_reason)},
  };
  if (!iv.extended.empty()) j["extended"] = iv.extended;
  if (iv.end) {
    j["end"] = FormatTime(*iv.end);
    j["endUs"] = ToMicros(*iv.end);
  }
  return j;
}

Result<UsageInterval> UsageFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("usage interval: expected an object");
  UsageInterval iv;
  try {
    iv.id = j.at("id").get<std::string>();
    iv.workload_id = j.at("workload").get<std::string>();
    iv.task_id = j.at("task").get<std::string>();
    iv.tenant = j.value("tenant", "");
    iv.project = j.value("project", "");
    iv.queue = j.value("queue", "");
    iv.priority_class = j.value("priorityClass", "");
    iv.kind = j.value("kind", "");
    iv.model = j.value("model", "");
    iv.user = j.value("user", "");
    iv.node = j.value("node", "");
    iv.cluster = j.value("cluster", "");
    iv.pool = j.value("pool", "");
    iv.flavor = j.value("flavor", "");
    iv.device_milli = j.value("deviceMilli", int64_t{0});
    iv.devices = j.value("devices", std::vector<int>{});
    iv.device_memory_bytes = j.value("deviceMemoryBytes", int64_t{0});
    iv.cpu_milli = j.value("cpuMilli", int64_t{0});
    iv.memory_bytes = j.value("memoryBytes", int64_t{0});
    if (j.contains("extended")) iv.extended = j.at("extended").get<std::map<std::string, int64_t>>();
    iv.start = FromMicros(j.at("startUs").get<int64_t>());
    if (j.contains("endUs")) iv.end = FromMicros(j.at("endUs").get<int64_t>());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("usage interval: ") + e.what());
  }
  auto reason = ParseEndReason(j.value("endReason", "Open"));
  if (!reason.ok()) return reason.status().WithContext("usage interval " + iv.id);
  iv.end_reason = *reason;
  if (iv.end.has_value() == (iv.end_reason == EndReason::kOpen)) {
    return InvalidArgument("usage interval " + iv.id + ": end and endReason disagree");
  }
  return iv;
}

std::pair<Time, Time> Clip(const UsageInterval& iv, Time from, Time to, Time now) {
  Time end = iv.end.value_or(now);
  return {std::max(iv.start, from), std::min(end, to)};
}

}  // namespace abacus::meter

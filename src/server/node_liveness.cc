#include "server/node_liveness.h"

#include <algorithm>

namespace abacus::server {

std::optional<NodeLiveness> LivenessOf(const NodeRecord& node, std::optional<Time> last_seen, Time now,
                                       Duration heartbeat_interval) {
  if (!node.agent) return std::nullopt;
  int64_t last = ToMicros(node.node.last_heartbeat);
  if (last_seen) last = std::max(last, ToMicros(*last_seen));
  if (last == 0) return std::nullopt;
  const int64_t age_us = std::max<int64_t>(0, ToMicros(now) - last);
  const int64_t late_us = 2 * std::chrono::duration_cast<std::chrono::microseconds>(heartbeat_interval).count();
  return NodeLiveness{last, age_us / 1000000, node.node.state == NodeState::kReady && age_us > late_us};
}

void AddLiveness(nlohmann::json& node, const std::optional<NodeLiveness>& liveness) {
  if (!liveness) return;
  node["lastHeartbeatUs"] = liveness->last_heartbeat_us;
  node["lastHeartbeat"] = FormatTime(FromMicros(liveness->last_heartbeat_us));
  node["heartbeatAgeSeconds"] = liveness->heartbeat_age_seconds;
  node["heartbeatLate"] = liveness->heartbeat_late;
  if (node.contains("notReadySinceUs")) node["notReadySince"] = FormatTime(FromMicros(node["notReadySinceUs"].get<int64_t>()));
}

}  // namespace abacus::server

#include "server/node_liveness.h"

#include <algorithm>

namespace abacus::server {

void AddLiveness(nlohmann::json& node, std::optional<Time> last_seen, Time now, Duration heartbeat_interval) {
  if (!node.value("agent", false)) return;
  int64_t last = node.value("lastHeartbeatUs", int64_t{0});
  if (last_seen) last = std::max(last, ToMicros(*last_seen));
  if (last == 0) return;
  node["lastHeartbeatUs"] = last;
  node["lastHeartbeat"] = FormatTime(FromMicros(last));
  const int64_t age_us = std::max<int64_t>(0, ToMicros(now) - last);
  node["heartbeatAgeSeconds"] = age_us / 1000000;
  const int64_t late_us = 2 * std::chrono::duration_cast<std::chrono::microseconds>(heartbeat_interval).count();
  node["heartbeatLate"] = node.value("state", "") == "Ready" && age_us > late_us;
  if (node.contains("notReadySinceUs")) node["notReadySince"] = FormatTime(FromMicros(node["notReadySinceUs"].get<int64_t>()));
}

}  // namespace abacus::server

#include "server/node_history.h"

#include "store/store.h"

namespace abacus::server {

using nlohmann::json;

std::map<std::string, int64_t> DevicesByFlavor(const NodeRecord& node) {
  std::map<std::string, int64_t> out;
  for (const Device& d : node.node.devices) ++out[d.flavor.name()];
  return out;
}

void AddNodeState(const NodeRecord& node, json& details) {
  if (!details.is_object()) details = json::object();
  details["nodeState"] = NodeStateName(node.EffectiveState());  // a cordon counts apart from idle
  details["deviceFlavors"] = DevicesByFlavor(node);
}

Result<std::vector<meter::CapacitySpan>> ReadCapacitySpans(
    Store& store, const std::map<std::string, std::map<std::string, int64_t>>& current) {
  std::vector<meter::CapacitySpan> out;
  for (const auto& [name, devices] : current) {
    ABACUS_ASSIGN_OR_RETURN(auto events, store.Events(kNodeKind, name));
    std::vector<meter::NodeChange> changes;
    for (const EventRecord& e : events) {
      json d = json::parse(e.json, nullptr, false);
      meter::NodeChange c;
      c.at = FromMicros(e.time_us);
      c.state = d.is_object() && d.contains("nodeState") ? d.value("nodeState", "Ready")
                : e.type == "NotReady"                   ? "NotReady"
                                                         : "Ready";
      c.devices = devices;
      if (d.is_object() && d.contains("deviceFlavors") && d["deviceFlavors"].is_object()) {
        c.devices.clear();
        for (const auto& [flavor, count] : d["deviceFlavors"].items()) {
          if (count.is_number_integer()) c.devices[flavor] = count.get<int64_t>();
        }
      }
      changes.push_back(std::move(c));
    }
    auto spans = meter::NodeCapacitySpans(name, changes);
    out.insert(out.end(), spans.begin(), spans.end());
  }
  return out;
}

}  // namespace abacus::server

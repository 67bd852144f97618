#include "sched/window_reservation.h"

#include <algorithm>
#include <unordered_map>

namespace abacus::sched {

std::optional<Window> CurrentWindow(const WindowReservation& r, Time now) {
  if (r.end <= r.start) return std::nullopt;
  if (now < r.end) return Window{r.start, r.end};
  if (r.every.count() <= 0) return std::nullopt;
  const int64_t k = (now - r.end) / r.every + 1;  // occurrences that ended by now
  return Window{r.start + k * r.every, r.end + k * r.every};
}

std::vector<Window> WindowsBetween(const WindowReservation& r, Time from, Time to) {
  std::vector<Window> out;
  for (std::optional<Window> w = CurrentWindow(r, from); w && w->start < to && out.size() < 10'000;) {
    out.push_back(*w);
    if (r.every.count() <= 0) break;
    w = Window{w->start + r.every, w->end + r.every};
  }
  return out;
}

std::vector<std::vector<NodeIndex>> ReservedNodes(const std::vector<NodeInfo>& nodes,
                                                  const std::vector<WindowReservation>& reservations) {
  std::vector<std::vector<NodeIndex>> out(reservations.size());
  std::unordered_map<std::string, NodeIndex> by_name;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(nodes.size()); ++n) by_name.emplace(nodes[n].name, n);
  std::vector<uint8_t> taken(nodes.size(), 0);
  for (size_t i = 0; i < reservations.size(); ++i) {
    const WindowReservation& r = reservations[i];
    if (!r.nodes.empty()) {
      for (const std::string& name : r.nodes) {
        if (auto it = by_name.find(name); it != by_name.end()) out[i].push_back(it->second);
      }
      continue;
    }
    if (r.devices <= 0) continue;
    int32_t need = r.devices;
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(nodes.size()) && need > 0; ++n) {
      const NodeInfo& node = nodes[n];
      if (taken[n]) continue;
      if (!r.pool.empty() && node.pool != r.pool) continue;
      if (!r.cluster.empty() && node.cluster != r.cluster) continue;
      const auto have = std::count_if(node.devices.begin(), node.devices.end(),
                                      [&](const DeviceInfo& d) { return d.flavor == r.flavor; });
      if (have == 0) continue;
      taken[n] = 1;
      out[i].push_back(n);
      need -= static_cast<int32_t>(have);
    }
  }
  return out;
}

bool OwnsReservation(const WindowReservation& r, const WorkloadInfo& w, const QueueInfo* q) {
  if (!r.queue.empty() && q != nullptr && q->name == r.queue) return true;
  if (!r.tenant.empty() && q != nullptr && q->tenant == r.tenant) return true;
  return !r.user.empty() && w.user == r.user;
}

ReservationGate::ReservationGate(const std::vector<NodeInfo>& nodes, const std::vector<QueueInfo>& queues,
                                 const std::vector<WindowReservation>& reservations, Time now)
    : nodes_(&nodes), queues_(&queues), now_(now) {
  if (reservations.empty()) return;
  std::vector<std::vector<NodeIndex>> held = ReservedNodes(nodes, reservations);
  for (size_t i = 0; i < reservations.size(); ++i) {
    std::optional<Window> w = CurrentWindow(reservations[i], now);
    if (!w || held[i].empty()) continue;
    live_.push_back({&reservations[i], *w, std::move(held[i])});
  }
  if (live_.empty()) return;
  node_live_.assign(nodes.size(), {});
  for (size_t i = 0; i < live_.size(); ++i) {
    for (NodeIndex n : live_[i].nodes) node_live_[n].push_back(static_cast<int32_t>(i));
  }
  blocked_.assign(live_.size(), 0);
}

void ReservationGate::For(const WorkloadInfo& w) {
  if (live_.empty() || for_ == &w) return;
  for_ = &w;
  const QueueInfo* q = w.queue >= 0 && w.queue < static_cast<QueueIndex>(queues_->size()) ? &(*queues_)[w.queue] : nullptr;
  for (size_t i = 0; i < live_.size(); ++i) {
    const Live& l = live_[i];
    bool blocked = !OwnsReservation(*l.r, w, q);
    // Before the window, other work backfills only when its declared maxRuntime ends by the start.
    if (blocked && now_ < l.window.start && w.max_runtime.count() > 0 && now_ + w.max_runtime <= l.window.start) {
      blocked = false;
    }
    blocked_[i] = blocked;
  }
}

std::string ReservationGate::Why(NodeIndex n) const {
  if (node_live_.empty() || for_ == nullptr) return "";
  for (int32_t i : node_live_[n]) {
    if (!blocked_[i]) continue;
    const Live& l = live_[i];
    const WindowReservation& r = *l.r;
    std::string what = (*nodes_)[n].name;
    if (r.nodes.empty()) what = std::to_string(r.devices) + " " + Flavor::FromId(r.flavor).name() + " (" + what + " among them)";
    std::string owner = !r.tenant.empty() ? r.tenant : !r.queue.empty() ? "queue " + r.queue : !r.user.empty() ? "user " + r.user : "maintenance";
    std::string out = what + " reserved for " + owner + " (reservation " + r.name + ") from " + FormatTime(l.window.start) +
                      " to " + FormatTime(l.window.end);
    if (now_ >= l.window.start) return out + ", in force now";
    if (for_->max_runtime.count() <= 0) return out + "; this work declares no maxRuntime, so it may not run there before it";
    return out + "; this work's maxRuntime " + FormatDuration(for_->max_runtime) + " would end after it starts";
  }
  return "";
}

std::string ReservationGate::Key() const {
  if (live_.empty()) return "";
  std::string k = "|W";
  for (uint8_t b : blocked_) k += b ? '1' : '0';
  if (for_ != nullptr) k += std::to_string(for_->max_runtime.count());
  return k;
}

}  // namespace abacus::sched

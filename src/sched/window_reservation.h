// Time-window reservations in a cycle (kind Reservation, docs/scheduler.md "Reservations"): which
// nodes each holds, its window in force or next, and per workload which of them keep it off their
// nodes. The Placer consults a ReservationGate in its static filters; with no reservations the
// gate is empty and costs one branch per node visited.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/types.h"

namespace abacus::sched {

struct Window {
  Time start{};
  Time end{};
};

// Returns the occurrence of `r` in force at `now`, else the next one; nullopt once it is over.
std::optional<Window> CurrentWindow(const WindowReservation& r, Time now);

// Returns the occurrences of `r` that overlap [from, to), in time order (at most 10,000).
std::vector<Window> WindowsBetween(const WindowReservation& r, Time from, Time to);

// Returns, per reservation, the nodes it holds: its named nodes that exist, or nodes of its
// pool/cluster in node order (whatever their state: a drain or an outage does not move a
// reservation) until they have `devices` devices of its flavor. A node held by an earlier
// reservation with a device count is not chosen again.
std::vector<std::vector<NodeIndex>> ReservedNodes(const std::vector<NodeInfo>& nodes,
                                                  const std::vector<WindowReservation>& reservations);

// Returns true when `w` (in queue `q`) is the reservation's owner: its tenant, queue or user.
bool OwnsReservation(const WindowReservation& r, const WorkloadInfo& w, const QueueInfo* q);

class ReservationGate {
 public:
  ReservationGate() = default;
  // Resolves the reservations of `snapshot_reservations` over `nodes` at `now`; those over are dropped.
  ReservationGate(const std::vector<NodeInfo>& nodes, const std::vector<QueueInfo>& queues,
                  const std::vector<WindowReservation>& reservations, Time now);

  bool empty() const { return live_.empty(); }
  // Decides, for `w`, which reservations keep it off their nodes (O(reservations); cached for
  // the last workload asked, by address: pass workloads that live as long as the gate).
  void For(const WorkloadInfo& w);
  // Returns true when the workload last given to For may not be placed on node `n`.
  bool Blocks(NodeIndex n) const {
    if (node_live_.empty()) return false;
    for (int32_t r : node_live_[n]) {
      if (blocked_[r]) return true;
    }
    return false;
  }
  // Says why node `n` is kept from the workload last given to For ("" when it is not):
  // "node-3 reserved for maintenance (reservation m1) from 2026-12-05T02:00:00.000Z to …".
  std::string Why(NodeIndex n) const;
  // A key of what For decided, for caches of explanations keyed by request shape ("" when empty).
  std::string Key() const;

 private:
  struct Live {
    const WindowReservation* r;
    Window window;
    std::vector<NodeIndex> nodes;
  };
  const std::vector<NodeInfo>* nodes_ = nullptr;
  const std::vector<QueueInfo>* queues_ = nullptr;
  Time now_{};
  std::vector<Live> live_;
  std::vector<std::vector<int32_t>> node_live_;  // per node: indexes into live_ (empty vector: none at all)
  std::vector<uint8_t> blocked_;                 // per live reservation, for the workload of For
  const WorkloadInfo* for_ = nullptr;
};

}  // namespace abacus::sched

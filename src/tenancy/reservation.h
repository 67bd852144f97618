// ReservationConfig ("kind: Reservation"): capacity held for an owner over a time window, or a
// maintenance window (docs/specs.md "Reservation", docs/scheduler.md "Reservations").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "model/flavor.h"

namespace abacus {

struct ReservationConfig {
  std::string name;
  // What it holds: these nodes, or `count` devices of `flavor` (in `pool` / `cluster` when set).
  std::vector<std::string> nodes;
  Flavor flavor;
  int32_t count = 0;
  std::string pool;
  std::string cluster;
  // Who may use it during the window: at most one of them; none is a maintenance window.
  std::string tenant;
  std::string queue;
  std::string user;
  Time start{};
  Time end{};
  Duration every{0};  // recurrence: `recurrence: {every: 24h}`, `daily` or `weekly`; 0 = once
  bool drain = false; // drain its nodes ahead of the window, uncordon them after it
  Duration drain_grace = std::chrono::minutes(10);  // the drain starts this long before the window
  std::string description;
  bool operator==(const ReservationConfig&) const = default;
};

// Returns "team-a", "queue q", "user alice" or "maintenance".
std::string ReservationOwner(const ReservationConfig& r);

}  // namespace abacus

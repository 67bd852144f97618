// kind Reservation in the server (docs/api.md "Reservations", docs/scheduler.md "Reservations"):
// a reservation's status (its window in force or next, the nodes it holds), the reserved spans
// the utilization report counts, and the maintenance controller
// (ControlPlane::MaintainReservations, reservations.cc), which drains the nodes of `drain: true`
// reservations ahead of their window and uncordons them after it. Its route is in
// reservations_api.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "meter/reports.h"
#include "sched/window_reservation.h"
#include "tenancy/reservation.h"

namespace abacus::server {

// The `by` of cordons and drains a maintenance reservation makes: "reservation NAME".
std::string ReservationActor(const std::string& name);

// A reservation's status at a time: its window in force or next and the nodes it holds.
struct ReservationStatus {
  std::string state;  // Upcoming, Active, Over
  std::optional<sched::Window> window;  // nullopt once over
  std::vector<std::string> nodes_held;
};

// Returns the status of `r` at `now`, holding `nodes`.
ReservationStatus ReservationStatusOf(const ReservationConfig& r, const std::vector<std::string>& nodes,
                                      Time now);

class Ledger;

// The reserved device-hours of the utilization report: per reservation with an owner, per
// window overlapping `window`, per node it holds now, its devices (of the reservation's flavor,
// or every accelerator of a named node). Under the state lock.
std::vector<meter::ReservedSpan> ReservedSpans(const Ledger& ledger, const meter::ReportWindow& window);

}  // namespace abacus::server

// kind Reservation in the server (docs/api.md "Reservations", docs/scheduler.md "Reservations"):
// GET /api/v1/reservations[/NAME] with each reservation's window in force or next and the nodes
// it holds; DELETE /api/v1/reservations/NAME (admins, audited). Applying goes through
// POST /api/v1/apply like every configuration kind. The maintenance controller
// (ControlPlane::MaintainReservations) drains the nodes of `drain: true` reservations ahead of
// their window and uncordons them after it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "meter/reports.h"
#include "tenancy/reservation.h"

namespace abacus::server {

class ControlPlane;
class RouteTable;

// The `by` of cordons and drains a maintenance reservation makes: "reservation NAME".
std::string ReservationActor(const std::string& name);

// Adds to a reservation's JSON `item` its status at `now`: "state" (Upcoming, Active, Over),
// "window" {start, end} in force or next (absent once over) and "nodesHeld".
void AddReservationStatus(const ReservationConfig& r, const std::vector<std::string>& nodes, Time now,
                          nlohmann::json& item);

class Ledger;

// The reserved device-hours of the utilization report: per reservation with an owner, per
// window overlapping `window`, per node it holds now, its devices (of the reservation's flavor,
// or every accelerator of a named node). Under the state lock.
std::vector<meter::ReservedSpan> ReservedSpans(const Ledger& ledger, const meter::ReportWindow& window);

// Adds DELETE /api/v1/reservations/NAME to `t` (GET and POST are the configuration routes).
void AddReservationRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server

// DELETE /api/v1/reservations/NAME (admins, audited; ControlPlane::DeleteReservation,
// reservations.cc). GET /api/v1/reservations[/NAME] and applying (POST /api/v1/apply) are the
// configuration routes; a reservation's status is reservations.h's.
#pragma once

#include "server/reservations.h"

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds DELETE /api/v1/reservations/NAME to `t` (GET and POST are the configuration routes).
void AddReservationRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server

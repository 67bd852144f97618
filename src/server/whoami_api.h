// GET /api/v1/whoami[?workload=W|?node=N] (docs/api.md "Governance"): who the caller is (name,
// kind, role bindings, token id) and, for a named workload or node, the actions its roles allow
// there, decided by the one permission table (govern/authorize.h). The dashboard shows an action
// button only when the action is listed, so the UI never re-implements the role rules.
#pragma once

#include <nlohmann/json.hpp>

#include "govern/authorize.h"
#include "govern/identity.h"

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Returns {"name","kind","roles":[{"role","tenant"?,"project"?,"node"?,"text"}],"tokenId"?} for
// `who`, plus "may": [action names allowed on `about`] when `about` is given.
nlohmann::json WhoAmI(const govern::Principal& who, const govern::Resource* about);

// Adds GET /api/v1/whoami to `t`; any authenticated caller may read it (governance_api.cc).
void AddWhoamiRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server

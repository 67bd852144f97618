// The HTTP layer's hold on the request a thread serves. cpp-httplib runs the pre-routing
// handler, the route handler and the post-routing handler of one request on one thread, so the
// context lives per thread (`t_request`). Only the HTTP layer names it (governance_api.cc,
// request_authorization.cc, http_server.cc, http_answer.cc, the *_api.cc handlers); it passes
// `CurrentRequest()` down to the core explicitly (request_context.h;
// scripts/check-request-context.sh, the ctest request_context_boundary, checks that nothing
// else reads it).
#pragma once

#include <string>

#include "govern/identity.h"
#include "server/request_context.h"

namespace abacus::server {

// The request this HTTP thread serves (inactive outside a request).
extern thread_local RequestContext t_request;

// The request this HTTP thread serves, to pass down to the core; null outside a request.
RequestContext* CurrentRequest();
// The principal of the request this thread serves; outside a request, a principal without roles.
const govern::Principal& RequestPrincipal();
// The workload id that the pre-routing handler resolved a workload route's WORKLOAD (id or
// name) to among what the caller may see; `from_path` outside such a request. Handlers act on it,
// so that what was authorized is what is changed.
std::string RequestWorkloadId(const std::string& from_path);

}  // namespace abacus::server

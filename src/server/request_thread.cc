// The request an HTTP thread serves (request_thread.h).
#include "server/request_thread.h"

namespace abacus::server {

thread_local RequestContext t_request;

RequestContext* CurrentRequest() { return t_request.active ? &t_request : nullptr; }

const govern::Principal& RequestPrincipal() {
  static const govern::Principal kNobody = govern::Principal::User("anonymous", {});
  return t_request.active ? t_request.caller.principal : kNobody;
}

std::string RequestWorkloadId(const std::string& from_path) {
  return t_request.active && !t_request.workload_id.empty() ? t_request.workload_id : from_path;
}

}  // namespace abacus::server

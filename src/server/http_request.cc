#include "server/http_request.h"

#include <utility>
#include <vector>

#include "common/nesting.h"
#include "server/http_answer.h"
#include "server/request_thread.h"

namespace abacus::server {

std::string Param(const httplib::Request& req, const char* name, std::string fallback) {
  return req.has_param(name) ? req.get_param_value(name) : fallback;
}

bool IsJsonBody(const httplib::Request& req) {
  std::string ct = req.get_header_value("Content-Type");
  if (ct.find("json") != std::string::npos) return true;
  if (ct.find("yaml") != std::string::npos) return false;
  size_t i = req.body.find_first_not_of(" \t\r\n");
  return i != std::string::npos && (req.body[i] == '{' || req.body[i] == '[');
}

std::optional<nlohmann::json> JsonBodyOr400(const httplib::Request& req, httplib::Response& res,
                                            std::string_view if_empty) {
  auto parsed = ParseJsonBody(req.body.empty() && !if_empty.empty() ? if_empty : std::string_view(req.body));
  if (!parsed.ok()) {
    SendStatus(res, parsed.status());
    return std::nullopt;
  }
  return std::move(*parsed);
}

Result<std::string> StringField(const nlohmann::json& body, const char* name) {
  if (!body.is_object() || !body.contains(name)) return std::string();
  if (!body[name].is_string()) return InvalidArgument(std::string(name) + ": expected a string");
  return body[name].get<std::string>();
}

IdempotentRequest KeyedRequest(const httplib::Request& req) {
  std::string key = req.get_header_value("Idempotency-Key");
  if (key.empty()) return {};
  std::vector<std::pair<std::string, std::string>> params(req.params.begin(), req.params.end());
  return DescribeRequest(RequestPrincipal().name, std::move(key), req.method, req.path, params, req.body);
}

}  // namespace abacus::server

#include "server/http_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/json_fields.h"
#include "common/nesting.h"
#include "server/http_answer.h"
#include "server/request_thread.h"

namespace abacus::server {

std::string Param(const httplib::Request& req, const char* name, std::string fallback) {
  return req.has_param(name) ? req.get_param_value(name) : fallback;
}

namespace {

// The query parameter `name` read whole as a T within [min, max] (`what`: "a whole number"),
// `fallback` when absent: the one rule IntParam and NumberParam share.
template <typename T>
Result<T> RangedParam(const httplib::Request& req, const char* name, T fallback, T min, T max, const char* what) {
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  T value{};
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, value);
  bool finite = true;
  if constexpr (std::is_floating_point_v<T>) finite = std::isfinite(value);
  if (text.empty() || ec != std::errc() || at != end || !finite || value < min || value > max) {
    return InvalidArgument(fmt::format("{}: expected {} from {} to {}, got '{}'", name, what, min, max, text));
  }
  return value;
}

}  // namespace

Result<int64_t> IntParam(const httplib::Request& req, const char* name, int64_t fallback, int64_t min,
                         int64_t max) {
  return RangedParam<int64_t>(req, name, fallback, min, max, "a whole number");
}

Result<double> NumberParam(const httplib::Request& req, const char* name, double fallback, double min, double max) {
  return RangedParam<double>(req, name, fallback, min, max, "a number");
}

Status OnlyParams(const httplib::Request& req, std::initializer_list<std::string_view> allowed) {
  for (const auto& [name, value] : req.params) {
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return InvalidArgument(name + ": not a query parameter of this route; allowed: " + list);
  }
  return Status::OK();
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

std::optional<nlohmann::json> ActionBodyOr400(const httplib::Request& req, httplib::Response& res,
                                              std::initializer_list<std::string_view> allowed,
                                              std::string_view expected, std::string_view if_empty) {
  std::optional<nlohmann::json> parsed = JsonBodyOr400(req, res, if_empty);
  if (!parsed) return std::nullopt;
  if (Status st = OnlyFields(*parsed, allowed, expected); !st.ok()) {
    SendStatus(res, st);
    return std::nullopt;
  }
  return parsed;
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

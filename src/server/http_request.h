// The request side of a route handler, shared by every *_api.cc file (http_answer.h is the
// answer side): query parameters, the body's format and its JSON with the limits every route
// shares, and the request as its Idempotency-Key names it.
//
//   std::optional<json> body = JsonBodyOr400(req, res);  // answered 400 when refused
//   if (!body) return;
//   auto r = cp.Cancel(id, Param(req, "reason"), KeyedRequest(req), CurrentRequest());
#pragma once

#include <httplib.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/idempotency.h"

namespace abacus::server {

// The query parameter `name`, else `fallback`.
std::string Param(const httplib::Request& req, const char* name, std::string fallback = "");
// The query parameter `name` as a whole number within [min, max], `fallback` when absent;
// InvalidArgument ("tail: expected a whole number from 0 to …, got '-1'") for anything else —
// digits with an optional sign and nothing more: "12abc", "-1" for a size and a value past the
// range are refused, never cut or wrapped.
Result<int64_t> IntParam(const httplib::Request& req, const char* name, int64_t fallback, int64_t min,
                         int64_t max);
// The query parameter `name` as a finite number within [min, max], `fallback` when absent;
// InvalidArgument naming it otherwise ("nan", "0.05x", "1e999").
Result<double> NumberParam(const httplib::Request& req, const char* name, double fallback, double min, double max);
// OK when every query parameter of `req` is among `allowed`; InvalidArgument naming the first
// other one and the allowed ("tenant: not a query parameter of this route; allowed: from, to") —
// a filter the route does not read is refused, never dropped so that the answer holds more than
// was asked (the fifth probe: ?tenant= on a report answered every tenant's rows).
Status OnlyParams(const httplib::Request& req, std::initializer_list<std::string_view> allowed);
// True when the body is JSON: by its Content-Type, else by its first character ({ or [).
bool IsJsonBody(const httplib::Request& req);
// The request's JSON body, read with the limits every route shares (nesting depth before
// parsing, duplicate keys, text that is not JSON: ParseJsonBody); a refused body is answered 400
// here and nullopt returned, so the value handed back is never a discarded one. An empty body
// reads as `if_empty` when that is given, else it is refused too.
std::optional<nlohmann::json> JsonBodyOr400(const httplib::Request& req, httplib::Response& res,
                                            std::string_view if_empty = "");
// The JSON object body of an action (cancel, scale, cordon, drain, a token, …): read as
// JsonBodyOr400 does (an empty body reads as `if_empty`; "" refuses it), then refused with a 400
// unless it is an object whose fields are all among `allowed` — a misspelt field ("reson",
// "expire") is named and refused, never taken as absent (OnlyFields, common/json_fields.h). `expected` is the body's shape for the
// message ("{\"reason\": \"...\"}"). Nullopt when refused, the 400 sent.
std::optional<nlohmann::json> ActionBodyOr400(const httplib::Request& req, httplib::Response& res,
                                              std::initializer_list<std::string_view> allowed,
                                              std::string_view expected, std::string_view if_empty = "{}");
// The string field `name` of a JSON object body ("" when absent); InvalidArgument ("reason:
// expected a string") when it is there but not a string: a field of the wrong type is refused,
// never dropped as if it had not been sent.
Result<std::string> StringField(const nlohmann::json& body, const char* name);
// The request as its Idempotency-Key names it (server/idempotency.h): unkeyed without the header.
IdempotentRequest KeyedRequest(const httplib::Request& req);

}  // namespace abacus::server

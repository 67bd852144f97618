// How every API route answers: JSON bodies, and errors as {"error": {"code", "message",
// "details"}} with the HTTP status of the Status code, the message capped (it may quote request
// input) and stripped of store detail for non-admins (error_detail.h). One copy for all routes.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::server {

// Answers `status` with `body` (bytes that are not UTF-8 replaced, never thrown).
void SendJson(httplib::Response& res, int status, const nlohmann::json& body);
// Answers `status` with an error of `code` and `message` (capped; its lines also as "details").
void SendError(httplib::Response& res, int status, std::string_view code, const std::string& message);
// Answers the error of `st` as the caller may see it (ForCaller), with its HTTP status.
void SendStatus(httplib::Response& res, const Status& st);
// Answers `r`'s value with `ok_status`, or its error as SendStatus does.
void Send(httplib::Response& res, const Result<nlohmann::json>& r, int ok_status = 200);

}  // namespace abacus::server

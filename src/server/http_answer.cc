#include "server/http_answer.h"

#include "net/http_framing.h"
#include "server/error_detail.h"
#include "server/http_server.h"
#include "server/request_thread.h"

namespace abacus::server {

using nlohmann::json;

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, int status, std::string_view code, const std::string& raw_message) {
  // Messages may quote request input (a YAML error's context line): never sent back whole.
  const std::string message = net::CapAnswerText(raw_message);
  json err = {{"code", code}, {"message", message}};
  if (message.find('\n') != std::string::npos) {
    json details = json::array();
    size_t start = 0;
    while (start <= message.size()) {
      size_t end = message.find('\n', start);
      if (end == std::string::npos) end = message.size();
      if (end > start) details.push_back(message.substr(start, end - start));
      start = end + 1;
    }
    err["details"] = details;
  }
  // Messages may quote request bytes (a path, a name) that are not UTF-8: replaced, never thrown.
  SendJson(res, status, json({{"error", err}}));
}

void SendStatus(httplib::Response& res, const Status& given) {
  Status st = ForCaller(given, RequestPrincipal());  // no store detail for non-admins (error_detail.h)
  SendError(res, HttpStatusOf(st.code()), StatusCodeName(st.code()), st.message());
}

void Send(httplib::Response& res, const Result<json>& r, int ok_status) {
  if (r.ok()) {
    SendJson(res, ok_status, *r);
  } else {
    SendStatus(res, r.status());
  }
}

}  // namespace abacus::server

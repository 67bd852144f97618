// WireClient: the load generator's HTTP/1.1 client for abacus_api_bench (bench/api_bench.cc). It sends a prepared
// request in one write on a kept-alive connection and reads one answer (status line, headers,
// a Content-Length body), doing no more work per request than a load generator should (as wrk
// or hey do): the server under test, not the client, should own the two cores. Plain HTTP only;
// `abacus_api_bench --client cli` measures with the CLI's own client instead.
//
//   WireClient c("127.0.0.1", 8420);
//   std::string req = WireClient::Request("POST", "/api/v1/workloads", host, token, type, body);
//   WireAnswer a = c.RoundTrip(req);   // a.status 201, or 0 with a.error
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/transport_failure.h"

namespace abacus::cli {

struct WireAnswer {
  int status = 0;     // 0: no answer (see error)
  std::string body;
  std::string error;  // what went wrong when status is 0
  TransportFailure failure = TransportFailure::kOther;  // why, when status is 0
};

// What the head of an answer at the start of `buf` says.
struct WireAnswerHead {
  bool complete = false;  // false: read more (or see error)
  int status = 0;
  size_t head_size = 0;   // through the blank line
  size_t total = 0;       // head and body
  bool close = false;     // Connection: close
  std::string error;      // a malformed or unsupported answer (then complete is false)
};
// Parses the answer head at the start of `buf`: incomplete until the blank line arrived; an
// error for a head over 64 KiB, a non-HTTP answer, a bad Content-Length or a chunked body.
WireAnswerHead ParseWireAnswerHead(std::string_view buf);

class WireClient {
 public:
  WireClient(std::string host, int port) : host_(std::move(host)), port_(port) {}
  ~WireClient();
  WireClient(const WireClient&) = delete;
  WireClient& operator=(const WireClient&) = delete;

  // Returns the bytes of one request with a bearer token, `extra` headers and a body.
  static std::string Request(const std::string& method, const std::string& path, const std::string& host,
                             const std::string& token, const std::string& content_type, const std::string& body,
                             const std::vector<std::pair<std::string, std::string>>& extra = {});
  // Limits connecting to `connect_seconds` and each read or write to `io_seconds` (0: none, the
  // default, as a load generator wants).
  void SetTimeouts(int connect_seconds, int io_seconds) {
    connect_seconds_ = connect_seconds;
    io_seconds_ = io_seconds;
  }
  // Sends `request` (connecting first when needed) and reads the answer. A kept-alive connection
  // the server closed while idle is noticed before sending and reopened.
  WireAnswer RoundTrip(const std::string& request);
  // Hands the open connection over (−1 when none): the caller closes it.
  int ReleaseFd();

 private:
  bool Connect(WireAnswer& a);
  void Close();
  // Reads until `buf_` holds `n` bytes past `from`; false on close or error.
  bool Fill(size_t need, std::string& error);

  std::string host_;
  int port_;
  int fd_ = -1;
  int connect_seconds_ = 0;
  int io_seconds_ = 0;
  std::string buf_;  // received, not yet consumed
};

}  // namespace abacus::cli

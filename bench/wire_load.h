// WireLoad: drives many kept-alive connections from one thread with epoll, each with one
// request in flight, as wrk does. abacus_api_bench (api_bench.cc) uses it for its clients: a thread per
// client would spend two context switches and a blocking read per request of the two cores
// the server under test needs.
//
//   WireLoad load(std::move(fds), [&](int conn, int64_t n) { return RequestBytes(conn, n); });
//   WireLoadResult r = load.Run(std::chrono::seconds(8));   // r.latencies_ms, r.failures
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace abacus::bench {

struct WireLoadResult {
  std::vector<double> latencies_ms;  // of the answers with the expected status, in arrival order
  int64_t errors = 0;                // other answers, and requests lost with their connection
  std::vector<std::string> first_errors;  // why, for the first three
};

class WireLoad {
 public:
  // The n-th request (0, 1, 2, …) of connection `conn`: the bytes of one HTTP/1.1 request.
  using RequestFn = std::function<std::string(int conn, int64_t n)>;

  // Takes over `fds`: connected, kept-alive sockets (one per client). `expected` is the status
  // that counts as success.
  WireLoad(std::vector<int> fds, RequestFn next_request, int expected = 201);
  ~WireLoad();
  WireLoad(const WireLoad&) = delete;
  WireLoad& operator=(const WireLoad&) = delete;

  // Sends a first request on every connection, then a next one as each answer arrives, until
  // `duration` has passed; then waits for the answers still in flight (up to 30 s more). A
  // connection the server closes or breaks is not reopened: its request counts as an error.
  WireLoadResult Run(std::chrono::duration<double> duration);

 private:
  struct Conn {
    int fd = -1;
    std::string out;       // the request being sent
    size_t sent = 0;
    std::string in;        // received, not yet parsed
    int64_t n = 0;         // requests started
    std::chrono::steady_clock::time_point start;
    bool busy = false;     // a request is in flight
  };

  void Send(int index, Conn& c, WireLoadResult& r);
  void Fail(Conn& c, WireLoadResult& r, const std::string& why);

  std::vector<Conn> conns_;
  RequestFn next_request_;
  int expected_;
  int epoll_ = -1;
};

}  // namespace abacus::bench

// HttpFront: the event-driven front door of the plain-HTTP API. One thread owns every
// connection in an epoll set: it accepts, reads without blocking, frames each request strictly
// (net/http_framing.h) against its limits and timeouts, and parks idle kept-alive connections
// in epoll without a thread. Only complete, validated requests go to the worker pool, in turns
// by client address (net/fair_queue.h); a worker runs the request (httplib's routing and
// handlers, see BufferedServer) and writes its answer. Then, if no other request waits, it keeps
// the connection for about a millisecond and runs the client's next request itself (framed the
// same way); otherwise, or when none comes, it hands the connection back to the front.
//
// Why: cpp-httplib gives each connection a worker thread for its whole keep-alive life, so a few
// hundred idle or slow sockets took every worker and stopped the API (issue 21). Here a worker is
// busy only while a request runs. docs/operations.md ("The HTTP front door") has the limits.
//
//   HttpFront front(options, [](int fd, const ConnAddresses& ends, const std::string& request, bool closing) {
//     ...; return keep; });
//   std::thread t([&] { front.Run(listen_fd); });
//   ...; front.Stop(); t.join();
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "net/conn_addresses.h"
#include "net/fair_queue.h"
#include "net/http_framing.h"

namespace abacus::net {

struct FrontOptions {
  FrameLimits limits;
  // From a request's first byte to the end of its head (slowloris: cut with 408).
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  // From the end of the head to the end of the body (cut with 408).
  std::chrono::milliseconds body_timeout{std::chrono::seconds(30)};
  // A kept-alive connection with no request is closed after this; no worker waits on it.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(5)};
  // Open connections from one source address; more are answered 503 and closed. 0: no limit.
  size_t max_connections_per_client = 512;
  // Open connections in all; 0: the file-descriptor limit less a margin for the server's files.
  size_t max_connections = 0;
  size_t threads = 96;  // workers, each running one request at a time
  // Of those, how many run at once outside a wait for a commit, the loop, a long poll or a slow
  // socket (net/fair_queue.h); 0: four per core, at least 4.
  size_t max_running = 0;
  // Requests one connection carries, read as each request is handed on (so it may change while
  // serving); the last is answered with "Connection: close". Empty or 0: no limit.
  std::function<size_t()> max_requests_per_connection;
  bool tcp_nodelay = true;
};

// Counts since Run began, for tests and metrics.
struct FrontCounters {
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> refused_over_limit{0};  // per-client or total connection limit
  std::atomic<uint64_t> cut_head_timeout{0};
  std::atomic<uint64_t> cut_body_timeout{0};
  std::atomic<uint64_t> closed_idle{0};
  std::atomic<uint64_t> refused_framing{0};  // 4xx/5xx the front answered itself
  std::atomic<uint64_t> requests{0};         // handed to workers
  std::atomic<uint64_t> kept{0};             // of those, read by the worker that held the connection
  std::atomic<uint64_t> open{0};             // connections open now
};

// The counters in Prometheus text form (abacus_http_front_*).
std::string RenderFrontMetrics(const FrontCounters& c);

// Serves one complete request on a worker: writes the answer to `fd` (blocking up to the write
// timeout), and returns whether the connection may carry another request. `ends`: the
// connection's addresses, read once at accept. `closing`: the server is stopping, so the answer
// should say Connection: close.
using RequestRunner =
    std::function<bool(int fd, const ConnAddresses& ends, const std::string& request, bool closing)>;

class HttpFront {
 public:
  HttpFront(FrontOptions options, RequestRunner runner);
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Serves connections accepted on `listen_fd` (bound and listening; made non-blocking) until
  // Stop; then calls `close_listener` at once (the address is free for a successor), lets
  // requests in flight finish and closes every connection. Returns false when it could not
  // start (epoll or eventfd failed) or Stop came first.
  bool Run(int listen_fd, const std::function<void()>& close_listener = nullptr);
  // Ends Run (from any thread, before or during it).
  void Stop();
  // True from Run's start until it returns.
  bool running() const { return running_.load(); }
  const FrontCounters& counters() const { return counters_; }

 private:
  struct Conn;
  void Loop(int listen_fd);
  void AcceptAll(int listen_fd);
  enum class Next { kRun, kHandBack, kClosed };
  bool ReadSome(Conn& c);
  void OnReadable(Conn& c);
  // Frames what c.in holds; true when a whole request is ready (TakeRequest takes it). A bad
  // request is refused (the connection lingers) and gives false.
  bool Advance(Conn& c);
  std::string TakeRequest(Conn& c, bool& last);
  void Dispatch(Conn& c);
  // On a worker: runs `request` and then the connection's next ones while it holds it; returns
  // whether the connection stays open.
  bool Serve(Conn& c, std::string request, bool last);
  // On a worker, after an answer: waits briefly for the next whole request (kRun, in `request`).
  Next AwaitNext(Conn& c, std::string& request, bool& last);
  void TakeReturned();
  void Refuse(Conn& c, int status, const std::string& message);
  void Sweep(std::chrono::steady_clock::time_point now);
  void Close(int fd);
  void Watch(int fd, bool add);
  void Rearm(int fd);
  void WorkerMain();

  FrontOptions options_;
  RequestRunner runner_;
  FrontCounters counters_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop and workers handing connections back
  size_t max_connections_ = 0;

  // Front thread only.
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
  std::unordered_map<std::string, size_t> per_client_;
  size_t in_workers_ = 0;
  std::chrono::steady_clock::time_point accept_paused_until_{};

  FairQueue queue_;
  Mutex returned_mu_;
  std::vector<std::pair<int, bool>> returned_ GUARDED_BY(returned_mu_);  // (fd, keep) from workers
};

// Raises this process's soft open-file limit to its hard limit; returns the soft limit now.
size_t RaiseFileLimit();

}  // namespace abacus::net

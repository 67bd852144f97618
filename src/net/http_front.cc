#include "net/http_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/blocking_region.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_name.h"

namespace abacus::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;
constexpr int kReadsPerEvent = 4;  // then other connections get their turn
constexpr auto kSweepEvery = std::chrono::milliseconds(100);
// After the front refused a request it stops writing and reads (and drops) what the client still
// sends for this long, so that its answer is read instead of lost to a reset.
constexpr auto kLinger = std::chrono::seconds(2);
constexpr size_t kFdMargin = 128;  // descriptors kept for the store, logs and outgoing calls
// After answering, a worker keeps its connection this long for the client's next request when no
// other request waits, and runs it itself: a client that sends requests one after another skips
// the hand-back to the front, its epoll round and the queue (abacus_api_bench, issue 21).
constexpr auto kWorkerHold = std::chrono::milliseconds(1);

// Sends a short answer without waiting; what does not fit the socket's buffer is dropped.
void SendNow(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// The running bound: FrontOptions::max_running, or four per core (at least 4).
size_t RunningBound(const FrontOptions& options) {
  if (options.max_running > 0) return options.max_running;
  return std::max<size_t>(4, 4 * static_cast<size_t>(std::thread::hardware_concurrency()));
}

}  // namespace

struct HttpFront::Conn {
  enum class Phase { kIdle, kHead, kBody, kLinger };
  Conn(int fd_, ConnAddresses ends_, const FrameLimits& limits)
      : fd(fd_), client(ends_.remote_ip), ends(std::move(ends_)), head(limits), chunked(limits.max_body) {}
  int fd;
  std::string client;  // the remote address: the key of per-client limits and turns
  ConnAddresses ends;
  std::string in;    // received, not yet framed
  std::string body;  // the request's body so far (decoded when chunked)
  RequestHeadParser head;
  ChunkedDecoder chunked;
  Phase phase = Phase::kIdle;
  // Held by a worker: written by the front thread only. While true the front reads nothing else
  // of the connection (its descriptor is disarmed), and the worker owns every other field; the
  // hand-back under returned_mu_ orders the two.
  bool in_worker = false;
  size_t served = 0;  // requests handed to workers
  Clock::time_point deadline;
};

std::string RenderFrontMetrics(const FrontCounters& c) {
  std::string out =
      "# HELP abacus_http_front_connections Open HTTP connections.\n"
      "# TYPE abacus_http_front_connections gauge\n"
      "abacus_http_front_connections " + std::to_string(c.open.load()) + "\n"
      "# HELP abacus_http_front_accepted_total HTTP connections accepted.\n"
      "# TYPE abacus_http_front_accepted_total counter\n"
      "abacus_http_front_accepted_total " + std::to_string(c.accepted.load()) + "\n"
      "# HELP abacus_http_front_requests_total Complete requests handed to the workers.\n"
      "# TYPE abacus_http_front_requests_total counter\n"
      "abacus_http_front_requests_total " + std::to_string(c.requests.load()) + "\n"
      "# HELP abacus_http_front_requests_kept_total Requests a worker read itself on the connection it had just answered.\n"
      "# TYPE abacus_http_front_requests_kept_total counter\n"
      "abacus_http_front_requests_kept_total " + std::to_string(c.kept.load()) + "\n"
      "# HELP abacus_http_front_closed_total Connections the front closed or refused, by reason.\n"
      "# TYPE abacus_http_front_closed_total counter\n";
  auto line = [&](const char* reason, const std::atomic<uint64_t>& v) {
    out += std::string("abacus_http_front_closed_total{reason=\"") + reason + "\"} " + std::to_string(v.load()) + "\n";
  };
  line("connection_limit", c.refused_over_limit);
  line("head_timeout", c.cut_head_timeout);
  line("body_timeout", c.cut_body_timeout);
  line("idle", c.closed_idle);
  line("bad_request", c.refused_framing);
  return out;
}

size_t RaiseFileLimit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return lim.rlim_cur == RLIM_INFINITY ? size_t{1} << 20 : static_cast<size_t>(lim.rlim_cur);
}

HttpFront::HttpFront(FrontOptions options, RequestRunner runner)
    : options_(std::move(options)), runner_(std::move(runner)), queue_(RunningBound(options_)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

HttpFront::~HttpFront() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void HttpFront::Stop() {
  stop_.store(true);
  uint64_t one = 1;
  if (wake_fd_ >= 0) [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
}

bool HttpFront::Run(int listen_fd, const std::function<void()>& close_listener) {
  if (stop_.load() || wake_fd_ < 0) return false;
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return false;
  size_t files = RaiseFileLimit();
  max_connections_ = options_.max_connections > 0 ? options_.max_connections
                                                  : (files > 2 * kFdMargin ? files - kFdMargin : files / 2);
  ::fcntl(listen_fd, F_SETFL, ::fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd, &ev);
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);

  std::vector<std::thread> workers;
  for (size_t i = 0; i < std::max<size_t>(1, options_.threads); ++i) workers.emplace_back([this] { WorkerMain(); });
  running_.store(true);
  Loop(listen_fd);

  // Stopping: no new connections; idle and half-read ones close now, requests in flight finish.
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd, nullptr);
  if (close_listener) close_listener();
  std::vector<int> open;
  for (const auto& [fd, c] : conns_) {
    if (!c->in_worker) open.push_back(fd);
  }
  for (int fd : open) Close(fd);
  while (in_workers_ > 0) {
    epoll_event events[8];
    ::epoll_wait(epoll_fd_, events, 8, 100);
    TakeReturned();
  }
  queue_.Close();
  for (auto& t : workers) t.join();
  ::close(epoll_fd_);
  epoll_fd_ = -1;
  running_.store(false);
  return true;
}

void HttpFront::Loop(int listen_fd) {
  constexpr int kEvents = 256;
  epoll_event events[kEvents];
  auto last_sweep = Clock::now();
  while (!stop_.load()) {
    int n = ::epoll_wait(epoll_fd_, events, kEvents, static_cast<int>(kSweepEvery.count()));
    if (n < 0 && errno != EINTR) {
      ABACUS_LOG_ERROR("http front: epoll_wait: {}", std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == listen_fd) {
        AcceptAll(listen_fd);
      } else if (fd == wake_fd_) {
        uint64_t count;
        [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof(count));
      } else if (auto it = conns_.find(fd); it != conns_.end() && !it->second->in_worker) {
        OnReadable(*it->second);
        Rearm(fd);
      }
    }
    TakeReturned();
    auto now = Clock::now();
    if (now - last_sweep >= kSweepEvery) {
      Sweep(now);
      last_sweep = now;
      // Accepting paused at the descriptor limit resumes here.
      if (accept_paused_until_ != Clock::time_point{} && now >= accept_paused_until_) {
        accept_paused_until_ = {};
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = listen_fd;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd, &ev);
      }
    }
  }
}

void HttpFront::AcceptAll(int listen_fd) {
  for (int i = 0; i < 256; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: stop listening for a moment instead of spinning on the backlog.
        ABACUS_LOG_WARN("http front: accept: {} ({} connections open)", std::strerror(errno), conns_.size());
        epoll_event ev{};
        ev.data.fd = listen_fd;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd, &ev);
        accept_paused_until_ = Clock::now() + kSweepEvery;
      }
      return;
    }
    std::string client;
    int client_port = 0;
    DescribeAddress(addr, client, client_port);
    size_t& mine = per_client_[client];
    if (conns_.size() >= max_connections_ ||
        (options_.max_connections_per_client > 0 && mine >= options_.max_connections_per_client)) {
      counters_.refused_over_limit.fetch_add(1);
      bool total = conns_.size() >= max_connections_;
      SendNow(fd, ErrorAnswer(503, total ? "too many connections to this server (" + std::to_string(max_connections_) + ")"
                                         : "too many connections from " + client + " (limit " +
                                               std::to_string(options_.max_connections_per_client) + ")"));
      if (mine == 0) per_client_.erase(client);
      ::close(fd);
      continue;
    }
    ++mine;
    counters_.accepted.fetch_add(1);
    counters_.open.fetch_add(1);
    if (options_.tcp_nodelay) {
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    }
    auto c = std::make_unique<Conn>(fd, ConnAddressesOf(fd, addr), options_.limits);
    c->deadline = Clock::now() + options_.idle_timeout;
    conns_.emplace(fd, std::move(c));
    Watch(fd, true);
  }
}

void HttpFront::Watch(int fd, bool add) {
  // One-shot: after each event the descriptor is disarmed until Watch re-arms it, so a
  // connection a worker holds reports nothing (not even a hang-up) to the front meanwhile, and
  // handing it to a worker costs no system call.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.fd = fd;
  ::epoll_ctl(epoll_fd_, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
}

void HttpFront::Rearm(int fd) {
  auto it = conns_.find(fd);
  if (it != conns_.end() && !it->second->in_worker) Watch(fd, false);
}

// Reads what the socket holds (a few chunks at most) onto c.in; false when the peer closed or the
// connection broke. A lingering connection's bytes are dropped.
bool HttpFront::ReadSome(Conn& c) {
  bool lingering = c.phase == Conn::Phase::kLinger;
  // Received onto the stack and appended: growing c.in by a whole chunk first would zero 64 KiB
  // for every request of a few hundred bytes.
  char chunk[kReadChunk];
  for (int i = 0; i < kReadsPerEvent; ++i) {
    ssize_t n = ::recv(c.fd, chunk, kReadChunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return false;
    if (!lingering) c.in.append(chunk, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < kReadChunk) break;
  }
  return true;
}

void HttpFront::OnReadable(Conn& c) {
  if (!ReadSome(c)) {
    // The peer closed (or the connection broke): a half-sent request cannot be answered.
    Close(c.fd);
    return;
  }
  if (Advance(c)) Dispatch(c);
}

bool HttpFront::Advance(Conn& c) {
  if (c.phase == Conn::Phase::kLinger) return false;
  if (c.phase == Conn::Phase::kIdle) {
    if (c.in.empty()) return false;
    c.phase = Conn::Phase::kHead;
    c.deadline = Clock::now() + options_.header_timeout;
  }
  if (c.phase == Conn::Phase::kHead) {
    FrameState st = c.head.Parse(c.in);
    if (st == FrameState::kNeedMore) return false;
    if (st == FrameState::kError) {
      Refuse(c, c.head.error().status, c.head.error().message);
      return false;
    }
    c.in.erase(0, c.head.head().head_bytes);
    c.body.clear();
    c.chunked = ChunkedDecoder(options_.limits.max_body);
    if (c.head.head().body == RequestHead::Body::kNone) return true;
    c.phase = Conn::Phase::kBody;
    c.deadline = Clock::now() + options_.body_timeout;
    if (c.head.head().expect_continue && c.in.empty()) SendNow(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
  }
  if (c.phase != Conn::Phase::kBody) return false;
  const RequestHead& head = c.head.head();
  if (head.body == RequestHead::Body::kLength) {
    size_t want = static_cast<size_t>(head.content_length) - c.body.size();
    size_t take = std::min(want, c.in.size());
    if (c.body.empty() && take == c.in.size()) {
      c.body.swap(c.in);  // the common case: the whole buffer is body, no copy
    } else {
      c.body.append(c.in, 0, take);
      c.in.erase(0, take);
    }
    return c.body.size() == head.content_length;
  }
  size_t consumed = 0;
  FrameState st = c.chunked.Feed(c.in, consumed, c.body);
  c.in.erase(0, consumed);
  if (st == FrameState::kError) {
    Refuse(c, c.chunked.error().status, c.chunked.error().message);
    return false;
  }
  return st == FrameState::kDone;
}

std::string HttpFront::TakeRequest(Conn& c, bool& last) {
  std::string request = ForwardedRequest(c.head.head(), c.body);
  std::string().swap(c.body);
  c.head.Reset();
  c.phase = Conn::Phase::kIdle;  // the next request's bytes (if any) are framed from here
  counters_.requests.fetch_add(1);
  const size_t most = options_.max_requests_per_connection ? options_.max_requests_per_connection() : 0;
  last = ++c.served >= most && most > 0;
  return request;
}

void HttpFront::Dispatch(Conn& c) {
  bool last = false;
  std::string request = TakeRequest(c, last);
  c.in_worker = true;  // its descriptor stays disarmed (one-shot) until it returns
  ++in_workers_;
  Conn* held = &c;  // stays put: the front erases no connection a worker holds
  queue_.Push(c.client, [this, held, last, request = std::move(request)]() mutable {
    bool keep = Serve(*held, std::move(request), last);
    {
      MutexLock lock(returned_mu_);
      returned_.emplace_back(held->fd, keep);
    }
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
  });
}

bool HttpFront::Serve(Conn& c, std::string request, bool last) {
  for (;;) {
    bool keep = false;
    try {
      keep = runner_(c.fd, c.ends, request, last || stop_.load()) && !last;
    } catch (const std::exception& e) {
      ABACUS_LOG_ERROR("http front: request failed: {}", e.what());
    }
    if (!keep) return false;
    switch (AwaitNext(c, request, last)) {
      case Next::kRun: continue;
      case Next::kHandBack: return true;
      case Next::kClosed: return false;
    }
  }
}

HttpFront::Next HttpFront::AwaitNext(Conn& c, std::string& request, bool& last) {
  const auto until = Clock::now() + kWorkerHold;
  for (;;) {
    if (Advance(c)) {
      request = TakeRequest(c, last);
      counters_.kept.fetch_add(1);
      return Next::kRun;
    }
    // Others waiting get the worker; a broken request lingers on the front.
    if (c.phase == Conn::Phase::kLinger || stop_.load() || queue_.Waiting()) return Next::kHandBack;
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(until - Clock::now());
    if (left.count() <= 0) return Next::kHandBack;
    pollfd p{c.fd, POLLIN | POLLRDHUP, 0};
    timespec ts{0, static_cast<long>(left.count()) * 1000};
    int r = ::ppoll(&p, 1, &ts, nullptr);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Next::kHandBack;
    if (!ReadSome(c)) return Next::kClosed;
  }
}

void HttpFront::TakeReturned() {
  std::vector<std::pair<int, bool>> back;
  {
    MutexLock lock(returned_mu_);
    back.swap(returned_);
  }
  for (auto [fd, keep] : back) {
    --in_workers_;
    auto it = conns_.find(fd);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    c.in_worker = false;
    if (!keep || stop_.load()) {
      Close(fd);
      continue;
    }
    if (c.phase == Conn::Phase::kIdle && c.in.empty()) {
      c.deadline = Clock::now() + options_.idle_timeout;
    } else if (Advance(c)) {
      // Pipelined: the next request arrived whole with the last one.
      Dispatch(c);
      continue;
    }
    Rearm(fd);
  }
}

void HttpFront::Refuse(Conn& c, int status, const std::string& message) {
  counters_.refused_framing.fetch_add(1);
  SendNow(c.fd, ErrorAnswer(status, message));
  // Nothing after a broken request is parsed: the connection only drains until the peer closes.
  ::shutdown(c.fd, SHUT_WR);
  std::string().swap(c.in);
  std::string().swap(c.body);
  c.head.Reset();
  c.phase = Conn::Phase::kLinger;
  c.deadline = Clock::now() + kLinger;
}

void HttpFront::Sweep(Clock::time_point now) {
  std::vector<int> due;
  for (const auto& [fd, c] : conns_) {
    if (!c->in_worker && now >= c->deadline) due.push_back(fd);
  }
  for (int fd : due) {
    Conn& c = *conns_.at(fd);
    switch (c.phase) {
      case Conn::Phase::kIdle:
        counters_.closed_idle.fetch_add(1);
        Close(fd);
        break;
      case Conn::Phase::kHead:
        counters_.cut_head_timeout.fetch_add(1);
        Refuse(c, 408, "request head not complete within " + std::to_string(options_.header_timeout.count()) + " ms");
        break;
      case Conn::Phase::kBody:
        counters_.cut_body_timeout.fetch_add(1);
        Refuse(c, 408, "request body not complete within " + std::to_string(options_.body_timeout.count()) + " ms");
        break;
      default: Close(fd); break;
    }
  }
}

void HttpFront::Close(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  auto pc = per_client_.find(it->second->client);
  if (pc != per_client_.end() && --pc->second == 0) per_client_.erase(pc);
  counters_.open.fetch_sub(1);
  conns_.erase(it);
  ::close(fd);  // leaves the epoll set with it (never dup'ed)
}

void HttpFront::WorkerMain() {
  NameThisThread("abacus-http");
  BlockingRegion::Join(&queue_);
  std::function<void()> task;
  for (bool ended = false; queue_.Next(task, ended); ended = true) {
    task();
    task = nullptr;
  }
  BlockingRegion::Join(nullptr);
}

}  // namespace abacus::net

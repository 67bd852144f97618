#include "wire_load.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/wire_client.h"

namespace abacus::bench {

WireLoad::WireLoad(std::vector<int> fds, RequestFn next_request, int expected)
    : next_request_(std::move(next_request)), expected_(expected) {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  conns_.resize(fds.size());
  for (size_t i = 0; i < fds.size(); ++i) {
    conns_[i].fd = fds[i];
    if (fds[i] < 0) continue;
    ::fcntl(fds[i], F_SETFL, ::fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = i;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fds[i], &ev);
  }
}

WireLoad::~WireLoad() {
  for (Conn& c : conns_) {
    if (c.fd >= 0) ::close(c.fd);
  }
  if (epoll_ >= 0) ::close(epoll_);
}

void WireLoad::Fail(Conn& c, WireLoadResult& r, const std::string& why) {
  if (c.busy) {
    ++r.errors;
    if (r.first_errors.size() < 3) r.first_errors.push_back(why);
  }
  c.busy = false;
  if (c.fd >= 0) {
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
  }
  c.fd = -1;
}

void WireLoad::Send(int index, Conn& c, WireLoadResult& r) {
  if (!c.busy) {
    c.out = next_request_(index, c.n++);
    c.sent = 0;
    c.busy = true;
    c.start = std::chrono::steady_clock::now();
  }
  while (c.sent < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The socket's buffer is full: go on when it drains.
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
      ev.data.u64 = static_cast<uint64_t>(index);
      ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev);
      return;
    }
    if (n <= 0) {
      Fail(c, r, std::string("write: ") + std::strerror(errno));
      return;
    }
    c.sent += static_cast<size_t>(n);
  }
}

WireLoadResult WireLoad::Run(std::chrono::duration<double> duration) {
  WireLoadResult r;
  if (epoll_ < 0) {
    r.first_errors.push_back(std::string("epoll_create1: ") + std::strerror(errno));
    return r;
  }
  using SteadyClock = std::chrono::steady_clock;
  const auto deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(duration);
  const auto give_up = deadline + std::chrono::seconds(30);
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (conns_[i].fd >= 0) Send(static_cast<int>(i), conns_[i], r);
  }
  std::vector<epoll_event> events(conns_.size() + 1);
  char chunk[16384];
  while (true) {
    const auto now = SteadyClock::now();
    size_t in_flight = 0;
    for (const Conn& c : conns_) in_flight += c.busy ? 1 : 0;
    if (in_flight == 0 || now >= give_up) break;
    int ready = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 100);
    if (ready < 0 && errno == EINTR) continue;
    for (int e = 0; e < ready; ++e) {
      const int index = static_cast<int>(events[e].data.u64);
      Conn& c = conns_[static_cast<size_t>(index)];
      if (c.fd < 0) continue;
      if ((events[e].events & EPOLLOUT) != 0 && c.busy && c.sent < c.out.size()) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.u64 = static_cast<uint64_t>(index);
        ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev);
        Send(index, c, r);
        if (c.fd < 0) continue;
      }
      // Read what arrived; an answer may come in several pieces, or with the close.
      bool closed = false;
      while (true) {
        ssize_t n = ::recv(c.fd, chunk, sizeof(chunk), 0);
        if (n > 0) {
          c.in.append(chunk, static_cast<size_t>(n));
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
        break;
      }
      cli::WireAnswerHead h = cli::ParseWireAnswerHead(c.in);
      if (!h.error.empty()) {
        Fail(c, r, h.error);
        continue;
      }
      if (h.complete && c.in.size() >= h.total && c.busy) {
        const auto end = SteadyClock::now();
        if (h.status == expected_) {
          r.latencies_ms.push_back(std::chrono::duration<double, std::milli>(end - c.start).count());
        } else {
          ++r.errors;
          if (r.first_errors.size() < 3) {
            r.first_errors.push_back("HTTP " + std::to_string(h.status) + ": " +
                                     c.in.substr(h.head_size, std::min<size_t>(h.total - h.head_size, 300)));
          }
        }
        c.busy = false;
        c.in.erase(0, h.total);
        if (h.close) {
          Fail(c, r, "the server closed the connection");
          continue;
        }
        if (end < deadline) Send(index, c, r);
        continue;
      }
      if (closed) Fail(c, r, "the server closed the connection before answering");
    }
  }
  for (Conn& c : conns_) {
    if (c.busy) Fail(c, r, "no answer within 30 s after the run");
  }
  return r;
}

}  // namespace abacus::bench

#include "agent/probe/probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "agent/command.h"

namespace abacus::agent {

namespace {

std::string Seconds(Duration d) { return FormatDuration(d); }

// strerror with a lower-case first letter, to read inside a sentence: "connection refused".
std::string Errno(int err) {
  std::string text = std::strerror(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// Connects to host:port within `timeout`; returns "" when it connected, else why not
// ("connection refused", "timed out after 1s").
std::string Connect(const std::string& host, int port, Duration timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addrs = nullptr;
  int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addrs);
  if (gai != 0) return ::gai_strerror(gai);
  std::string last = "no address";
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool ok = false;
  for (addrinfo* a = addrs; a != nullptr && !ok; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = Errno(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc == 0) {
      ok = true;
    } else if (errno == EINPROGRESS) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd pfd{fd, POLLOUT, 0};
      int pr = ::poll(&pfd, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
      if (pr == 0) {
        last = "timed out after " + Seconds(timeout);
      } else {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) ok = true;
        else last = Errno(err);
      }
    } else {
      last = Errno(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(addrs);
  return ok ? "" : last;
}

ProbeResult Tcp(const ProbeSpec& s) {
  std::string why = Connect(s.host, s.port, s.timeout);
  if (why.empty()) return {true, "connected"};
  return {false, s.Describe() + ": " + why};
}

ProbeResult Http(const ProbeSpec& s) {
  httplib::Client client(s.host, s.port);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(s.timeout).count();
  client.set_connection_timeout(static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000));
  client.set_read_timeout(static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000));
  client.set_write_timeout(static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000));
  auto res = client.Get(s.path.c_str());
  std::string what = "GET " + s.Describe() + ": ";
  if (!res) {
    auto err = res.error();
    std::string why;
    if (err == httplib::Error::Read) {
      why = "no answer within " + Seconds(s.timeout);
    } else if (err == httplib::Error::ConnectionTimeout) {
      why = "no connection within " + Seconds(s.timeout);
    } else if (err == httplib::Error::Connection) {
      // httplib does not say why; one more connect does ("connection refused").
      why = Connect(s.host, s.port, s.timeout);
      if (why.empty()) why = httplib::to_string(err);
    } else {
      why = httplib::to_string(err);
    }
    return {false, what + why};
  }
  bool ok = res->status >= 200 && res->status < 400;
  if (ok) return {true, "HTTP " + std::to_string(res->status)};
  return {false, what + "HTTP " + std::to_string(res->status)};
}

ProbeResult Exec(const ProbeSpec& s) {
  auto out = RunCommand(s.command, std::chrono::duration_cast<std::chrono::milliseconds>(s.timeout), true, s.user);
  if (!out.ok()) return {false, s.Describe() + ": " + out.status().message()};
  if (out->timed_out) return {false, s.Describe() + ": timed out after " + Seconds(s.timeout)};
  std::string tail = out->out.size() > 200 ? out->out.substr(out->out.size() - 200) : out->out;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  if (out->signal != 0) return {false, s.Describe() + ": killed by signal " + std::to_string(out->signal)};
  if (out->exit_code != 0) {
    return {false, s.Describe() + ": exited " + std::to_string(out->exit_code) + (tail.empty() ? "" : ": " + tail)};
  }
  return {true, "exited 0"};
}

}  // namespace

Status ProbeSpec::Validate() const {
  if ((kind == ProbeKind::kHttp || kind == ProbeKind::kTcp) && (port < 1 || port > 65535)) {
    return InvalidArgument("probe port " + std::to_string(port) + " outside 1..65535");
  }
  if (kind == ProbeKind::kHttp && (path.empty() || path.front() != '/')) return InvalidArgument("probe path must start with '/'");
  if (kind == ProbeKind::kExec && command.empty()) return InvalidArgument("exec probe without a command");
  if (timeout <= Duration(0)) return InvalidArgument("probe timeout must be positive");
  if (period <= Duration(0)) return InvalidArgument("probe period must be positive");
  if (initial_delay < Duration(0)) return InvalidArgument("probe initial delay must not be negative");
  if (success_threshold < 1 || failure_threshold < 1) return InvalidArgument("probe thresholds must be >= 1");
  return Status::OK();
}

std::string ProbeSpec::Describe() const {
  switch (kind) {
    case ProbeKind::kHttp: return "http://" + host + ":" + std::to_string(port) + path;
    case ProbeKind::kTcp: return "tcp " + host + ":" + std::to_string(port);
    case ProbeKind::kExec: return "exec " + JoinArgv(command);
  }
  return "probe";
}

ProbeResult RunProbe(const ProbeSpec& spec) {
  if (Status s = spec.Validate(); !s.ok()) return {false, s.message()};
  switch (spec.kind) {
    case ProbeKind::kHttp: return Http(spec);
    case ProbeKind::kTcp: return Tcp(spec);
    case ProbeKind::kExec: return Exec(spec);
  }
  return {false, "unknown probe kind"};
}

std::string_view ProbeStateName(ProbeState state) {
  switch (state) {
    case ProbeState::kUnknown: return "Unknown";
    case ProbeState::kHealthy: return "Healthy";
    case ProbeState::kUnhealthy: return "Unhealthy";
  }
  return "Unknown";
}

ProbeTracker::ProbeTracker(ProbeSpec spec, Time started_at)
    : spec_(std::move(spec)), next_due_(started_at + spec_.initial_delay) {}

bool ProbeTracker::Record(const ProbeResult& result, Time now) {
  ProbeState before = state_;
  last_message_ = result.message;
  if (result.ok) {
    ++successes_;
    failures_ = 0;
    if (successes_ >= spec_.success_threshold) state_ = ProbeState::kHealthy;
  } else {
    ++failures_;
    successes_ = 0;
    if (failures_ >= spec_.failure_threshold) state_ = ProbeState::kUnhealthy;
  }
  next_due_ = now + spec_.period;
  return state_ != before;
}

bool Prober::Tick() {
  Time now = clock_.Now();
  if (!tracker_.Due(now)) return false;
  ProbeResult result = attempt_(tracker_.spec());
  return tracker_.Record(result, clock_.Now());
}

}  // namespace abacus::agent

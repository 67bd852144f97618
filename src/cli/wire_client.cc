#include "cli/wire_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <strings.h>

namespace abacus::cli {
namespace {

// The value of header `name` (case-insensitive) in `head`, or empty.
std::string_view HeaderValue(std::string_view head, std::string_view name) {
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    std::string_view line = head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    size_t colon = line.find(':');
    if (colon == name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      return v;
    }
    pos = end;
  }
  return {};
}

}  // namespace

WireClient::~WireClient() { Close(); }

void WireClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buf_.clear();
}

std::string WireClient::Request(const std::string& method, const std::string& path, const std::string& host,
                                const std::string& token, const std::string& content_type, const std::string& body,
                                const std::vector<std::pair<std::string, std::string>>& extra) {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!token.empty()) r += "Authorization: Bearer " + token + "\r\n";
  for (const auto& [name, value] : extra) r += name + ": " + value + "\r\n";
  if (!content_type.empty()) r += "Content-Type: " + content_type + "\r\n";
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  r += body;
  return r;
}

namespace {

// Connects `fd` to `addr`, waiting at most `seconds` (0: as long as the system does). Returns 0,
// or the errno (ETIMEDOUT when the time ran out).
int ConnectWithin(int fd, const sockaddr* addr, socklen_t len, int seconds) {
  if (seconds <= 0) return ::connect(fd, addr, len) == 0 ? 0 : errno;
  const int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, addr, len) == 0 ? 0 : errno;
  if (rc == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int n = 0;
    while ((n = ::poll(&p, 1, seconds * 1000)) < 0 && errno == EINTR) {
    }
    if (n == 0) {
      rc = ETIMEDOUT;
    } else {
      socklen_t size = sizeof rc;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &size) != 0) rc = errno;
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return rc;
}

}  // namespace

bool WireClient::Connect(WireAnswer& a) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found); rc != 0) {
    a.error = "cannot resolve " + host_ + ": " + gai_strerror(rc);
    a.failure = TransportFailure::kConnect;
    return false;
  }
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    const int rc = ConnectWithin(fd, ai->ai_addr, ai->ai_addrlen, connect_seconds_);
    if (rc == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (io_seconds_ > 0) {
        timeval tv{io_seconds_, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      }
      fd_ = fd;
      break;
    }
    a.error = std::string("cannot connect to ") + host_ + ":" + std::to_string(port_) + ": " + std::strerror(rc);
    a.failure = rc == ETIMEDOUT ? TransportFailure::kConnectTimeout : TransportFailure::kConnect;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return fd_ >= 0;
}

bool WireClient::Fill(size_t need, std::string& error) {
  char chunk[16384];
  while (buf_.size() < need) {
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n == 0 ? "the server closed the connection" : std::string("read: ") + std::strerror(errno);
      return false;
    }
    buf_.append(chunk, static_cast<size_t>(n));
  }
  return true;
}

WireAnswerHead ParseWireAnswerHead(std::string_view buf) {
  WireAnswerHead h;
  size_t end = buf.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (buf.size() > (64 << 10)) h.error = "answer head larger than 64 KiB";
    return h;
  }
  std::string_view head = buf.substr(0, end);
  if (head.size() < 12 || !head.starts_with("HTTP/1.") ||
      std::from_chars(head.data() + 9, head.data() + 12, h.status).ec != std::errc()) {
    h.error = "not an HTTP answer: " + std::string(head.substr(0, 40));
    return h;
  }
  if (!HeaderValue(head, "Transfer-Encoding").empty()) {
    h.error = "chunked answers are not supported by the load generator";
    return h;
  }
  size_t length = 0;
  std::string_view cl = HeaderValue(head, "Content-Length");
  if (!cl.empty() && std::from_chars(cl.data(), cl.data() + cl.size(), length).ec != std::errc()) {
    h.error = "bad Content-Length '" + std::string(cl) + "'";
    return h;
  }
  h.close = strncasecmp(std::string(HeaderValue(head, "Connection")).c_str(), "close", 5) == 0;
  h.head_size = end + 4;
  h.total = h.head_size + length;
  h.complete = true;
  return h;
}

int WireClient::ReleaseFd() {
  int fd = fd_;
  fd_ = -1;
  buf_.clear();
  return fd;
}

WireAnswer WireClient::RoundTrip(const std::string& request) {
  WireAnswer a;
  if (fd_ >= 0 && buf_.empty()) {
    // An idle kept-alive connection that is readable was closed by the server (or sent what no
    // request asked for): start afresh rather than lose this request on it.
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) Close();
  }
  if (fd_ < 0 && !Connect(a)) return a;
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      a.error = std::string("write: ") + std::strerror(errno);
      a.failure = TransportFailure::kWrite;
      Close();
      return a;
    }
    sent += static_cast<size_t>(n);
  }
  WireAnswerHead h;
  while (!(h = ParseWireAnswerHead(buf_)).complete) {
    if (!h.error.empty() || !Fill(buf_.size() + 1, a.error)) {
      if (a.error.empty()) a.error = h.error;
      a.failure = TransportFailure::kRead;
      Close();
      return a;
    }
  }
  if (!Fill(h.total, a.error)) {
    a.failure = TransportFailure::kRead;
    Close();
    return a;
  }
  a.status = h.status;
  a.body = buf_.substr(h.head_size, h.total - h.head_size);
  buf_.erase(0, h.total);
  if (h.close) Close();
  return a;
}

}  // namespace abacus::cli

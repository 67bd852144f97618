#include "net/socket_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/blocking_region.h"

namespace abacus::net {
namespace {

// Waits up to `timeout` for `events` on `fd`: 1 ready, 0 timed out, -1 error.
int PollFor(int fd, short events, std::chrono::milliseconds timeout) {
  std::optional<BlockingRegion> waiting;  // on a slow client
  if (timeout.count() > 0) waiting.emplace();
  pollfd p{fd, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(timeout.count(), INT32_MAX)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r;
    // A hang-up or error still counts as ready: the next recv or send reports it.
    return 1;
  }
}

std::chrono::milliseconds Ceil(std::chrono::microseconds us) {
  return std::chrono::ceil<std::chrono::milliseconds>(us);
}

}  // namespace

SocketStream::SocketStream(int fd, StreamTimeouts timeouts) : fd_(fd), timeouts_(timeouts) {}

bool SocketStream::is_readable() const { return HasBuffered() || WaitReadable(Ceil(timeouts_.read)) > 0; }

bool SocketStream::is_writable() const { return !failed_; }

int SocketStream::WaitReadable(std::chrono::milliseconds timeout) const {
  if (HasBuffered()) return 1;
  return PollFor(fd_, POLLIN, timeout);
}

ssize_t SocketStream::RecvSome(char* dst, size_t size) {
  bool waited = false;
  for (;;) {
    ssize_t n = ::recv(fd_, dst, size, MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || waited) return -1;
    if (PollFor(fd_, POLLIN, Ceil(timeouts_.read)) <= 0) return -1;
    waited = true;  // readable now; a second EAGAIN means something is wrong
  }
}

ssize_t SocketStream::read(char* ptr, size_t size) {
  if (!held_.empty() && !Flush()) return -1;
  if (size == 0) return 0;
  if (!HasBuffered()) {
    // A large read skips the buffer; a small one (httplib reads lines a byte at a time) fills it.
    if (size >= kReadBuffer) return RecvSome(ptr, size);
    ssize_t n = RecvSome(read_buf_, kReadBuffer);
    if (n <= 0) return n;
    read_pos_ = 0;
    read_end_ = static_cast<size_t>(n);
  }
  size_t n = std::min(size, read_end_ - read_pos_);
  std::memcpy(ptr, read_buf_ + read_pos_, n);
  read_pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t SocketStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  if (held_.size() + size <= kHoldLimit) {
    held_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  if (!Flush() || !SendAll(ptr, size)) return -1;
  return static_cast<ssize_t>(size);
}

bool SocketStream::Flush() {
  if (held_.empty()) return !failed_;
  bool ok = SendAll(held_.data(), held_.size());
  held_.clear();
  return ok;
}

bool SocketStream::SendAll(const char* data, size_t size) {
  if (failed_) return false;
  while (size > 0) {
    ssize_t n = ::send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && PollFor(fd_, POLLOUT, Ceil(timeouts_.write)) > 0) {
      continue;
    }
    failed_ = true;
    return false;
  }
  return true;
}

void SocketStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  if (!addresses_read_) {
    sockaddr_storage remote{}, local{};
    socklen_t len = sizeof(remote);
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&remote), &len) == 0) DescribeAddress(remote, remote_ip_, remote_port_);
    len = sizeof(local);
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) == 0) DescribeAddress(local, local_ip_, local_port_);
    addresses_read_ = true;
  }
  ip = remote_ip_;
  port = remote_port_;
}

void SocketStream::get_local_ip_and_port(std::string& ip, int& port) const {
  std::string unused;
  int unused_port = 0;
  if (!addresses_read_) get_remote_ip_and_port(unused, unused_port);
  ip = local_ip_;
  port = local_port_;
}

}  // namespace abacus::net

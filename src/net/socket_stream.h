// SocketStream: one TCP connection's bytes for cpp-httplib's request and response code, in
// place of httplib's own SocketStream. Two differences, both for latency under load:
//   - writes are held until the connection next reads, or until Flush, so an HTTP message's
//     head and body leave in one send (httplib writes them separately: two segments, and the
//     peer wakes twice);
//   - reads try the socket first and poll only when it has nothing (httplib polls before every
//     read and every write).
// Peer and local addresses are read once per connection, not once per request.
//
//   SocketStream strm(fd, timeouts);
//   strm.write(head); strm.write(body);   // held
//   strm.Flush();                         // one send
//
// Not thread-safe: one connection, one thread at a time (as httplib uses a stream).
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

#include "net/conn_addresses.h"

namespace abacus::net {

struct StreamTimeouts {
  std::chrono::microseconds read{std::chrono::seconds(5)};   // longest wait for the peer's bytes
  std::chrono::microseconds write{std::chrono::seconds(5)};  // longest wait for room to send
};

class SocketStream final : public httplib::Stream {
 public:
  // `fd` stays owned by the caller.
  SocketStream(int fd, StreamTimeouts timeouts);

  // True when bytes are buffered or arrive within the read timeout.
  bool is_readable() const override;
  // True until a send has failed.
  bool is_writable() const override;
  // Sends what is held, then returns up to `size` bytes: 0 when the peer closed, -1 on an
  // error or when nothing came within the read timeout.
  ssize_t read(char* ptr, size_t size) override;
  // Holds `size` bytes for the next Flush (sending at once what would not fit the hold
  // buffer); returns `size`, or -1 when a send failed.
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  // Sends everything held. Returns false when the peer is gone or the write timeout passed.
  bool Flush();
  // True when bytes of the next message are already buffered.
  bool HasBuffered() const { return read_pos_ < read_end_; }
  // Waits up to `timeout` for bytes to read: 1 readable (or buffered), 0 timed out, -1 error.
  int WaitReadable(std::chrono::milliseconds timeout) const;

 private:
  // Receives into `dst` once, waiting up to the read timeout; as read() returns.
  ssize_t RecvSome(char* dst, size_t size);
  bool SendAll(const char* data, size_t size);

  static constexpr size_t kReadBuffer = 16 * 1024;
  static constexpr size_t kHoldLimit = 64 * 1024;  // larger writes go straight out

  int fd_;
  StreamTimeouts timeouts_;
  bool failed_ = false;
  std::string held_;
  char read_buf_[kReadBuffer];
  size_t read_pos_ = 0, read_end_ = 0;
  mutable bool addresses_read_ = false;
  mutable std::string remote_ip_, local_ip_;
  mutable int remote_port_ = 0, local_port_ = 0;
};

}  // namespace abacus::net

// ConnAddresses: both ends of an accepted TCP connection, read once when it is accepted, so that
// each request on it answers "who is calling" without a system call.
#pragma once

#include <sys/socket.h>

#include <string>

namespace abacus::net {

// A connection's two ends, numeric ("127.0.0.1", port).
struct ConnAddresses {
  std::string remote_ip;
  int remote_port = 0;
  std::string local_ip;
  int local_port = 0;
};

// Returns the numeric address and port of `addr` (IPv4 or IPv6; else empty and 0).
void DescribeAddress(const sockaddr_storage& addr, std::string& ip, int& port);

// Returns both ends of connected socket `fd`: `remote` as accept() gave it, the local end asked
// of the kernel (one getsockname).
ConnAddresses ConnAddressesOf(int fd, const sockaddr_storage& remote);

}  // namespace abacus::net

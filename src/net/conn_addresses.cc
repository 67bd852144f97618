#include "net/conn_addresses.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace abacus::net {

void DescribeAddress(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {0};
  port = 0;
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text));
    port = ntohs(a.sin6_port);
  }
  ip = text;
}

ConnAddresses ConnAddressesOf(int fd, const sockaddr_storage& remote) {
  ConnAddresses out;
  DescribeAddress(remote, out.remote_ip, out.remote_port);
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
    DescribeAddress(local, out.local_ip, out.local_port);
  }
  return out;
}

}  // namespace abacus::net

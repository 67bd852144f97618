#include "agent/loop/port_pool.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>
#include <utility>

namespace abacus::agent {
namespace {

TEST(PortRangeTest, ParsesAndRejects) {
  auto r = ParsePortRange("20000-29999");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first, 20000);
  EXPECT_EQ(r->last, 29999);
  for (const char* bad : {"", "20000", "2000x-3000", "30000-20000", "80-90", "20000-70000", "-1-5"}) {
    auto b = ParsePortRange(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("FIRST-LAST"), std::string::npos) << b.status().message();
  }
}

TEST(PortPoolTest, EachTaskItsOwnPortAndTheSameOneAgain) {
  PortPool pool({30000, 30003}, [](int) { return true; }, 30000);
  std::set<int> seen;
  for (const char* t : {"a", "b", "c", "d"}) {
    auto p = pool.Acquire(t);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(seen.insert(*p).second) << "port " << *p << " handed out twice";
  }
  EXPECT_EQ(*pool.Acquire("b"), pool.PortOf("b"));  // the one it holds
  auto full = pool.Acquire("e");
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("--port-range"), std::string::npos);
  pool.Release("c");
  auto again = pool.Acquire("e");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(pool.held(), 4u);
}

TEST(PortPoolTest, SkipsPortsTheHostUsesAndDoesNotReuseAGivenBackPortAtOnce) {
  PortPool pool({30000, 30009}, [](int port) { return port != 30001; }, 30000);
  EXPECT_EQ(*pool.Acquire("a"), 30000);
  EXPECT_EQ(*pool.Acquire("b"), 30002);  // 30001 is in use on the host
  pool.Release("a");
  EXPECT_EQ(*pool.Acquire("c"), 30003);  // round the range, not 30000 again
}

// Two agents on one host (or two test processes) start at random places of the range, so that
// neither hands out the port the other just handed out to a replica that has not bound it yet
// (a gateway test saw a restarted replica crash-loop on such a port while another test ran).
TEST(PortPoolTest, EachPoolStartsAtItsOwnPlaceOfTheRange) {
  std::set<int> firsts;
  for (int i = 0; i < 5; ++i) {
    PortPool pool({20000, 29999}, [](int) { return true; });
    auto p = pool.Acquire("t");
    ASSERT_TRUE(p.ok());
    EXPECT_GE(*p, 20000);
    EXPECT_LE(*p, 29999);
    firsts.insert(*p);
  }
  EXPECT_GT(firsts.size(), 1u);  // all five alike: about 1 in 10^16
}

// The kernel's ephemeral port range (where bind to port 0 and every outgoing connection take
// their local port): /proc/sys/net/ipv4/ip_local_port_range, else Linux's default.
std::pair<int, int> EphemeralPorts() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int first = 32768, last = 60999;
  if (!(in >> first >> last)) return {32768, 60999};
  return {first, last};
}

// Binds a loopback socket to a free port outside the ephemeral range and the agents' default
// pool (20000-29999); returns the socket, or -1.
int BindOutsideEphemeral(int& port) {
  const auto [first, last] = EphemeralPorts();
  // Above the range when there is room, else below it and below the agents' pool.
  const int low = 65535 - last >= 200 ? last + 1 : 10000;
  const int high = 65535 - last >= 200 ? 65535 : std::min(first, 20000) - 1;
  std::mt19937 rng(std::random_device{}());
  for (int tries = 0; tries < 500; ++tries) {
    const int candidate = low + static_cast<int>(rng() % static_cast<unsigned>(high - low + 1));
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(candidate));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      port = candidate;
      return fd;
    }
    ::close(fd);
  }
  return -1;
}

// The port is one no other process takes by chance once it is closed: a port the kernel chose
// (port 0) lies in the ephemeral range, where another test's outgoing connection took it between
// the close and the check in a CI run, and the port read busy.
TEST(PortPoolTest, PortFreeSeesAListener) {
  int port = 0;
  const int fd = BindOutsideEphemeral(port);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  EXPECT_FALSE(PortFree(port));
  ::close(fd);
  EXPECT_TRUE(PortFree(port)) << "port " << port;
}

}  // namespace
}  // namespace abacus::agent

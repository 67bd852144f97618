#include "gateway/latency_log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace abacus::gateway {
namespace {

TEST(LatencyLogTest, ParsesTheGatewaysLinesBehindTheSyslogHeader) {
  auto r = ParseLatencyLine("<134>Dec  5 14:00:00 haproxy[123]: abacus-latency svc_chat t-w-1.0.0.1.0 37\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->backend, "svc_chat");
  EXPECT_EQ(r->server, "t-w-1.0.0.1.0");
  EXPECT_EQ(r->ms, 37);
  // Other lines, a request no server answered, an unknown or malformed time: nothing.
  EXPECT_FALSE(ParseLatencyLine("<133>Dec  5 14:00:00 haproxy[123]: Server svc_chat/t-w is UP").has_value());
  EXPECT_FALSE(ParseLatencyLine("haproxy[1]: abacus-latency svc_chat <NOSRV> 0").has_value());
  EXPECT_FALSE(ParseLatencyLine("haproxy[1]: abacus-latency svc_chat s1 -1").has_value());
  EXPECT_FALSE(ParseLatencyLine("haproxy[1]: abacus-latency svc_chat s1 12x").has_value());
  EXPECT_FALSE(ParseLatencyLine("haproxy[1]: abacus-latency svc_chat").has_value());
  EXPECT_FALSE(ParseLatencyLine("haproxy[1]: abacus-latencyx svc_chat s1 3").has_value());
}

TEST(LatencyLogTest, PercentileIsTheNearestRank) {
  EXPECT_EQ(Percentile({}, 0.99), 0);
  EXPECT_EQ(Percentile({{5, 1}}, 0.99), 5);
  // 100 requests: 1..100 ms once each → p99 is 99, p50 is 50, p100 is 100.
  LatencyCounts c;
  for (int i = 1; i <= 100; ++i) c[i] = 1;
  EXPECT_EQ(Percentile(c, 0.99), 99);
  EXPECT_EQ(Percentile(c, 0.5), 50);
  EXPECT_EQ(Percentile(c, 1.0), 100);
  // An average hides a slow tail that the percentile shows: 95 at 1 ms, 5 at 400 ms.
  EXPECT_EQ(Percentile({{1, 95}, {400, 5}}, 0.99), 400);
  EXPECT_EQ(Percentile({{1, 95}, {400, 5}}, 0.95), 1);
}

TEST(LatencyLogTest, TheListenerCountsDatagramsPerBackendAndServerUntilTaken) {
  LatencyListener l;
  EXPECT_EQ(l.address(), "");
  ASSERT_TRUE(l.Start().ok());
  const std::string addr = l.address();
  ASSERT_EQ(addr.rfind("127.0.0.1:", 0), 0u) << addr;
  const int port = std::stoi(addr.substr(addr.find(':') + 1));
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<uint16_t>(port));
  auto send = [&](const std::string& line) {
    ASSERT_GT(::sendto(fd, line.data(), line.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  };
  send("<134>h[1]: abacus-latency svc_a s1 3");
  send("<134>h[1]: abacus-latency svc_a s1 3");
  send("<134>h[1]: abacus-latency svc_a s2 9");
  send("<134>h[1]: abacus-latency svc_b s1 1");
  send("<133>h[1]: Server svc_a/s1 is DOWN");
  for (int i = 0; i < 200 && l.received() < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::close(fd);
  ASSERT_EQ(l.received(), 4);
  auto a = l.Take("svc_a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a["s1"], (LatencyCounts{{3, 2}}));
  EXPECT_EQ(a["s2"], (LatencyCounts{{9, 1}}));
  EXPECT_TRUE(l.Take("svc_a").empty());  // taken: the next interval starts empty
  EXPECT_EQ(l.Take("svc_b").size(), 1u);
  l.Stop();
  l.Stop();  // idempotent
}

}  // namespace
}  // namespace abacus::gateway

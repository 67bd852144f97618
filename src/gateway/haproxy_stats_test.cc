#include "gateway/haproxy_stats.h"

#include <gtest/gtest.h>

namespace abacus::gateway {
namespace {

using namespace std::chrono_literals;

// As HAProxy 2.6 answers `show stat` (columns cut down; the parser reads them by name).
constexpr char kStat[] =
    "# pxname,svname,qcur,stot,req_tot,hrsp_2xx,rtime,ttime,type,\n"
    "gateway,FRONTEND,,30,30,30,,,0,\n"
    "svc_chat,t-w-1.0.0.1.0,0,20,20,20,1,2,2,\n"
    "svc_chat,t-w-1.0.1.1.0,0,10,10,10,3,4,2,\n"
    "svc_chat,t-w-1.0.2.1.0,0,0,0,0,,,2,\n"
    "svc_chat,BACKEND,0,30,30,30,2,3,1,\n";

TEST(HaproxyStatsTest, ParsesTheServerRowsByColumnName) {
  auto rows = ParseShowStat(kStat);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].backend, "svc_chat");
  EXPECT_EQ((*rows)[0].server, "t-w-1.0.0.1.0");
  EXPECT_EQ((*rows)[0].requests, 20);
  EXPECT_EQ((*rows)[1].ttime_ms, 4);
  EXPECT_FALSE((*rows)[2].ttime_ms.has_value());
  EXPECT_FALSE(ParseShowStat("# pxname,svname\nx,y\n").ok());
  EXPECT_FALSE(ParseShowStat("svc_chat,s1,1\n").ok());
}

TEST(HaproxyStatsTest, RequestsPerSecondAreTheDifferenceOverTheTimeBetweenReads) {
  auto rows = *ParseShowStat(kStat);
  const std::map<std::string, int32_t> replicas = {{"t-w-1.0.0.1.0", 0}, {"t-w-1.0.1.1.0", 1}};
  StatsRead before;
  const auto t0 = std::chrono::steady_clock::time_point{} + 100s;
  // The first read only remembers.
  EXPECT_TRUE(MetricSamples("svc_chat", rows, t0, replicas, kGatewayRequestsPerSecond, before).empty());
  rows[0].requests += 100;  // 100 requests in 2 s on replica 0, none on replica 1
  nlohmann::json s = MetricSamples("svc_chat", rows, t0 + 2s, replicas, kGatewayRequestsPerSecond, before);
  ASSERT_EQ(s.size(), 2u) << s.dump();
  EXPECT_EQ(s[0]["replica"], 0);
  EXPECT_DOUBLE_EQ(s[0]["value"].get<double>(), 50.0);
  EXPECT_EQ(s[0]["metric"], "requestsPerSecond");
  EXPECT_DOUBLE_EQ(s[1]["value"].get<double>(), 0.0);
  // Latency: the 99th percentile of the requests HAProxy logged since the last read, not the
  // average (ttime): 98 fast requests and 2 slow ones on replica 0 give the slow time; replica 1
  // answered none (0); another backend's rows are not counted.
  std::map<std::string, LatencyCounts> latencies;
  latencies["t-w-1.0.0.1.0"] = {{2, 98}, {300, 2}};
  s = MetricSamples("svc_chat", rows, t0 + 4s, replicas, kGatewayP99LatencyMs, before, latencies);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0]["value"].get<double>(), 300.0);
  EXPECT_EQ(s[0]["metric"], "p99LatencyMs");
  EXPECT_DOUBLE_EQ(s[1]["value"].get<double>(), 0.0);
  EXPECT_TRUE(MetricSamples("svc_other", rows, t0 + 6s, replicas, kGatewayRequestsPerSecond, before).empty());
}

}  // namespace
}  // namespace abacus::gateway

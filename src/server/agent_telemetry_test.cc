#include "server/agent_telemetry.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

const Time kStart = Time{} + 1000h;

TEST(AgentTelemetryTest, ANodeNeverHeardGetsAFullTimeoutFromTheFirstLook) {
  AgentTelemetry t;
  t.Heard("a", kStart);
  EXPECT_TRUE(t.Silent({"a", "b"}, kStart + 20s, 30s).empty());  // b: first look
  EXPECT_EQ(t.Silent({"a", "b"}, kStart + 31s, 30s), std::vector<std::string>{"a"});
  EXPECT_EQ(t.Silent({"a", "b"}, kStart + 51s, 30s), (std::vector<std::string>{"a", "b"}));
  t.Heard("a", kStart + 60s);
  EXPECT_EQ(t.Silent({"a", "b"}, kStart + 61s, 30s), std::vector<std::string>{"b"});
  EXPECT_EQ(t.LastHeard().at("a"), kStart + 60s);
}

TEST(AgentTelemetryTest, UtilizationKeepsTheLastValueAndASampleAMinuteOrOnAChange) {
  AgentTelemetry t;
  t.ReportUtilization("a", 0, 0.50, kStart);
  t.ReportUtilization("a", 0, 0.52, kStart + 10s);  // same minute, under 5 points: no sample
  t.ReportUtilization("a", 0, 0.90, kStart + 20s);  // a change of 38 points: a sample
  t.ReportUtilization("a", 1, 0.10, kStart + 30s);
  t.ReportUtilization("a", 0, 0.91, kStart + 90s);  // a minute after the last sample
  EXPECT_DOUBLE_EQ(t.DeviceUtilization().at("a").at(0), 0.91);
  EXPECT_DOUBLE_EQ(t.DeviceUtilization().at("a").at(1), 0.10);
  auto device0 = t.SamplesOf("a", 0, kStart);
  ASSERT_EQ(device0.size(), 3u);
  EXPECT_DOUBLE_EQ(device0[1].second, 0.90);
  EXPECT_EQ(t.SamplesOf("a", 0, kStart + 15s).size(), 2u);
  EXPECT_TRUE(t.SamplesOf("b", 0, kStart).empty());
  EXPECT_EQ(t.Samples(kStart + 20s, kStart + 31s).size(), 2u);  // [from, to)
}

TEST(AgentTelemetryTest, MetricsKeepTwoMinutes) {
  AgentTelemetry t;
  t.AddMetrics("wl-1", {{0, "rps", 10, kStart}}, kStart);
  t.AddMetrics("wl-1", {{1, "rps", 20, kStart + 100s}}, kStart + 100s);
  EXPECT_EQ(t.MetricsOf("wl-1").size(), 2u);
  t.AddMetrics("wl-1", {{0, "rps", 30, kStart + 130s}}, kStart + 130s);
  auto kept = t.MetricsOf("wl-1");
  ASSERT_EQ(kept.size(), 2u);  // the first is older than two minutes
  EXPECT_DOUBLE_EQ(kept.front().value, 20);
  EXPECT_TRUE(t.MetricsOf("wl-2").empty());
}

}  // namespace
}  // namespace abacus::server

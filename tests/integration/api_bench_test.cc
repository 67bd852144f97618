// The API load benchmark (bench/api_bench.cc, `make bench`) as a real process: against its own
// in-process server and against a running `abacus server`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

CliResult RunBench(const std::vector<std::string>& args) { return RunProgram(ABACUS_API_BENCH, args); }

// abacus_api_bench against its own in-process server: every row is measured (submissions
// acknowledged, none refused, latencies in order) and says how much CPU the hypervisor took.
TEST(BenchApiTest, MeasuresDurableSubmissionsAndReportsStolenCpu) {
  auto r = RunBench({"--clients", "1,2", "--seconds", "0.3", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["server"], "in-process");
  ASSERT_EQ(out["runs"].size(), 2u) << r.out;
  for (const auto& row : out["runs"]) {
    EXPECT_GT(row["acknowledged"].get<int64_t>(), 0) << row.dump();
    EXPECT_EQ(row["errors"], 0) << row.dump();
    EXPECT_GT(row["p50_ms"].get<double>(), 0) << row.dump();
    EXPECT_GE(row["p99_ms"].get<double>(), row["p50_ms"].get<double>()) << row.dump();
    EXPECT_GE(row["max_ms"].get<double>(), row["p99_ms"].get<double>()) << row.dump();
    ASSERT_TRUE(row["stolen_pct"].is_number()) << row.dump();
    EXPECT_GE(row["stolen_pct"].get<double>(), 0);
    EXPECT_LE(row["stolen_pct"].get<double>(), 100);
  }
  auto table = RunBench({"--clients", "1", "--seconds", "0.2"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("STOLEN %"), std::string::npos) << table.out;
}

// Two abacus_api_bench runs against one server: the second names none of the workloads the first left
// active (before, every row of the second run was refused with 409 already_exists).
TEST(BenchApiTest, ASecondRunAgainstTheSameServerIsNotRefused) {
  TempDir dir;
  ServerProcess server(dir.path(), {"--rate-limit", "0", "--tenant-rate-limit", "0"});
  for (int run = 0; run < 2; ++run) {
    auto r = RunBench({"--server", server.url(), "--token", server.token(), "--clients", "1,2", "--seconds", "0.2",
                       "-o", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json out = json::parse(r.out);
    for (const auto& row : out["runs"]) {
      EXPECT_GT(row["acknowledged"].get<int64_t>(), 0) << "run " << run << ": " << row.dump();
      EXPECT_EQ(row["errors"], 0) << "run " << run << ": " << row.dump() << r.err;
    }
  }
}

}  // namespace
}  // namespace abacus::testing

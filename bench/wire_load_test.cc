#include "wire_load.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

#include "cli/wire_client.h"
#include "net/loopback_server_test_util.h"

namespace abacus::bench {
namespace {

using namespace std::chrono_literals;
using cli::WireClient;

// A server that answers POST /load with 201 (or the status in the body's "status=NNN"), and
// records which requests each connection (by client port) carried and how many at once.
class WireLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    svr_.set_keep_alive_max_count(100000);
    svr_.Post("/load", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        if (++in_flight_[req.remote_port] > 1) overlapped_ = true;
        seen_[req.remote_port].push_back(req.body.substr(0, req.body.find(' ')));
      }
      std::this_thread::sleep_for(200us);
      int status = 201;
      if (size_t at = req.body.find("status="); at != std::string::npos) status = std::stoi(req.body.substr(at + 7, 3));
      res.status = status;
      res.set_content("answer to " + req.body.substr(0, 20), "text/plain");
      std::lock_guard lock(mu_);
      --in_flight_[req.remote_port];
    });
    port_ = served_.Start();
    ASSERT_GT(port_, 0);
  }
  std::string Request(const std::string& body) const {
    return WireClient::Request("POST", "/load", "127.0.0.1:" + std::to_string(port_), "t0k", "text/plain", body);
  }
  // `n` connections, each opened with one request before the load starts.
  std::vector<int> Connect(int n) {
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) {
      WireClient c("127.0.0.1", port_);
      EXPECT_EQ(c.RoundTrip(Request("warm")).status, 201);
      fds.push_back(c.ReleaseFd());
    }
    std::lock_guard lock(mu_);
    seen_.clear();
    return fds;
  }

  net::LoopbackServer served_;
  net::BufferedServer& svr_ = served_.server();
  int port_ = 0;
  std::mutex mu_;
  std::map<int, int> in_flight_;                       // GUARDED_BY(mu_)
  std::map<int, std::vector<std::string>> seen_;       // GUARDED_BY(mu_): bodies' first word
  bool overlapped_ = false;                            // GUARDED_BY(mu_)
};

TEST_F(WireLoadTest, EveryConnectionCarriesItsOwnRequestsOneAtATimeInOrder) {
  WireLoad load(Connect(8), [&](int conn, int64_t n) {
    return Request("c" + std::to_string(conn) + "-" + std::to_string(n) + " payload");
  });
  WireLoadResult r = load.Run(300ms);
  EXPECT_EQ(r.errors, 0) << (r.first_errors.empty() ? "" : r.first_errors[0]);
  std::lock_guard lock(mu_);
  EXPECT_FALSE(overlapped_);
  ASSERT_EQ(seen_.size(), 8u);
  size_t total = 0;
  std::set<std::string> prefixes;
  for (const auto& [port, bodies] : seen_) {
    ASSERT_FALSE(bodies.empty());
    std::string prefix = bodies[0].substr(0, bodies[0].find('-'));
    prefixes.insert(prefix);
    for (size_t n = 0; n < bodies.size(); ++n) EXPECT_EQ(bodies[n], prefix + "-" + std::to_string(n));
    total += bodies.size();
  }
  EXPECT_EQ(prefixes.size(), 8u);  // each connection carried one client's requests
  EXPECT_EQ(r.latencies_ms.size(), total);  // every request answered and timed, none after the end
  for (double ms : r.latencies_ms) EXPECT_GT(ms, 0);
}

TEST_F(WireLoadTest, OtherStatusesAreErrorsWithTheirReasons) {
  WireLoad load(Connect(2), [&](int, int64_t n) { return Request(n % 2 == 1 ? "x status=429" : "x"); });
  WireLoadResult r = load.Run(200ms);
  EXPECT_GT(r.errors, 0);
  EXPECT_GT(r.latencies_ms.size(), 0u);
  ASSERT_FALSE(r.first_errors.empty());
  EXPECT_LE(r.first_errors.size(), 3u);
  EXPECT_NE(r.first_errors[0].find("HTTP 429"), std::string::npos) << r.first_errors[0];
  EXPECT_NE(r.first_errors[0].find("answer to x status=429"), std::string::npos) << r.first_errors[0];
}

TEST_F(WireLoadTest, AConnectionTheServerClosesEndsWithoutLosingItsAnswers) {
  svr_.set_keep_alive_max_count(4);  // the warm-up and 3 more, then "Connection: close"
  WireLoad load(Connect(3), [&](int, int64_t) { return Request("x"); });
  WireLoadResult r = load.Run(300ms);
  EXPECT_EQ(r.errors, 0) << (r.first_errors.empty() ? "" : r.first_errors[0]);
  EXPECT_EQ(r.latencies_ms.size(), 9u);
}

TEST_F(WireLoadTest, RequestsLargerThanTheSocketBufferAreSentWhole) {
  const std::string big(4 << 20, 'b');
  WireLoad load(Connect(2), [&](int conn, int64_t n) {
    return Request("c" + std::to_string(conn) + "-" + std::to_string(n) + " " + big);
  });
  WireLoadResult r = load.Run(200ms);
  EXPECT_EQ(r.errors, 0) << (r.first_errors.empty() ? "" : r.first_errors[0]);
  EXPECT_GE(r.latencies_ms.size(), 2u);
}

TEST_F(WireLoadTest, ARefusedConnectionIsAnErrorNotAHang) {
  std::vector<int> fds = Connect(1);
  served_.Stop();
  WireLoad load(std::move(fds), [&](int, int64_t) { return Request("x"); });
  WireLoadResult r = load.Run(100ms);
  EXPECT_EQ(r.latencies_ms.size(), 0u);
  EXPECT_EQ(r.errors, 1);
  ASSERT_EQ(r.first_errors.size(), 1u);
}

}  // namespace
}  // namespace abacus::bench

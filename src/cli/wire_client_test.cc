#include "cli/wire_client.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "net/loopback_server_test_util.h"

namespace abacus::cli {
namespace {

using namespace std::chrono_literals;

class WireClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    svr_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 201;
      res.set_content(req.get_header_value("Authorization") + "|" + std::to_string(req.remote_port) + "|" + req.body,
                      "text/plain");
    });
    port_ = served_.Start();
    ASSERT_GT(port_, 0);
  }
  std::string Echo(const std::string& body) const {
    return WireClient::Request("POST", "/echo", "127.0.0.1:" + std::to_string(port_), "t0k", "text/plain", body);
  }

  net::LoopbackServer served_;
  net::BufferedServer& svr_ = served_.server();
  int port_ = 0;
};

TEST_F(WireClientTest, AnswersComeBackOnOneKeptAliveConnection) {
  svr_.set_keep_alive_max_count(1000);
  WireClient client("127.0.0.1", port_);
  std::set<std::string> ports;
  for (int i = 0; i < 20; ++i) {
    std::string body = "n" + std::to_string(i) + std::string(static_cast<size_t>(i) * 3000, 'x');
    WireAnswer a = client.RoundTrip(Echo(body));
    ASSERT_EQ(a.status, 201) << a.error;
    size_t first = a.body.find('|'), second = a.body.find('|', first + 1);
    ASSERT_NE(second, std::string::npos) << a.body;
    EXPECT_EQ(a.body.substr(0, first), "Bearer t0k");
    ports.insert(a.body.substr(first + 1, second - first - 1));
    EXPECT_EQ(a.body.substr(second + 1), body);
  }
  EXPECT_EQ(ports.size(), 1u);
}

TEST_F(WireClientTest, AConnectionTheServerClosedIsReopened) {
  svr_.set_keep_alive_max_count(2);  // "Connection: close" on every second answer
  WireClient client("127.0.0.1", port_);
  std::set<std::string> ports;
  for (int i = 0; i < 6; ++i) {
    WireAnswer a = client.RoundTrip(Echo("x"));
    ASSERT_EQ(a.status, 201) << a.error;
    ports.insert(a.body.substr(0, a.body.rfind('|')));
  }
  EXPECT_EQ(ports.size(), 3u);
}

TEST_F(WireClientTest, AnUnreachableServerIsAnError) {
  served_.Stop();
  WireClient client("127.0.0.1", port_);
  WireAnswer a = client.RoundTrip(Echo("x"));
  EXPECT_EQ(a.status, 0);
  EXPECT_NE(a.error.find("cannot connect"), std::string::npos) << a.error;
}

}  // namespace
}  // namespace abacus::cli

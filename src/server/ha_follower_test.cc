// FollowerServer and Forwarder over loopback: a follower forwards API calls to the leader and
// returns its answer as is, sends agents to the leader (421), and answers 503 with Retry-After
// when it has no leader to forward to.
#include "server/ha_follower.h"

#include <httplib.h>
#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace abacus::server {
namespace {

using nlohmann::json;

// A stand-in for the leader: echoes what reached it.
class FakeLeader {
 public:
  FakeLeader() {
    svr_.Post("/api/v1/workloads", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 201;
      res.set_header("X-Custom", "kept");
      res.set_content(json({{"method", req.method},
                            {"target", req.target},
                            {"body", req.body},
                            {"auth", req.get_header_value("Authorization")},
                            {"forwardedFor", req.get_header_value("X-Forwarded-For")}})
                          .dump(),
                      "application/json");
    });
    svr_.Get("/api/v1/nodes", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 404;
      res.set_content(json({{"target", req.target}}).dump(), "application/json");
    });
    svr_.set_keep_alive_timeout(1);  // the forwarder keeps a connection open
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeLeader() {
    svr_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
};

class FollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FollowerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    follower_ = std::make_unique<FollowerServer>(
        [this] {
          std::lock_guard lock(mu_);
          return view_;
        },
        forwarder_, o);
    ASSERT_TRUE(follower_->Bind().ok());
    thread_ = std::thread([this] { follower_->Serve(); });
    while (!follower_->serving()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    client_ = std::make_unique<httplib::Client>("http://127.0.0.1:" + std::to_string(follower_->port()));
  }
  void TearDown() override {
    follower_->Stop();
    thread_.join();
  }
  void SetLeader(const std::string& url, int64_t token = 7) {
    std::lock_guard lock(mu_);
    view_ = LeaseView{false, token, url, view_.changes + 1};
  }

  std::mutex mu_;
  LeaseView view_;
  Forwarder forwarder_;
  std::unique_ptr<FollowerServer> follower_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(FollowerTest, ForwardsRequestsToTheLeaderAndReturnsItsAnswer) {
  FakeLeader leader;
  SetLeader(leader.url());
  httplib::Headers headers = {{"Authorization", "Bearer secret"}};
  auto r = client_->Post("/api/v1/workloads?filename=a%20b.yaml", headers, "kind: BatchJob\n", "application/yaml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->get_header_value("X-Custom"), "kept");
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  json body = json::parse(r->body);
  EXPECT_EQ(body["method"], "POST");
  EXPECT_EQ(body["target"], "/api/v1/workloads?filename=a%20b.yaml");  // as the client sent it
  EXPECT_EQ(body["body"], "kind: BatchJob\n");
  EXPECT_EQ(body["auth"], "Bearer secret");
  EXPECT_EQ(body["forwardedFor"], "127.0.0.1");
  // The leader's errors come back as they are.
  auto missing = client_->Get("/api/v1/nodes?x=1");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["target"], "/api/v1/nodes?x=1");
}

TEST_F(FollowerTest, SendsAgentsToTheLeaderAndSaysWhoLeads) {
  SetLeader("http://10.0.0.9:8420");
  auto r = client_->Get("/api/v1/agent/assignments?node=n1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 421);
  EXPECT_EQ(r->get_header_value("X-Abacus-Leader"), "http://10.0.0.9:8420");
  EXPECT_EQ(json::parse(r->body)["error"]["leader"], "http://10.0.0.9:8420");

  auto ready = client_->Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(json::parse(ready->body), (json{{"status", "ready"}, {"role", "follower"}, {"leader", "http://10.0.0.9:8420"}}));
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("abacus_ha_leader 0\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("abacus_ha_lease_token 7\n"), std::string::npos) << metrics->body;
}

TEST_F(FollowerTest, AnswersUnavailableWithRetryAfterWithoutAReachableLeader) {
  SetLeader("");  // none elected yet (or this server is taking over)
  auto r = client_->Post("/api/v1/workloads", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_EQ(client_->Get("/readyz")->status, 503);
  EXPECT_EQ(client_->Get("/api/v1/agent/assignments")->status, 503);

  std::string gone;
  {
    FakeLeader leader;  // a leader that has just died: nothing listens at its address
    gone = leader.url();
  }
  SetLeader(gone);
  r = client_->Post("/api/v1/workloads", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_EQ(r->get_header_value("X-Abacus-Leader"), gone);
  EXPECT_NE(json::parse(r->body)["error"]["message"].get<std::string>().find("cannot reach the leader"),
            std::string::npos)
      << r->body;
}

TEST(ForwardHeadersTest, EndToEndHeadersTravelHopByHopOnesDoNot) {
  for (const char* h : {"Authorization", "Content-Type", "Accept", "X-Request-Id", "Range"}) {
    EXPECT_TRUE(ForwardsRequestHeader(h)) << h;
  }
  for (const char* h : {"Host", "Connection", "content-length", "Transfer-Encoding", "Accept-Encoding", "REMOTE_ADDR",
                        "LOCAL_PORT"}) {
    EXPECT_FALSE(ForwardsRequestHeader(h)) << h;
  }
  EXPECT_TRUE(ForwardsResponseHeader("Retry-After"));
  EXPECT_TRUE(ForwardsResponseHeader("Content-Disposition"));
  EXPECT_FALSE(ForwardsResponseHeader("Content-Type"));  // set with the body
  EXPECT_FALSE(ForwardsResponseHeader("Content-Encoding"));
  EXPECT_FALSE(ForwardsResponseHeader("Keep-Alive"));
}

}  // namespace
}  // namespace abacus::server

// Probe tests against a local httplib server on 127.0.0.1 port 0 and a closed port; thresholds
// on a manual clock.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "agent/probe/probe.h"

namespace abacus::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A port nothing listens on: bound, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class ProbeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    server_.Get("/broken", [](const httplib::Request&, httplib::Response& res) { res.status = 503; });
    server_.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(milliseconds(400));
      res.set_content("late", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i) std::this_thread::sleep_for(milliseconds(1));
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  ProbeSpec Http(const std::string& path) {
    ProbeSpec s;
    s.kind = ProbeKind::kHttp;
    s.port = port_;
    s.path = path;
    s.timeout = milliseconds(150);
    return s;
  }
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ProbeServerTest, HttpHealthyBrokenSlowAndClosed) {
  ProbeResult ok = RunProbe(Http("/healthz"));
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_EQ(ok.message, "HTTP 200");
  ProbeResult broken = RunProbe(Http("/broken"));
  EXPECT_FALSE(broken.ok);
  EXPECT_EQ(broken.message, "GET http://127.0.0.1:" + std::to_string(port_) + "/broken: HTTP 503");
  ProbeResult missing = RunProbe(Http("/nope"));
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.message, "GET http://127.0.0.1:" + std::to_string(port_) + "/nope: HTTP 404");
  ProbeResult slow = RunProbe(Http("/slow"));
  EXPECT_FALSE(slow.ok);
  EXPECT_NE(slow.message.find("/slow"), std::string::npos) << slow.message;
  ProbeSpec closed = Http("/healthz");
  closed.port = ClosedPort();
  ProbeResult refused = RunProbe(closed);
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.message, "GET http://127.0.0.1:" + std::to_string(closed.port) + "/healthz: connection refused");
}

TEST_F(ProbeServerTest, TcpOpenAndClosedPorts) {
  ProbeSpec s;
  s.kind = ProbeKind::kTcp;
  s.port = port_;
  s.timeout = milliseconds(200);
  ProbeResult open = RunProbe(s);
  EXPECT_TRUE(open.ok) << open.message;
  s.port = ClosedPort();
  ProbeResult closed = RunProbe(s);
  EXPECT_FALSE(closed.ok);
  EXPECT_EQ(closed.message, "tcp 127.0.0.1:" + std::to_string(s.port) + ": connection refused");
}

TEST(ProbeTest, ExecProbes) {
  ProbeSpec s;
  s.kind = ProbeKind::kExec;
  s.timeout = milliseconds(200);
  s.command = {"true"};
  EXPECT_TRUE(RunProbe(s).ok);
  s.command = {"sh", "-c", "echo not ready; exit 2"};
  ProbeResult failed = RunProbe(s);
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.message, "exec sh -c echo not ready; exit 2: exited 2: not ready");
  s.command = {"sleep", "5"};
  ProbeResult slow = RunProbe(s);
  EXPECT_FALSE(slow.ok);
  EXPECT_NE(slow.message.find("timed out"), std::string::npos) << slow.message;
  s.command = {"no-such-probe-command"};
  EXPECT_FALSE(RunProbe(s).ok);
}

TEST(ProbeTest, ValidatesSpecs) {
  ProbeSpec s;
  EXPECT_FALSE(s.Validate().ok());  // port 0
  s.port = 8080;
  EXPECT_TRUE(s.Validate().ok());
  s.failure_threshold = 0;
  EXPECT_FALSE(s.Validate().ok());
  s.failure_threshold = 1;
  s.path = "healthz";
  EXPECT_FALSE(s.Validate().ok());
  ProbeSpec e;
  e.kind = ProbeKind::kExec;
  EXPECT_FALSE(e.Validate().ok());
  EXPECT_FALSE(RunProbe(e).ok);
}

TEST(ProbeTest, ThresholdsAndPeriodOnAManualClock) {
  ManualClock clock;
  ProbeSpec spec;
  spec.kind = ProbeKind::kTcp;
  spec.port = 1;
  spec.initial_delay = seconds(5);
  spec.period = seconds(10);
  spec.success_threshold = 2;
  spec.failure_threshold = 3;
  std::vector<bool> script = {true, true, false, false, true, false, false, false};
  size_t next = 0;
  int attempts = 0;
  Prober prober(spec, clock, [&](const ProbeSpec&) {
    ++attempts;
    bool ok = script[next++];
    return ProbeResult{ok, ok ? "fine" : "bad"};
  });
  EXPECT_FALSE(prober.Tick());  // initial delay
  EXPECT_EQ(attempts, 0);
  clock.Advance(seconds(5));
  EXPECT_FALSE(prober.Tick());  // 1 success of 2
  EXPECT_EQ(prober.tracker().state(), ProbeState::kUnknown);
  EXPECT_FALSE(prober.Tick());  // not due yet
  clock.Advance(seconds(10));
  EXPECT_TRUE(prober.Tick());
  EXPECT_EQ(prober.tracker().state(), ProbeState::kHealthy);
  for (int i = 0; i < 2; ++i) {
    clock.Advance(seconds(10));
    EXPECT_FALSE(prober.Tick());  // failures 1, 2 of 3
  }
  clock.Advance(seconds(10));
  EXPECT_FALSE(prober.Tick());  // a success resets the failure count
  EXPECT_EQ(prober.tracker().consecutive_failures(), 0);
  for (int i = 0; i < 2; ++i) {
    clock.Advance(seconds(10));
    EXPECT_FALSE(prober.Tick());
  }
  clock.Advance(seconds(10));
  EXPECT_TRUE(prober.Tick());
  EXPECT_EQ(prober.tracker().state(), ProbeState::kUnhealthy);
  EXPECT_EQ(prober.tracker().last_message(), "bad");
  EXPECT_EQ(prober.tracker().next_due(), clock.Now() + seconds(10));
  EXPECT_EQ(attempts, 8);
}

}  // namespace
}  // namespace abacus::agent

#include "gateway/haproxy_config.h"

#include <gtest/gtest.h>

namespace abacus::gateway {
namespace {

TEST(HaproxyConfigTest, ARenderedReloadKeepsTheServersAndTheirStates) {
  HaproxyConfig c;
  c.listen = "127.0.0.1:8080";
  c.admin_socket = "/run/g/admin.sock";
  c.pid_file = "/run/g/haproxy.pid";
  BackendConfig b{"svc_chat", "chat", "/healthz", {}};
  b.servers["t-w.0.0.1.0"] = {"127.0.0.1:20000", 3, ServerAdmin::kReady};
  b.servers["t-w.0.1.1.0"] = {"127.0.0.1:20001", 1, ServerAdmin::kDrain};
  b.servers["t-w.0.2.1.0"] = {"127.0.0.1:20002", 1, ServerAdmin::kMaint};
  c.backends.push_back(b);
  const std::string cfg = RenderHaproxyConfig(c);
  EXPECT_NE(cfg.find("stats socket /run/g/admin.sock mode 600 level admin expose-fd listeners\n"), std::string::npos) << cfg;
  EXPECT_NE(cfg.find("option httpchk GET /healthz\n"), std::string::npos) << cfg;
  EXPECT_NE(cfg.find("  server t-w.0.0.1.0 127.0.0.1:20000 weight 3 check\n"), std::string::npos) << cfg;
  EXPECT_NE(cfg.find("  server t-w.0.1.1.0 127.0.0.1:20001 weight 0 check\n"), std::string::npos) << cfg;  // drain
  EXPECT_NE(cfg.find("  server t-w.0.2.1.0 127.0.0.1:20002 weight 1 check disabled\n"), std::string::npos) << cfg;
  c.backends[0].health_path.clear();
  EXPECT_NE(RenderHaproxyConfig(c).find("  server t-w.0.0.1.0 127.0.0.1:20000 weight 3\n"), std::string::npos);
}

TEST(HaproxyConfigTest, TheLatencyLogIsOneLinePerRequestToTheGatewaysSocket) {
  HaproxyConfig c;
  c.listen = "127.0.0.1:8080";
  c.admin_socket = "/run/g/admin.sock";
  c.pid_file = "/run/g/haproxy.pid";
  c.backends.push_back({"svc_chat", "chat", "", {}});
  EXPECT_EQ(RenderHaproxyConfig(c).find("log"), std::string::npos);  // no listener: no log
  c.latency_log = "127.0.0.1:40000";
  const std::string cfg = RenderHaproxyConfig(c);
  EXPECT_NE(cfg.find("  log 127.0.0.1:40000 len 512 local0 info\n"), std::string::npos) << cfg;
  EXPECT_NE(cfg.find("  log-format \"abacus-latency %b %s %Ta\"\n"), std::string::npos) << cfg;
  EXPECT_LT(cfg.find("log global"), cfg.find("backend svc_chat")) << cfg;  // in the frontend
}

}  // namespace
}  // namespace abacus::gateway

// The agent against a fake server on 127.0.0.1 (cpp-httplib, in this process), with real task
// processes and a ManualClock for every timing decision. Tests wait for outcomes (with a
// generous real-time limit) and never assert how long anything took.
#include <httplib.h>
#include <openssl/evp.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "agent/discover/discoverer.h"
#include "agent/loop/agent.h"
#include "agent/loop/agent_client.h"
#include "agent/loop/log_shipper.h"
#include "agent/loop/pid_file.h"
#include "common/test_eventually.h"

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kJoinToken[] = "join-secret";

std::string DecodeBase64(const std::string& in) {
  std::string out(in.size() / 4 * 3 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) return "<bad base64>";
  size_t pad = 0;
  for (size_t i = in.size(); i > 0 && in[i - 1] == '='; --i) ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

// The server side of docs/agent-protocol.md, just enough of it, recording what it is sent.
class FakeServer {
 public:
  explicit FakeServer(int port = 0) {
    svr_.Post("/api/v1/agent/register", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      if (req.get_header_value("Authorization") != std::string("Bearer ") + kJoinToken) return Error(res, 401);
      json body = json::parse(req.body);
      registrations_.push_back(body);
      node_token_ = "node-token-" + std::to_string(registrations_.size());
      res.set_content(json{{"node", body["name"]}, {"nodeToken", node_token_}, {"heartbeatSeconds", 5},
                           {"nodeTimeoutSeconds", 30}}.dump(),
                      "application/json");
    });
    svr_.Get("/api/v1/agent/assignments", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mu_);
      if (!Authorized(req)) return Error(res, 403);  // what the real server answers to a stale credential
      int64_t after = std::stoll(req.get_param_value("after"));
      int wait_ms = std::stoi(req.get_param_value("waitMs"));
      ++polls_;
      last_after_ = after;
      cv_.wait_for(lock, milliseconds(wait_ms), [&] { return version_ != after || closing_; });
      res.set_content(json{{"version", version_}, {"tasks", tasks_}}.dump(), "application/json");
    });
    svr_.Post("/api/v1/agent/status", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      if (!Authorized(req)) return Error(res, 401);
      json body = json::parse(req.body);
      for (const auto& t : body["tasks"]) {
        statuses_.push_back(t);
        if (t["phase"] == "Exited") logs_at_exit_[t["taskId"]] = logs_;
      }
      res.set_content(R"({"ok": true, "unknown": []})", "application/json");
    });
    svr_.Post("/api/v1/agent/heartbeat", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      if (!Authorized(req)) return Error(res, 404);
      heartbeats_.push_back(json::parse(req.body));
      res.set_content(R"({"ok": true})", "application/json");
    });
    svr_.Post("/api/v1/agent/logs", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      if (!Authorized(req)) return Error(res, 401);
      json body = json::parse(req.body);
      std::string key = body["taskId"].get<std::string>() + "." + body["stream"].get<std::string>();
      std::string data = DecodeBase64(body["dataBase64"]);
      int64_t offset = body["offset"];
      std::string& stored = logs_[key];
      auto size = static_cast<int64_t>(stored.size());
      if (offset > size) {
        ++log_conflicts_;
        res.status = 409;
        res.set_content(json{{"error", {{"code", "conflict"}, {"message", "offset beyond size"}}}, {"size", size}}.dump(),
                        "application/json");
        return;
      }
      if (offset + static_cast<int64_t>(data.size()) > size) stored += data.substr(static_cast<size_t>(size - offset));
      res.set_content(R"({"ok": true})", "application/json");
    });
    port_ = port == 0 ? svr_.bind_to_any_port("127.0.0.1") : (svr_.bind_to_port("127.0.0.1", port) ? port : -1);
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (port_ > 0 && !svr_.is_running()) std::this_thread::sleep_for(milliseconds(1));
  }

  ~FakeServer() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    svr_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // Publishes a new assignment version.
  void Publish(json tasks) {
    {
      std::lock_guard lock(mu_);
      tasks_ = std::move(tasks);
      ++version_;
    }
    cv_.notify_all();
  }
  // True once the agent polled with the latest version: it has applied it.
  bool Applied() {
    std::lock_guard lock(mu_);
    return last_after_ == version_;
  }
  // Forgets the node credential, as a restarted server that lost it would.
  void ForgetNode() {
    std::lock_guard lock(mu_);
    node_token_ = "forgotten";
  }
  void DropLogs() {
    std::lock_guard lock(mu_);
    logs_.clear();
  }

  template <typename F>
  auto With(F f) {
    std::lock_guard lock(mu_);
    return f(*this);
  }

  // The statuses received for `task_id`, oldest first.
  std::vector<json> StatusesOf(const std::string& task_id) {
    std::lock_guard lock(mu_);
    std::vector<json> out;
    for (const auto& s : statuses_) {
      if (s["taskId"] == task_id) out.push_back(s);
    }
    return out;
  }
  std::optional<json> Last(const std::string& task_id, const std::string& phase) {
    auto all = StatusesOf(task_id);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if ((*it)["phase"] == phase) return *it;
    }
    return std::nullopt;
  }

  std::vector<json> registrations_, statuses_, heartbeats_;
  std::map<std::string, std::string> logs_;
  std::map<std::string, std::map<std::string, std::string>> logs_at_exit_;
  int polls_ = 0;
  int64_t last_after_ = -1;
  int log_conflicts_ = 0;

 private:
  bool Authorized(const httplib::Request& req) const {
    return req.get_header_value("Authorization") == "Bearer " + node_token_;
  }
  static void Error(httplib::Response& res, int status) {
    res.status = status;
    res.set_content(json{{"error", {{"code", "x"}, {"message", "rejected " + std::to_string(status)}}}}.dump(),
                    "application/json");
  }

  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string node_token_;
  int64_t version_ = 0;
  json tasks_ = json::array();
  bool closing_ = false;
};

json RunTask(const std::string& id, std::vector<std::string> command, const std::string& action = "run") {
  return {{"taskId", id}, {"workloadId", "wl"}, {"action", action}, {"command", command},
          {"env", {{"ABACUS_WORKLOAD_ID", "wl"}}}, {"graceSeconds", 30}, {"stopSignal", "SIGTERM"}};
}

// A port nothing listens on (bound for a moment, then closed).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A node whose devices the test changes between discoveries.
class ScriptedDiscoverer final : public Discoverer {
 public:
  explicit ScriptedDiscoverer(std::shared_ptr<std::vector<Device>> devices) : devices_(std::move(devices)) {}
  Result<Discovery> Discover() override {
    Discovery d;
    d.host.cpu_milli = 8000;
    d.host.memory_bytes = int64_t{32} << 30;
    d.devices = *devices_;
    return d;
  }

 private:
  std::shared_ptr<std::vector<Device>> devices_;
};

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    work_ = fs::temp_directory_path() / ("abacus-agent-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
    fs::create_directories(work_);
  }
  void TearDown() override {
    agent_.reset();  // before the server: its keep-alive connections close first
    server_.reset();
    std::error_code ec;
    fs::remove_all(work_, ec);
  }

  AgentOptions Options(const std::string& server) {
    AgentOptions o;
    o.server = server;
    o.join_token = kJoinToken;
    o.name = "node-a";
    o.labels = {{"zone", "a"}};
    o.work_dir = work_.string();
    o.long_poll = milliseconds(300);
    o.backoff_seed = 7;
    return o;
  }

  void StartAgent(AgentOptions o, std::unique_ptr<Discoverer> discoverer = nullptr, AgentSeams seams = {}) {
    if (!discoverer) {
      DiscoveryOptions d;
      d.fake_devices = "gpu:nvidia:A100-80G:2";
      d.node_name = o.name;
      d.real_devices = false;
      auto made = MakeDiscoverer(d);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      discoverer = std::move(*made);
    }
    agent_ = std::make_unique<Agent>(std::move(o), clock_, std::move(discoverer), std::move(seams));
    ASSERT_TRUE(agent_->Start().ok());
  }

  FakeServer& Serve(int port = 0) {
    server_ = std::make_unique<FakeServer>(port);
    return *server_;
  }

  ManualClock clock_;
  fs::path work_;
  std::unique_ptr<FakeServer> server_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentTest, RegistersWithItsDevicesAndTheFakeMarks) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  ASSERT_TRUE(agent_->WaitRegistered(milliseconds(15000)));
  json reg = server.With([](FakeServer& s) { return s.registrations_.at(0); });
  EXPECT_EQ(reg["name"], "node-a");
  EXPECT_EQ(reg["labels"]["zone"], "a");
  EXPECT_EQ(reg["simulated"], true);
  EXPECT_GT(reg["cpuMilli"].get<int64_t>(), 0);
  EXPECT_GT(reg["memoryBytes"].get<int64_t>(), 0);
  ASSERT_EQ(reg["devices"].size(), 2u);
  EXPECT_EQ(reg["devices"][1]["flavor"], "gpu/nvidia/A100-80G");
  EXPECT_EQ(reg["devices"][1]["index"], 1);
  EXPECT_EQ(reg["devices"][1]["simulated"], true);
  EXPECT_EQ(reg["devices"][1]["memoryBytes"], int64_t{80} << 30);
  EXPECT_EQ(reg["devices"][1]["health"], "Healthy");
  EXPECT_TRUE(reg["tasks"].empty());
  // The node credential works: the long poll is answered.
  EXPECT_TRUE(Eventually([&] { return server.With([](FakeServer& s) { return s.polls_ > 0; }); }));
}

TEST_F(AgentTest, RunStartsOnceEvenWhenRepublished) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "echo $ABACUS_TASK_ID"}),
                              RunTask("wl.0.1.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.1.1", "Running").has_value(); }));
  int pid = (*server.Last("wl.0.1.1", "Running"))["pid"];
  // Republished (new versions, same ids), after one of them already exited: nothing restarts.
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "echo $ABACUS_TASK_ID"}),
                              RunTask("wl.0.1.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Applied(); }));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "echo $ABACUS_TASK_ID"}),
                              RunTask("wl.0.1.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Applied(); }));
  EXPECT_EQ(agent_->counters().tasks_started, 2);
  EXPECT_EQ(agent_->Task("wl.0.1.1")->pid, pid);
  auto exited = *server.Last("wl.0.0.1", "Exited");
  EXPECT_EQ(exited["exitCode"], 0);
  EXPECT_EQ(exited["message"], "exited 0");
}

TEST_F(AgentTest, StopSendsTheSignalAndReportsExitedStopped) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  json stop = RunTask("wl.0.0.1", {"sleep", "60"}, "stop");
  stop["stopSignal"] = "SIGINT";
  server.Publish(json::array({stop}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  json exited = *server.Last("wl.0.0.1", "Exited");
  EXPECT_EQ(exited["stopped"], true);
  EXPECT_EQ(exited["signal"], SIGINT);
  EXPECT_EQ(exited["message"], "killed by SIGINT");
}

TEST_F(AgentTest, AVanishedTaskIsStoppedAndEscalatesOnTheClock) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  // Ignores SIGTERM: only the SIGKILL after the 10 s grace (on the manual clock) ends it.
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "trap '' TERM; sleep 60 & wait; sleep 60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  server.Publish(json::array());
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Stopping").has_value(); }));
  EXPECT_FALSE(server.Last("wl.0.0.1", "Exited").has_value());
  clock_.Advance(seconds(11));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  json exited = *server.Last("wl.0.0.1", "Exited");
  EXPECT_EQ(exited["signal"], SIGKILL);
  EXPECT_EQ(exited["message"], "killed by SIGKILL after grace");
}

TEST_F(AgentTest, AnExitedStatusIsReReportedUntilTheTaskLeavesTheAssignment) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "exit 3"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  EXPECT_EQ((*server.Last("wl.0.0.1", "Exited"))["exitCode"], 3);
  auto heartbeat_tasks = [&](size_t i) {
    return server.With([i](FakeServer& s) { return s.heartbeats_.size() > i ? s.heartbeats_[i]["tasks"] : json(); });
  };
  for (size_t i = 0; i < 2; ++i) {
    clock_.Advance(seconds(5));
    ASSERT_TRUE(Eventually([&] { return !heartbeat_tasks(i).is_null(); }));
    json tasks = heartbeat_tasks(i);
    ASSERT_EQ(tasks.size(), 1u);
    EXPECT_EQ(tasks[0]["taskId"], "wl.0.0.1");
    EXPECT_EQ(tasks[0]["phase"], "Exited");
  }
  EXPECT_TRUE(fs::exists(work_ / "tasks/wl.0.0.1"));
  server.Publish(json::array());
  ASSERT_TRUE(Eventually([&] { return !fs::exists(work_ / "tasks/wl.0.0.1"); }));
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return !heartbeat_tasks(2).is_null(); }));
  EXPECT_TRUE(heartbeat_tasks(2).empty());
}

TEST_F(AgentTest, LogsAreShippedBeforeExitedIsReported) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "echo out; echo err >&2; exit 1"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  auto at_exit = server.With([](FakeServer& s) { return s.logs_at_exit_["wl.0.0.1"]; });
  EXPECT_EQ(at_exit["wl.0.0.1.stdout"], "out\n");
  EXPECT_EQ(at_exit["wl.0.0.1.stderr"], "err\n");
}

// Every task gets a private ABACUS_RESULTS_DIR; what it wrote there as results.json (or the
// assignment's resultsFile) goes with its Exited status, a file over the cap as an error.
TEST_F(AgentTest, ResultsWrittenToTheResultsDirRideWithExited) {
  FakeServer& server = Serve();
  AgentOptions o = Options(server.url());
  o.work_dir = fs::relative(work_).string();  // the variable is absolute all the same
  ASSERT_FALSE(o.work_dir.empty());
  StartAgent(o);
  json named = RunTask("wl.0.3.1", {"sh", "-c", "echo '{\"acc\": 0.7}' > \"$ABACUS_RESULTS_DIR/mmlu.json\""});
  named["resultsFile"] = "mmlu.json";
  server.Publish(json::array(
      {RunTask("wl.0.0.1", {"sh", "-c",
                            "echo \"$ABACUS_RESULTS_DIR\"; printf '{\"metrics\": {\"accuracy\": 0.81}}' > "
                            "\"$ABACUS_RESULTS_DIR/results.json\""}),
       RunTask("wl.0.1.1", {"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' ' ' > \"$ABACUS_RESULTS_DIR/results.json\""}),
       RunTask("wl.0.2.1", {"true"}), named}));
  for (const char* id : {"wl.0.0.1", "wl.0.1.1", "wl.0.2.1", "wl.0.3.1"}) {
    ASSERT_TRUE(Eventually([&] { return server.Last(id, "Exited").has_value(); })) << id;
  }
  json ok = *server.Last("wl.0.0.1", "Exited");
  EXPECT_EQ(ok["exitCode"], 0);
  EXPECT_EQ(ok["results"], R"({"metrics": {"accuracy": 0.81}})");
  EXPECT_FALSE(ok.contains("resultsError"));
  // A private directory of the task, outside its working directory.
  fs::path dir = (fs::absolute(work_) / "tasks/wl.0.0.1/results").lexically_normal();
  auto logs = server.With([](FakeServer& s) { return s.logs_at_exit_["wl.0.0.1"]; });
  EXPECT_EQ(logs["wl.0.0.1.stdout"], dir.string() + "\n");
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);

  json big = *server.Last("wl.0.1.1", "Exited");
  EXPECT_FALSE(big.contains("results"));
  EXPECT_NE(big.value("resultsError", "").find("300000 bytes, more than the 262144 allowed"), std::string::npos)
      << big.dump();
  json none = *server.Last("wl.0.2.1", "Exited");
  EXPECT_FALSE(none.contains("results"));
  EXPECT_FALSE(none.contains("resultsError"));
  EXPECT_EQ((*server.Last("wl.0.3.1", "Exited"))["results"], "{\"acc\": 0.7}\n");
  // Heartbeats repeat the status with its results until the task leaves the assignment.
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return server.With([](FakeServer& s) { return !s.heartbeats_.empty(); }); }));
  json tasks = server.With([](FakeServer& s) { return s.heartbeats_.front()["tasks"]; });
  bool carried = false;
  for (const auto& t : tasks) carried |= t["taskId"] == "wl.0.0.1" && t.value("results", "") == ok["results"];
  EXPECT_TRUE(carried) << tasks.dump();
}

TEST_F(AgentTest, LogsOfARunningTaskGoEverySecondAndResendAfterA409) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  fs::path gate = work_ / "gate";
  server.Publish(json::array({RunTask("wl.0.0.1", {"sh", "-c", "echo one; while [ ! -e " + gate.string() +
                                                               " ]; do sleep 0.01; done; echo two; sleep 60"})}));
  auto stdout_log = [&] { return server.With([](FakeServer& s) { return s.logs_["wl.0.0.1.stdout"]; }); };
  ASSERT_TRUE(Eventually([&] {
    clock_.Advance(seconds(1));
    return stdout_log() == "one\n";
  }));
  // The server loses what it had (say, a restore from backup): the next chunk is refused with
  // 409 and the agent resends everything from the server's size.
  server.DropLogs();
  std::ofstream(gate) << "go";
  ASSERT_TRUE(Eventually([&] {
    clock_.Advance(seconds(1));
    return stdout_log() == "one\ntwo\n";
  }));
  EXPECT_GE(server.With([](FakeServer& s) { return s.log_conflicts_; }), 1);
}

TEST_F(AgentTest, BacksOffOnADeadServerAndComesBackWhenItAnswers) {
  int port = FreePort();
  StartAgent(Options("http://127.0.0.1:" + std::to_string(port)));
  ASSERT_TRUE(Eventually([&] { return agent_->counters().connect_failures >= 1; }));
  Duration ceiling = milliseconds(100);
  for (int i = 1; i <= 8; ++i) {
    ASSERT_TRUE(Eventually([&] { return agent_->counters().backoffs == i; }));
    AgentCounters c = agent_->counters();
    ASSERT_EQ(c.register_attempts, i);
    EXPECT_GE(c.last_backoff, ceiling / 2) << "attempt " << i;
    EXPECT_LE(c.last_backoff, ceiling) << "attempt " << i;
    // No new attempt before the clock reaches the backoff.
    clock_.Advance(c.last_backoff / 4);
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_EQ(agent_->counters().register_attempts, i);
    clock_.Advance(c.last_backoff);
    ASSERT_TRUE(Eventually([&] { return agent_->counters().register_attempts == i + 1; }));
    ASSERT_TRUE(Eventually([&] { return agent_->counters().connect_failures == i + 1; }));
    ceiling = std::min<Duration>(ceiling * 2, seconds(5));
  }
  EXPECT_LE(agent_->counters().last_backoff, seconds(5));
  FakeServer& server = Serve(port);
  ASSERT_GT(server.port(), 0);
  clock_.Advance(seconds(5));
  ASSERT_TRUE(agent_->WaitRegistered(milliseconds(15000)));
}

TEST_F(AgentTest, RegistersAgainWhenTheCredentialIsRejectedAndReportsItsTasks) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  server.ForgetNode();
  ASSERT_TRUE(Eventually([&] { return agent_->counters().registrations == 2; }));
  json reg = server.With([](FakeServer& s) { return s.registrations_.at(1); });
  ASSERT_EQ(reg["tasks"].size(), 1u);
  EXPECT_EQ(reg["tasks"][0]["taskId"], "wl.0.0.1");
  EXPECT_EQ(reg["tasks"][0]["phase"], "Running");
  // The same assignment again from the "restarted" server starts nothing.
  server.Publish(json::array({RunTask("wl.0.0.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Applied(); }));
  EXPECT_EQ(agent_->counters().tasks_started, 1);
}

TEST_F(AgentTest, OrphansOfAPreviousLifeAreKilledAndReportedLost) {
  // A task of a previous life: a process group leader with a pid file.
  auto spawned = RealProcessOs::Get().Spawn({"/bin/sleep", {"sleep", "1000"}, {}, work_.string(), "/dev/null", "/dev/null", {}, {}});
  ASSERT_TRUE(spawned.ok()) << spawned.status().ToString();
  int pid = *spawned;
  fs::create_directories(work_ / "tasks/wl.9.0.1");
  ASSERT_TRUE(WritePidFile((work_ / "tasks/wl.9.0.1").string(), pid).ok());
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(agent_->WaitRegistered(milliseconds(15000)));
  json reg = server.With([](FakeServer& s) { return s.registrations_.at(0); });
  ASSERT_EQ(reg["tasks"].size(), 1u);
  EXPECT_EQ(reg["tasks"][0]["taskId"], "wl.9.0.1");
  EXPECT_EQ(reg["tasks"][0]["phase"], "Lost");
  // Never started again, even if a stale assignment still lists it.
  server.Publish(json::array({RunTask("wl.9.0.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Applied(); }));
  EXPECT_EQ(agent_->counters().tasks_started, 0);
}

TEST_F(AgentTest, AStartFailureIsReportedAsExited) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"no-such-command-abacus"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  json exited = *server.Last("wl.0.0.1", "Exited");
  EXPECT_EQ(exited["exitCode"], 127);
  EXPECT_NE(exited["message"].get<std::string>().find("cannot start"), std::string::npos);
}

TEST_F(AgentTest, HeartbeatCarriesDeviceUtilizationAndUsage) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  ASSERT_TRUE(agent_->WaitRegistered(milliseconds(15000)));
  ASSERT_TRUE(agent_->SetSimulatedUtilization("SIM-nvidia-A100-80G-node-a-1", 83, 123));
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return agent_->counters().heartbeats > 0; }));
  json hb = server.With([](FakeServer& s) { return s.heartbeats_.at(0); });
  EXPECT_EQ(hb["node"], "node-a");
  ASSERT_EQ(hb["devices"].size(), 2u);
  EXPECT_EQ(hb["devices"][1]["health"], "Healthy");
  EXPECT_DOUBLE_EQ(hb["devices"][1]["utilization"].get<double>(), 0.83);
  EXPECT_EQ(hb["devices"][1]["memoryUsedBytes"], 123);
  EXPECT_FALSE(hb.contains("inventory"));
}

// A health watcher whose faults the test sets (NvmlHealthWatcher in production).
class ScriptedWatcher final : public DeviceHealthWatcher {
 public:
  explicit ScriptedWatcher(std::shared_ptr<std::map<std::string, std::string>> faults) : faults_(std::move(faults)) {}
  std::map<std::string, std::string> Poll() override { return *faults_; }

 private:
  std::shared_ptr<std::map<std::string, std::string>> faults_;
};

TEST_F(AgentTest, HeartbeatReportsWatchedFaultsWithTheirReason) {
  FakeServer& server = Serve();
  auto devices = std::make_shared<std::vector<Device>>();
  for (int i = 0; i < 2; ++i) {
    Device d;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.flavor = *Flavor::Parse("gpu/nvidia/H100-80G");
    devices->push_back(d);
  }
  auto faults = std::make_shared<std::map<std::string, std::string>>();
  AgentSeams seams;
  seams.health_watcher = std::make_unique<ScriptedWatcher>(faults);
  (*faults)["GPU-1"] = "XID 79: GPU has fallen off the bus";
  StartAgent(Options(server.url()), std::make_unique<ScriptedDiscoverer>(devices), std::move(seams));
  ASSERT_TRUE(agent_->WaitRegistered(milliseconds(15000)));
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return agent_->counters().heartbeats > 0; }));
  json hb = server.With([](FakeServer& s) { return s.heartbeats_.at(0); });
  ASSERT_EQ(hb["devices"].size(), 2u);
  EXPECT_EQ(hb["devices"][0]["health"], "Healthy");
  EXPECT_EQ(hb["devices"][1]["health"], "Unhealthy");
  EXPECT_EQ(hb["devices"][1]["healthReason"], "XID 79: GPU has fallen off the bus");
}

TEST_F(AgentTest, RediscoverySendsTheInventoryOnceWhenDevicesChanged) {
  FakeServer& server = Serve();
  auto devices = std::make_shared<std::vector<Device>>();
  for (int i = 0; i < 2; ++i) {
    Device d;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.flavor = *Flavor::Parse("gpu/nvidia/H100-80G");
    d.memory_bytes = int64_t{80} << 30;
    devices->push_back(d);
  }
  StartAgent(Options(server.url()), std::make_unique<ScriptedDiscoverer>(devices));
  ASSERT_TRUE(agent_->WaitRegistered(milliseconds(15000)));
  EXPECT_EQ(server.With([](FakeServer& s) { return s.registrations_.at(0)["simulated"]; }), false);
  auto heartbeat = [&](size_t i) {
    return server.With([i](FakeServer& s) { return s.heartbeats_.size() > i ? s.heartbeats_[i] : json(); });
  };
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return !heartbeat(0).is_null(); }));
  EXPECT_FALSE(heartbeat(0).contains("inventory"));  // nothing changed

  (*devices)[1].health = DeviceHealth::kUnhealthy;  // say, NVML lost the GPU
  clock_.Advance(seconds(60));                       // re-discovery (and a heartbeat) due
  ASSERT_TRUE(Eventually([&] { return !heartbeat(1).is_null(); }));
  size_t with_inventory = 0;
  for (size_t i = 1; i < 4 && with_inventory == 0; ++i) {
    if (i > 1) clock_.Advance(seconds(5));
    ASSERT_TRUE(Eventually([&] { return !heartbeat(i).is_null(); }));
    if (heartbeat(i).contains("inventory")) with_inventory = i;
  }
  ASSERT_GT(with_inventory, 0u);
  json hb = heartbeat(with_inventory);
  ASSERT_EQ(hb["inventory"].size(), 2u);
  EXPECT_EQ(hb["inventory"][1]["health"], "Unhealthy");
  EXPECT_EQ(hb["devices"][1]["health"], "Unhealthy");
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return !heartbeat(with_inventory + 1).is_null(); }));
  EXPECT_FALSE(heartbeat(with_inventory + 1).contains("inventory"));  // sent once
}

TEST_F(AgentTest, ShutdownStopsTasksWithTheirGraceAndReportsThem) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sleep", "60"})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  agent_->Shutdown();
  auto exited = server.Last("wl.0.0.1", "Exited");
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ((*exited)["stopped"], true);
  EXPECT_EQ((*exited)["signal"], SIGTERM);
  EXPECT_FALSE(fs::exists(work_ / "tasks/wl.0.0.1/pid"));
}

// ---- probes ----

// A task's service: answers `path` with 503 until healthy, then 200; counts the requests.
class TaskService {
 public:
  explicit TaskService(const std::string& path) {
    svr_.Get(path, [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      ++requests_;
      res.status = healthy_ ? 200 : 503;
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (port_ > 0 && !svr_.is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  ~TaskService() {
    svr_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  void SetHealthy() {
    std::lock_guard lock(mu_);
    healthy_ = true;
  }
  int requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  bool healthy_ = false;
  int requests_ = 0;
};

json Probe(json kind, int period, int failure_threshold, int success_threshold, int initial_delay = 0) {
  kind["initialDelaySeconds"] = initial_delay;
  kind["periodSeconds"] = period;
  kind["timeoutSeconds"] = 1;
  kind["failureThreshold"] = failure_threshold;
  kind["successThreshold"] = success_threshold;
  return kind;
}

json InferenceTask(const std::string& id, json probes) {
  json t = RunTask(id, {"sleep", "60"});
  t["kind"] = "InferenceService";
  t["probes"] = std::move(probes);
  return t;
}

TEST_F(AgentTest, ReadinessTurnsTrueAfterTheSuccessThresholdAndIsSentAtOnce) {
  FakeServer& server = Serve();
  TaskService service("/health");
  ASSERT_GT(service.port(), 0);
  StartAgent(Options(server.url()));
  std::string url = "http://127.0.0.1:" + std::to_string(service.port()) + "/health";
  server.Publish(json::array({InferenceTask(
      "wl.0.0.1", {{"readiness", Probe({{"http", {{"path", "/health"}, {"port", service.port()}}}}, 10, 1, 2, 3)}})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  json first = *server.Last("wl.0.0.1", "Running");
  EXPECT_EQ(first["ready"], false);  // not ready until the probe says so
  EXPECT_FALSE(first.contains("live"));
  EXPECT_FALSE(first.contains("probeMessage"));
  auto attempts = [&] { return agent_->counters().probe_attempts; };
  EXPECT_EQ(attempts(), 0);  // the initial delay has not passed on the clock
  // The task of the latest heartbeat (null before the first).
  auto last_beat = [&] {
    return server.With([](FakeServer& s) { return s.heartbeats_.empty() ? json() : s.heartbeats_.back()["tasks"][0]; });
  };

  // 1) After the initial delay: 503. Still not ready; the message rides with the next heartbeat.
  clock_.Advance(seconds(3));
  ASSERT_TRUE(Eventually([&] { return attempts() == 1; }));
  EXPECT_EQ(service.requests(), 1);
  clock_.Advance(seconds(2));  // the first heartbeat
  ASSERT_TRUE(Eventually([&] { return !last_beat().is_null(); }));
  EXPECT_EQ(last_beat()["ready"], false);
  EXPECT_EQ(last_beat()["probeMessage"], "readiness: GET " + url + ": HTTP 503");

  // 2) Healthy now: one success of two is not enough.
  service.SetHealthy();
  clock_.Advance(seconds(10));
  ASSERT_TRUE(Eventually([&] { return attempts() == 2; }));
  for (const json& s : server.StatusesOf("wl.0.0.1")) EXPECT_EQ(s["ready"], false) << s.dump();

  // 3) The second success: ready, reported at once by a status report.
  clock_.Advance(seconds(10));
  ASSERT_TRUE(Eventually([&] { return attempts() == 3; }));
  ASSERT_TRUE(Eventually([&] {
    auto last = server.Last("wl.0.0.1", "Running");
    return last && (*last)["ready"] == true;
  }));
  json ready = *server.Last("wl.0.0.1", "Running");
  EXPECT_FALSE(ready.contains("probeMessage"));  // every probe passes
  EXPECT_EQ(ready["pid"], first["pid"]);
  // Heartbeats repeat it.
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return last_beat()["ready"] == true; }));

  // Stopped: not ready any more (Stopping), and an Exited status carries neither field.
  server.Publish(json::array({RunTask("wl.0.0.1", {"sleep", "60"}, "stop")}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Exited").has_value(); }));
  EXPECT_FALSE(server.Last("wl.0.0.1", "Exited")->contains("ready"));
  if (auto stopping = server.Last("wl.0.0.1", "Stopping")) {
    EXPECT_EQ((*stopping)["ready"], false);
  }
}

TEST_F(AgentTest, LivenessTurnsFalseAfterTheFailureThresholdAndTheTaskKeepsRunning) {
  FakeServer& server = Serve();
  int closed = FreePort();
  StartAgent(Options(server.url()));
  json liveness = Probe({{"tcp", {{"port", closed}}}}, 10, 3, 1);
  server.Publish(json::array({InferenceTask("wl.0.0.1", {{"liveness", liveness}})}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  json first = *server.Last("wl.0.0.1", "Running");
  EXPECT_EQ(first["live"], true);  // alive until the probe proves otherwise
  EXPECT_FALSE(first.contains("ready"));
  auto attempts = [&] { return agent_->counters().probe_attempts; };
  // No initial delay: the first attempt is due at the start.
  ASSERT_TRUE(Eventually([&] { return attempts() == 1; }));
  for (int i = 2; i <= 3; ++i) {
    for (const json& s : server.StatusesOf("wl.0.0.1")) EXPECT_EQ(s["live"], true) << "after " << i - 1 << " failures";
    clock_.Advance(seconds(10));
    ASSERT_TRUE(Eventually([&] { return attempts() == i; }));
  }
  ASSERT_TRUE(Eventually([&] {
    auto last = server.Last("wl.0.0.1", "Running");
    return last && (*last)["live"] == false;
  }));
  json dead = *server.Last("wl.0.0.1", "Running");
  EXPECT_EQ(dead["probeMessage"], "liveness: tcp 127.0.0.1:" + std::to_string(closed) + ": connection refused");
  // The server decides what to do; the agent neither stops nor restarts the task.
  EXPECT_EQ(agent_->Task("wl.0.0.1")->phase, TaskPhase::kRunning);
  EXPECT_EQ(agent_->counters().tasks_started, 1);
  EXPECT_FALSE(server.Last("wl.0.0.1", "Stopping").has_value());
}

TEST_F(AgentTest, ATaskWithoutProbesCarriesNeitherField) {
  FakeServer& server = Serve();
  StartAgent(Options(server.url()));
  server.Publish(json::array({RunTask("wl.0.0.1", {"sleep", "60"}), InferenceTask("wl.1.0.1", json::object())}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.1.0.1", "Running").has_value(); }));
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Eventually([&] { return agent_->counters().heartbeats > 0; }));
  std::vector<json> reported = server.StatusesOf("wl.0.0.1");
  for (const json& s : server.StatusesOf("wl.1.0.1")) reported.push_back(s);
  for (const json& s : server.With([](FakeServer& f) { return f.heartbeats_.at(0)["tasks"]; })) reported.push_back(s);
  ASSERT_GE(reported.size(), 4u);
  for (const json& s : reported) {
    EXPECT_FALSE(s.contains("ready")) << s.dump();
    EXPECT_FALSE(s.contains("live")) << s.dump();
    EXPECT_FALSE(s.contains("probeMessage")) << s.dump();
  }
  EXPECT_EQ(agent_->counters().probe_attempts, 0);
}

// ---- the client alone ----

TEST(AgentClientTest, MapsAnswersToStatuses) {
  FakeServer server;
  AgentClient client({server.url()});
  RegisterRequest r;
  r.name = "n";
  EXPECT_EQ(client.Register("wrong", r).status().code(), StatusCode::kUnauthenticated);
  auto answer = client.Register(kJoinToken, r);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->heartbeat_seconds, 5);
  EXPECT_EQ(client.Heartbeat({"n", {}, {}, {}, {}}).code(), StatusCode::kNotFound);  // no node token yet
  client.SetNodeToken(answer->node_token);
  EXPECT_TRUE(client.Heartbeat({"n", {}, {}, {}, {}}).ok());
  auto a = client.Assignments("n", 0, milliseconds(0));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->version, 0);
  auto ack = client.SendLog({"n", "t", LogStream::kStdout, 5, "x"});
  ASSERT_TRUE(ack.ok());
  EXPECT_FALSE(ack->accepted);
  EXPECT_EQ(ack->server_size, 0);

  AgentClient dead({"127.0.0.1:" + std::to_string(FreePort())});
  EXPECT_EQ(dead.Register(kJoinToken, r).status().code(), StatusCode::kUnavailable);
  // A URL no client can be made for says which URL and what was expected.
  AgentClient bad({"http://127.0.0.1:99999"});
  Status refused = bad.Register(kJoinToken, r).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.ToString();
  EXPECT_NE(refused.message().find("http://127.0.0.1:99999"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find("expected http://HOST:PORT"), std::string::npos) << refused.ToString();
  EXPECT_EQ(StatusFromHttp(503, "").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromHttp(400, R"({"error": {"code": "bad", "message": "no name"}})"),
            InvalidArgument("no name"));
}

}  // namespace
}  // namespace abacus::agent

namespace abacus::agent {
namespace {

// Issue 20.9: cut off from every server for the node timeout, the agent fences its tasks with
// their fencing signal and grace; once a server answers again it reports them Lost (NodeLost),
// so the server requeues them instead of counting a failure.
TEST_F(AgentTest, CutOffForTheNodeTimeoutItFencesItsTasksAndReportsThemLost) {
  FakeServer& server = Serve();
  const int port = server.port();
  AgentOptions o = Options(server.url());
  o.fence_after = seconds(30);
  StartAgent(o);
  // In the task's own work directory: as root the task runs as a task user (docs/agent.md, "Task
  // users"), which may write there and not in the agent's work directory.
  const std::string mark = (work_ / "tasks/wl.0.0.1/work/fenced").string();
  const std::string armed = (work_ / "tasks/wl.0.0.1/work/armed").string();
  json task = RunTask("wl.0.0.1", {"sh", "-c", "trap 'touch " + mark + "; exit 0' USR1; touch " + armed +
                                                   "; while true; do sleep 0.05; done"});
  task["fencingSignal"] = "SIGUSR1";
  task["fencingGraceSeconds"] = 5;
  server.Publish(json::array({task}));
  ASSERT_TRUE(Eventually([&] { return server.Last("wl.0.0.1", "Running").has_value(); }));
  ASSERT_TRUE(Eventually([&] { return fs::exists(armed); }));  // its trap is set
  server_.reset();  // no server any more
  clock_.Advance(seconds(31));
  ASSERT_TRUE(Eventually([&] { return agent_->counters().fences == 1; }));
  EXPECT_EQ(agent_->counters().tasks_fenced, 1);
  ASSERT_TRUE(Eventually([&] { return fs::exists(mark); })) << "the task did not get its fencing signal";
  // A server answers again (on the same address): the task is reported Lost, NodeLost.
  FakeServer& back = Serve(port);
  auto lost = [&]() -> std::optional<json> {
    if (auto s = back.Last("wl.0.0.1", "Lost")) return s;
    return back.With([](FakeServer& s) -> std::optional<json> {
      for (const auto& r : s.registrations_) {
        for (const auto& t : r["tasks"]) {
          if (t["taskId"] == "wl.0.0.1" && t["phase"] == "Lost") return t;
        }
      }
      return std::nullopt;
    });
  };
  ASSERT_TRUE(Eventually([&] {
    clock_.Advance(seconds(1));  // through the reconnection backoff
    return lost().has_value();
  }));
  EXPECT_EQ((*lost())["lostReason"], "NodeLost");
  EXPECT_NE((*lost())["message"].get<std::string>().find("fenced"), std::string::npos) << lost()->dump();
}

}  // namespace
}  // namespace abacus::agent

// Real containers (issue 24): a real server and agent run TrainingJobs in a busybox image under
// podman (PodmanSandbox: its own config and storage in a temporary folder). One job checks, from
// inside the container, its limits (cgroup memory limit and CPU quota), the engine's default
// seccomp filter and no-new-privileges, the isolated network class, device visibility, a
// read-only data mount, a read-only root with a writable workspace, a secret as a 0400 file, that
// the task's environment does not steer the engine, its logs and its exit code. Another one gets
// its checkpoint signal on cancel; a third ignores it and its container is gone after the grace.
// A secret env var reaches the container while no process's command line holds its value, and a
// task of the isolated class cannot reach a host listener that a task of the default class can.
// Skipped with the engine's reason where podman cannot run, unless ABACUS_REQUIRE_PODMAN=1.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "govern/crypto.h"
#include "podman_sandbox.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

constexpr char kIsolated[] = "kind: AdmissionPolicy\nname: acme-isolated\ntenants: [acme]\nspec:\n  network: isolated\n";

class ContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const PodmanSandbox& podman = PodmanSandbox::Get();
    if (podman.usable()) return;
    if (PodmanSandbox::Required()) FAIL() << "ABACUS_REQUIRE_PODMAN=1 but podman cannot run: " << podman.reason();
    GTEST_SKIP() << podman.reason();
  }
};

std::string Job(const std::string& name, const std::string& spec_lines, const std::string& script) {
  std::string indented;
  size_t start = 0;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string::npos) end = script.size();
    indented += "      " + script.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return "kind: TrainingJob\nname: " + name + "\nproject: acme/ml\nqueue: train\nspec:\n  image: " +
         PodmanSandbox::kImage + "\n" + spec_lines + "  command:\n    - sh\n    - -c\n    - |\n" + indented +
         "  taskGroups:\n    - name: main\n      resources: {cpu: 500m, memory: 64Mi}\n";
}

std::string StateOf(cli::ApiClient& api, const std::string& id) {
  return api.Get("/api/v1/workloads/" + id).body.value("state", "");
}

bool Finished(const std::string& state) { return state == "Succeeded" || state == "Failed" || state == "Cancelled"; }

// The first process whose command line holds `text` ("pid: cmdline"), or "".
std::string ProcessWithArgument(const std::string& text) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(text) != std::string::npos) {
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      return pid + ": " + cmdline;
    }
  }
  return "";
}

// A TCP listener of the test on `address`: answers each connection with a line and counts them.
class Listener {
 public:
  explicit Listener(const std::string& address) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = 0;
    if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // closed by the destructor
        ++accepted_;
        static constexpr char kReply[] = "host-listener-reply\n";
        (void)!::write(c, kReply, sizeof kReply - 1);
        ::close(c);
      }
    });
  }
  ~Listener() {
    if (fd_ < 0) return;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  int fd_ = -1, port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

TEST_F(ContainerTest, ATaskRunsInItsImageWithLimitsMountsSecretsAndNoNetwork) {
  std::cout << "podman: a container start (run --rm true) took " << PodmanSandbox::Get().start_seconds() << " s\n";
  TempDir dir, data;
  { std::ofstream(data.path() + "/input.txt") << "input-data-line\n"; }
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/policies", kIsolated, "application/yaml").status, 200);
  auto secret = admin.Post("/api/v1/secrets",
                           json{{"name", "db-creds"}, {"project", "acme/ml"}, {"stringData", {{"password", "s3cret-value"}}}}.dump(),
                           "application/json");
  ASSERT_EQ(secret.status, 201) << secret.text;
  // A GPU node: a task with no GPU sees CUDA_VISIBLE_DEVICES set and empty.
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi");

  const std::string spec =
      "  readOnlyRootFilesystem: true\n"
      "  env:\n    - {name: CONTAINERS_CONF, value: /nonexistent/containers.conf}\n"
      "  mounts: [{path: " + data.path() + ", mountPath: /data, readOnly: true}]\n"
      "  secretMounts: [{secret: db-creds, path: db}]\n";
  const std::string script = R"SH(echo hello-from-busybox
echo "mem=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max)"
echo "cpu=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d' ' -f1 /sys/fs/cgroup/cpu.max)"
grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -d ' \t'
echo "net=$(ls /sys/class/net | tr '\n' ' ')"
echo "class=$ABACUS_NETWORK_CLASS"
[ "${CUDA_VISIBLE_DEVICES-unset}" = "" ] && echo cuda-hidden
echo "task=$ABACUS_TASK_ID"
echo "conf=$CONTAINERS_CONF"
cat /data/input.txt
touch /data/x 2>/dev/null || echo data-read-only
touch /rootfile 2>/dev/null || echo root-read-only
echo out > /workspace/out.txt && echo workspace-writable
stat -c "secret-mode=%a" "$ABACUS_SECRETS_DIR/db/password"
[ "$(cat "$ABACUS_SECRETS_DIR/db/password")" = "s3cret-value" ] && echo secret-file-ok
echo to-stderr >&2
exit 3)SH";
  auto submitted = admin.Post("/api/v1/workloads", Job("in-image", spec, script), "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["items"][0]["id"];
  ASSERT_TRUE(WaitFor([&] { return Finished(StateOf(admin, id)); }, std::chrono::seconds(90)))
      << admin.Get("/api/v1/workloads/" + id).text;
  auto w = admin.Get("/api/v1/workloads/" + id);
  EXPECT_EQ(w.body.value("state", ""), "Failed") << w.text;
  ASSERT_FALSE(w.body["placements"].empty()) << w.text;
  EXPECT_EQ(w.body["placements"][0].value("exitCode", -1), 3) << w.text;

  auto logs = admin.Get("/api/v1/workloads/" + id + "/logs");
  ASSERT_EQ(logs.status, 200);
  const std::string out = logs.body.value("content", "");
  const std::vector<std::string> wanted = {
      "hello-from-busybox", "mem=67108864", "cpu=50000", "NoNewPrivs:1", "Seccomp:2", "net=lo \n", "class=isolated",
      "cuda-hidden", "task=" + id, "conf=/nonexistent/containers.conf", "input-data-line",
      "data-read-only", "root-read-only", "workspace-writable", "secret-mode=400", "secret-file-ok"};
  for (const std::string& want : wanted) {
    EXPECT_NE(out.find(want), std::string::npos) << want << " is not in the logs:\n" << out;
  }
  auto err = admin.Get("/api/v1/workloads/" + id + "/logs?stream=stderr");
  EXPECT_EQ(err.body.value("content", ""), "to-stderr\n") << err.text;
  // --rm: nothing is left behind.
  auto left = PodmanSandbox::Get().Podman({"ps", "--all", "--quiet", "--filter", "label=abacus.task"});
  EXPECT_EQ(left.code, 0) << left.text;
  EXPECT_EQ(left.text, "");
}

TEST_F(ContainerTest, TheCheckpointSignalReachesTheTaskAndAKillAfterTheGraceRemovesTheContainer) {
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/policies", kIsolated, "application/yaml").status, 200);
  AgentProcess agent(server, "cpu-a", "");
  const std::string checkpoint = "  checkpoint: {signal: SIGUSR1, graceSeconds: 3}\n";
  auto saves = admin.Post("/api/v1/workloads",
                          Job("saves", checkpoint,
                              "trap 'echo checkpoint-signal; exit 0' USR1\necho started\nwhile :; do sleep 1; done"),
                          "application/yaml");
  ASSERT_EQ(saves.status, 201) << saves.text;
  auto deaf = admin.Post("/api/v1/workloads",
                         Job("deaf", checkpoint, "trap '' USR1 TERM\necho started\nwhile :; do sleep 1; done"),
                         "application/yaml");
  ASSERT_EQ(deaf.status, 201) << deaf.text;
  const std::string saves_id = saves.body["items"][0]["id"], deaf_id = deaf.body["items"][0]["id"];
  auto started = [&](const std::string& id) {
    return admin.Get("/api/v1/workloads/" + id + "/logs").text.find("started") != std::string::npos;
  };
  ASSERT_TRUE(WaitFor([&] { return started(saves_id) && started(deaf_id); }, std::chrono::seconds(60)))
      << admin.Get("/api/v1/workloads/" + saves_id).text << admin.Get("/api/v1/workloads/" + deaf_id).text;
  auto running = PodmanSandbox::Get().Podman({"ps", "--quiet", "--filter", "label=abacus.task"});
  EXPECT_EQ(std::count(running.text.begin(), running.text.end(), '\n'), 2) << running.text;

  for (const std::string& id : {saves_id, deaf_id}) {
    auto r = admin.Post("/api/v1/workloads/" + id + "/cancel", json{{"reason", "test"}}.dump(), "application/json");
    ASSERT_EQ(r.status, 200) << r.text;
  }
  auto stopped = [&](const std::string& id) {
    auto w = admin.Get("/api/v1/workloads/" + id);
    return !w.body["placements"].empty() && w.body["placements"][0].value("phase", "") == "Exited";
  };
  ASSERT_TRUE(WaitFor([&] { return stopped(saves_id) && stopped(deaf_id); }, std::chrono::seconds(60)))
      << admin.Get("/api/v1/workloads/" + saves_id).text << admin.Get("/api/v1/workloads/" + deaf_id).text;
  EXPECT_NE(admin.Get("/api/v1/workloads/" + saves_id + "/logs").text.find("checkpoint-signal"), std::string::npos)
      << admin.Get("/api/v1/workloads/" + saves_id + "/logs").text;
  // The deaf one's `podman run` was killed after the grace; its container must not outlive it.
  std::string left;
  EXPECT_TRUE(WaitFor([&] {
    left = PodmanSandbox::Get().Podman({"ps", "--all", "--quiet", "--filter", "label=abacus.task"}).text;
    return left.empty();
  }, std::chrono::seconds(30)))
      << "containers left: " << left;
}

TEST_F(ContainerTest, ASecretVariableReachesTheContainerAndNoCommandLineHoldsItsValue) {
  const std::string value = "env-canary-5e0a71c3";
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  // Through apply (kind: Secret), as a user would keep it next to the rest of the project.
  auto applied = admin.Post("/api/v1/apply", "kind: Secret\nmetadata: {name: db-creds, tenant: acme, project: ml}\n"
                                             "stringData: {password: " + value + "}\n",
                            "application/yaml");
  ASSERT_EQ(applied.status, 200) << applied.text;
  AgentProcess agent(server, "cpu-a", "");
  // The script holds the value's SHA-256, never the value: its own command line must not hold it.
  const std::string spec = "  env:\n    - {name: DB_PASSWORD, secretRef: {secret: db-creds, key: password}}\n";
  const std::string script = "echo \"env-sha=$(printf %s \"$DB_PASSWORD\" | sha256sum | cut -c1-64)\"\n"
                             "echo started\nsleep 4\n";
  auto submitted = admin.Post("/api/v1/workloads", Job("env-secret", spec, script), "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["items"][0]["id"];
  auto logs = [&] { return admin.Get("/api/v1/workloads/" + id + "/logs").body.value("content", ""); };
  ASSERT_TRUE(WaitFor([&] { return logs().find("started") != std::string::npos; }, std::chrono::seconds(60)))
      << admin.Get("/api/v1/workloads/" + id).text;
  // The container runs (`podman run` and conmon are alive): no process shows the value.
  auto running = PodmanSandbox::Get().Podman({"ps", "--quiet", "--filter", "label=abacus.task=" + id + ".0.0.1"});
  EXPECT_FALSE(running.text.empty()) << "the container is not running any more: " << running.text;
  EXPECT_EQ(ProcessWithArgument(value), "");
  EXPECT_NE(logs().find("env-sha=" + govern::Sha256Hex(value)), std::string::npos) << logs();
  ASSERT_TRUE(WaitFor([&] { return Finished(StateOf(admin, id)); }, std::chrono::seconds(60)));
  EXPECT_EQ(StateOf(admin, id), "Succeeded") << admin.Get("/api/v1/workloads/" + id).text;
  EXPECT_EQ(logs().find(value), std::string::npos);
}

// The network class, for real: the test listens on the host's end of podman's default bridge
// (a host-local address: nothing leaves the machine) and on 127.0.0.1. A task of the default
// class reaches the first; an isolated one (--network=none) reaches neither; no container
// reaches the host's loopback (its 127.0.0.1 is its own).
TEST_F(ContainerTest, AnIsolatedTaskCannotReachAHostListenerThatADefaultTaskReaches) {
  auto inspect = PodmanSandbox::Get().Podman({"network", "inspect", "podman", "--format",
                                              "{{range .Subnets}}{{.Gateway}}{{end}}"});
  ASSERT_EQ(inspect.code, 0) << inspect.text;
  std::string gateway = inspect.text.substr(0, inspect.text.find_first_of(" \n"));
  auto bridge = std::make_unique<Listener>(gateway);
  if (!bridge->ok()) {
    // The bridge is made with the first container on it.
    PodmanSandbox::Get().Podman({"run", "--rm", PodmanSandbox::kImage, "true"});
    bridge = std::make_unique<Listener>(gateway);
  }
  ASSERT_TRUE(bridge->ok()) << "cannot listen on the bridge's host address " << gateway;
  Listener loopback("127.0.0.1");
  ASSERT_TRUE(loopback.ok());
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  AgentProcess agent(server, "cpu-a", "");
  const std::string script = "echo \"class=${ABACUS_NETWORK_CLASS:-default}\"\n"
                             "nc -w 3 " + gateway + " " + std::to_string(bridge->port()) +
                             " </dev/null && echo bridge-reached || echo bridge-unreachable\n"
                             "nc -w 3 127.0.0.1 " + std::to_string(loopback.port()) +
                             " </dev/null && echo loopback-reached || echo loopback-unreachable\n";
  auto run = [&](const std::string& name) {
    auto submitted = admin.Post("/api/v1/workloads", Job(name, "", script), "application/yaml");
    EXPECT_EQ(submitted.status, 201) << submitted.text;
    if (submitted.status != 201) return std::string();
    const std::string id = submitted.body["items"][0]["id"];
    EXPECT_TRUE(WaitFor([&] { return Finished(StateOf(admin, id)); }, std::chrono::seconds(90)))
        << admin.Get("/api/v1/workloads/" + id).text;
    return admin.Get("/api/v1/workloads/" + id + "/logs").body.value("content", "");
  };
  // The default class first (no policy), then the tenant's work is isolated.
  const std::string open = run("default-class");
  EXPECT_NE(open.find("class=default"), std::string::npos) << open;
  EXPECT_NE(open.find("host-listener-reply"), std::string::npos) << open;
  EXPECT_NE(open.find("bridge-reached"), std::string::npos) << open;
  EXPECT_NE(open.find("loopback-unreachable"), std::string::npos) << open;
  EXPECT_EQ(bridge->accepted(), 1);
  ASSERT_EQ(admin.Post("/api/v1/policies", kIsolated, "application/yaml").status, 200);
  const std::string closed = run("isolated-class");
  EXPECT_NE(closed.find("class=isolated"), std::string::npos) << closed;
  EXPECT_NE(closed.find("bridge-unreachable"), std::string::npos) << closed;
  EXPECT_NE(closed.find("loopback-unreachable"), std::string::npos) << closed;
  EXPECT_EQ(closed.find("host-listener-reply"), std::string::npos) << closed;
  EXPECT_EQ(bridge->accepted(), 1) << "the isolated task reached the host";
  EXPECT_EQ(loopback.accepted(), 0) << "a container reached the host's loopback";
}

}  // namespace
}  // namespace abacus::testing

// Real containers (issue 24): a real server and agent run TrainingJobs in a busybox image under
// podman (PodmanSandbox: its own config and storage in a temporary folder). One job checks, from
// inside the container, its limits (cgroup memory limit and CPU quota), the engine's default
// seccomp filter and no-new-privileges, the isolated network class, device visibility, a
// read-only data mount, a read-only root with a writable workspace, a secret as a 0400 file, that
// the task's environment does not steer the engine, its logs and its exit code. Another one gets
// its checkpoint signal on cancel; a third ignores it and its container is gone after the grace.
// Skipped with the engine's reason where podman cannot run, unless ABACUS_REQUIRE_PODMAN=1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace abacus::testing

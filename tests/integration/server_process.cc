#include "server_process.h"
#include "child_stderr.h"
#include "cli/tls_transport.h"
#include "server/server_test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace abacus::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "abacus-it-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

void TempDir::OpenToTasks() const {
  std::filesystem::permissions(path_, std::filesystem::perms::all);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string SourcePath(const std::string& relative) { return std::string(ABACUS_SOURCE_DIR) + "/" + relative; }

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

namespace {
std::string child_stderr;  // ChildStderrTo's file; empty: the test's stderr (or /dev/null)
}  // namespace

ChildStderrTo::ChildStderrTo(std::string path) { child_stderr = std::move(path); }
ChildStderrTo::~ChildStderrTo() { child_stderr.clear(); }

// The tests' clients speak https:// as the full binary's do (abacus-core registers it in Main).
[[maybe_unused]] const bool kTlsRegistered = (cli::RegisterTlsTransport(), true);

pid_t SpawnChild(std::vector<std::string> args, bool silence_stderr) {
  const std::string log = child_stderr;
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // A test binary that is killed (timeout, Ctrl-C) takes its servers and agents with it:
    // otherwise they keep its output pipe open and `ctest | tail` never ends.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    if (!log.empty()) {
      dup2(open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600), 2);
    } else if (silence_stderr) {
      dup2(devnull, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

ServerProcess::ServerProcess(std::string data_dir, std::vector<std::string> extra_args)
    : data_(std::move(data_dir)), extra_(std::move(extra_args)) {
  Start();
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Terminate();
}

int StopChild(pid_t& pid, int sig);

void ServerProcess::Start() {
  std::string url_file = data_ + "/server.url";
  std::filesystem::remove(url_file);
  std::vector<std::string> args = {ABACUS_BINARY, "server", "--data", data_};
  // Any free port, unless the test names an address (a restart its agents must find again).
  if (std::find(extra_.begin(), extra_.end(), "--listen") == extra_.end()) {
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  }
  // 24 HTTP workers (not the default 96) unless the test names a number itself: many servers run
  // at once in the suite.
  if (std::find(extra_.begin(), extra_.end(), "--http-threads") == extra_.end()) {
    args.insert(args.end(), {"--http-threads", "24"});
  }
  // Never an installed /etc/abacus/server.yaml, unless the test names a config file itself.
  if (std::find(extra_.begin(), extra_.end(), "--config") == extra_.end()) {
    args.insert(args.end(), {"--config", ""});
  }
  args.insert(args.end(), extra_.begin(), extra_.end());
  pid_ = SpawnChild(std::move(args), /*silence_stderr=*/false);
  if (!WaitFor([&] { return std::filesystem::exists(url_file); }, std::chrono::seconds(30))) {
    StopChild(pid_, SIGKILL);  // a throwing constructor runs no destructor: leave nothing running
    throw std::runtime_error("server did not start");
  }
  url_ = ReadFile(url_file);
  while (!url_.empty() && url_.back() == '\n') url_.pop_back();
  token_ = ReadFile(data_ + "/admin.token");
  while (!token_.empty() && token_.back() == '\n') token_.pop_back();
}

std::string ServerProcess::join_token() const {
  std::string t = ReadFile(data_ + "/join.token");
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

// Sends `sig` to the child `pid` (when running), reaps it and forgets it; returns its exit code
// (-1 when it did not exit normally or was not running).
int StopChild(pid_t& pid, int sig) {
  if (pid <= 0) return -1;
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void ServerProcess::Kill9() { StopChild(pid_, SIGKILL); }

int ServerProcess::Terminate() { return StopChild(pid_, SIGTERM); }

int ServerProcess::Signal(int sig) { return StopChild(pid_, sig); }

AgentProcess::AgentProcess(const ServerProcess& server, std::string name, std::string fake_devices,
                           std::vector<std::string> extra_args)
    : server_(server), name_(std::move(name)), devices_(std::move(fake_devices)), extra_(std::move(extra_args)) {
  Start();
}

AgentProcess::~AgentProcess() {
  if (pid_ > 0) Terminate();
}

void AgentProcess::Start() {
  std::vector<std::string> args = {ABACUS_BINARY, "agent", "--server", server_.url(), "--token-file",
                                   server_.data_dir() + "/join.token", "--name", name_, "--work-dir",
                                   work_.path(), "--no-cgroups", "--heartbeat", "1"};
  // Real devices only through a stand-in NVML the test names; never this machine's own.
  if (std::find(extra_.begin(), extra_.end(), "--nvml-library") == extra_.end()) args.push_back("--no-real-devices");
  if (std::find(extra_.begin(), extra_.end(), "--config") == extra_.end()) args.insert(args.end(), {"--config", ""});
  if (!devices_.empty()) {
    args.push_back("--fake-devices");
    args.push_back(devices_);
  }
  args.insert(args.end(), extra_.begin(), extra_.end());
  pid_ = SpawnChild(std::move(args), /*silence_stderr=*/true);
  auto api = server_.Client();
  if (!WaitFor([&] {
        auto r = api.Get("/api/v1/nodes/" + name_);
        return r.ok() && r.body.value("state", "") == "Ready" && r.body.value("agent", false);
      })) {
    StopChild(pid_, SIGTERM);  // a throwing constructor runs no destructor: leave nothing running
    throw std::runtime_error("agent " + name_ + " did not register");
  }
}

void AgentProcess::Kill9() { StopChild(pid_, SIGKILL); }

int AgentProcess::Terminate() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);  // a stopped agent (SIGSTOP in a test) must run to end
  return StopChild(pid_, SIGTERM);
}

int AgentProcess::Signal(int sig, bool wait) {
  if (wait) return StopChild(pid_, sig);
  return pid_ > 0 ? ::kill(pid_, sig) : -1;
}

const std::string kAcmeOrg = server::testing_org::AcmeOrg("train", 8);

const char kBetaTenant[] = R"(kind: Tenant
name: beta
---
kind: Project
name: lab
tenant: beta
---
kind: User
name: bea
roles: [{role: member, project: beta/lab}]
)";

CliResult RunCli(const std::vector<std::string>& args, const std::vector<std::string>& env,
                 const std::string& stdin_text) {
  return RunProgram(ABACUS_BINARY, args, env, stdin_text);
}

CliResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                     const std::vector<std::string>& env, const std::string& stdin_text) {
  TempDir tmp;
  std::string out_path = tmp.path() + "/out", err_path = tmp.path() + "/err", in_path = tmp.path() + "/in";
  std::ofstream(in_path) << stdin_text;
  pid_t pid = fork();
  if (pid == 0) {
    int in = open(in_path.c_str(), O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    // A private HOME so that no user config file is read or written.
    setenv("HOME", tmp.path().c_str(), 1);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("ABACUS_CONFIG");
    unsetenv("ABACUS_SERVER");
    unsetenv("ABACUS_TOKEN");
    for (const auto& e : env) putenv(strdup(e.c_str()));
    std::vector<std::string> all = {binary};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

nlohmann::json H100Node(const std::string& name) {
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) {
    devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/H100-80G"}, {"memory", "80Gi"},
                       {"interconnectDomain", "nv0"}, {"runtimeVersions", {{"cuda", "12.4"}}},
                       {"driverVersion", "550.54"}});
  }
  return {{"name", name}, {"pool", "train-a100"}, {"cpu", "128"}, {"memory", "1Ti"}, {"devices", devices}};
}

}  // namespace abacus::testing

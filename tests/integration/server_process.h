// A real `abacus server` child process on a free loopback port with its own data folder, and
// helpers to wait for conditions without asserting on wall-clock time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/client.h"

namespace abacus::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  // Lets tasks write here (mode 0777; no sticky bit, so one task user may replace or remove what
  // another wrote): a root agent runs them as task users of their own (docs/agent.md, "Task
  // users"), who may not enter the 0700 directory mkdtemp makes.
  void OpenToTasks() const;

 private:
  std::string path_;
};

class ServerProcess {
 public:
  // Starts `abacus server --data DATA --listen 127.0.0.1:0 EXTRA...` and waits until it serves.
  explicit ServerProcess(std::string data_dir, std::vector<std::string> extra_args = {});
  ~ServerProcess();
  void Start();
  // SIGKILL, no shutdown at all.
  void Kill9();
  // SIGTERM and wait; returns the exit status.
  int Terminate();
  // Sends `sig` and waits for the exit: its code (-1: killed by a signal).
  int Signal(int sig);

  const std::string& url() const { return url_; }
  const std::string& token() const { return token_; }
  std::string join_token() const;
  cli::ClientConfig config() const { return {url_, token_}; }
  cli::ApiClient Client() const { return cli::ApiClient(config()); }
  const std::string& data_dir() const { return data_; }

 private:
  std::string data_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
  std::string url_, token_;
};

// A real `abacus agent` child process registered with a ServerProcess, with fake devices only
// (--no-real-devices, unless the extra arguments name an --nvml-library: then the GPUs that
// library reports too) and its own work folder.
class AgentProcess {
 public:
  // Starts `abacus agent --name NAME --fake-devices SPEC (none when empty) EXTRA...` against
  // `server` and waits until the node is registered.
  AgentProcess(const ServerProcess& server, std::string name, std::string fake_devices,
               std::vector<std::string> extra_args = {});
  ~AgentProcess();
  void Start();
  void Kill9();
  int Terminate();
  // Sends `sig`; with `wait`, waits for the exit and returns its code (-1: killed by a signal),
  // else returns 0 at once (SIGSTOP, SIGCONT).
  int Signal(int sig, bool wait = true);
  const std::string& work_dir() const { return work_.path(); }

 private:
  const ServerProcess& server_;
  std::string name_, devices_;
  std::vector<std::string> extra_;
  TempDir work_;
  pid_t pid_ = -1;
};

// Polls `cond` every 20 ms for up to `limit`; returns whether it became true.
bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit = std::chrono::seconds(20));
// Starts `args` (argv[0] a path) as a child with stdout (and stderr when `silence_stderr`) sent
// to /dev/null; returns its pid.
pid_t SpawnChild(std::vector<std::string> args, bool silence_stderr);

// Runs the abacus binary with `args` and `env` (NAME=VALUE) added; returns exit code and stdout.
struct CliResult {
  int code = -1;
  std::string out, err;
};
CliResult RunCli(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                 const std::string& stdin_text = "");
// The same for another program (`binary`: its path), e.g. a benchmark executable of bench/.
CliResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}, const std::string& stdin_text = "");

std::string ReadFile(const std::string& path);

// A loopback port nothing listens on now (bound to port 0, read, closed): for a process the test
// starts next on a known address (Prometheus, a gateway, a server restarted where its agents are).
int FreePort();

// A simulated node as the example org's training queue uses it: 8 gpu/nvidia/H100-80G in NVLink
// domain nv0 (cuda 12.4, driver 550.54), pool train-a100, 128 cores, 1Ti; POST it to /api/v1/nodes.
nlohmann::json H100Node(const std::string& name);

// A tenant acme with project ml and a queue `train` holding 8 A100, 64 cores and 512Gi.
extern const std::string kAcmeOrg;
// A second tenant beta with project lab and its member bea (no queue): the other tenant of
// isolation checks.
extern const char kBetaTenant[];
std::string SourcePath(const std::string& relative);

}  // namespace abacus::testing

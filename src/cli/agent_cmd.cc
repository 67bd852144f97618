// `abacus agent`: the node agent (docs/agent.md). Discovers the node, registers with the join
// token, runs what the server assigns, until SIGTERM/SIGINT (then stops its tasks with their
// grace and exits).
#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

#include "agent/discover/discoverer.h"
#include "agent/discover/nvml.h"
#include "agent/loop/agent.h"
#include "agent/runtime/cgroup.h"
#include "cli/client.h"
#include "cli/command_config.h"
#include "cli/verbs.h"
#include "common/ids.h"
#include "model/extended_resource.h"
#include "model/quantity.h"

namespace abacus::cli {
namespace {

struct AgentFlags {
  std::string server, token, token_file, name, cluster = "default", pool, labels, work_dir, fake_devices;
  std::string cpus, memory;  // advertised capacity overrides
  std::string resources;     // extended resources, NAME=AMOUNT,… (model/extended_resource.h)
  std::string fault_file;    // injected device faults (agent/discover/fault_file.h)
  std::string nvml_library = "libnvidia-ml.so.1";  // NVML for discovery, sampling and health
  std::string port_range = "20000-29999", advertise_host = "127.0.0.1";  // service replicas (port_pool.h)
  std::string task_uids = agent::FormatUidRange(agent::kDefaultTaskUids);  // task users (task_uids.h)
  int heartbeat_seconds = 0;
  int rediscover_seconds = 60;
  bool real_devices = true;
  bool cgroups = true;
  bool keep_task_dirs = false;
  // Where an option's value came from, for its error: "FILE:LINE: key" or "--key" (CommandConfig::Where).
  std::function<std::string(const std::string&)> where = [](const std::string& key) { return "--" + key; };
};

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string DefaultWorkDir() {
  if (::geteuid() == 0) return "/var/lib/abacus/agent";
  std::string state = EnvOr("XDG_STATE_HOME", EnvOr("HOME", ".") + "/.local/state");
  return state + "/abacus/agent";
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "node";
  std::string name(buf);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.substr(0, name.find('.'));
}

Result<std::map<std::string, std::string>> ParseLabels(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument("--labels: '" + item + "' is not KEY=VALUE");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// --token, else --token-file, else ABACUS_TOKEN.
Result<std::string> JoinToken(const AgentFlags& f) {
  if (!f.token.empty()) return f.token;
  if (!f.token_file.empty()) {
    std::ifstream in(f.token_file);
    if (!in) return NotFound("cannot read --token-file " + f.token_file + ": " + std::strerror(errno));
    std::string token;
    std::getline(in, token);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    if (token.empty()) return InvalidArgument("--token-file " + f.token_file + " is empty");
    return token;
  }
  std::string env = EnvOr("ABACUS_TOKEN", "");
  if (!env.empty()) return env;
  return InvalidArgument("no join token: pass --token, --token-file (the server's DATA/join.token) or set ABACUS_TOKEN");
}

int RunAgent(const AgentFlags& f) {
  auto token = JoinToken(f);
  if (!token.ok()) {
    std::cerr << "abacus agent: " << token.status().message() << "\n";
    return kExitUsage;
  }
  auto labels = ParseLabels(f.labels);
  if (!labels.ok()) {
    std::cerr << "abacus agent: " << labels.status().message() << "\n";
    return kExitUsage;
  }
  agent::AgentOptions o;
  o.server = !f.server.empty() ? f.server : EnvOr("ABACUS_SERVER", "http://127.0.0.1:8420");
  o.join_token = *token;
  o.name = !f.name.empty() ? f.name : HostName();
  // What the server would refuse at every registration is refused here, once, before anything runs.
  if (!IsValidName(o.name)) {
    std::cerr << "abacus agent: " << f.where("name") << ": invalid node name '" << o.name
              << "': use 1-63 characters of a-z, 0-9, '-', '_' or '.', starting and ending with a letter or digit\n";
    return kExitUsage;
  }
  if (!o.server.starts_with("http://") && !o.server.starts_with("https://")) {
    std::cerr << "abacus agent: " << f.where("server") << ": expected an http:// or https:// URL of the server, got '"
              << o.server << "'\n";
    return kExitUsage;
  }
  o.cluster = f.cluster;
  o.pool = f.pool;
  o.labels = *labels;
  auto extended = ParseExtendedList(f.resources);
  if (!extended.ok()) {
    std::cerr << "abacus agent: " << f.where("resources") << ": " << extended.status().message() << "\n";
    return kExitUsage;
  }
  o.extended = *extended;
  o.work_dir = !f.work_dir.empty() ? f.work_dir : DefaultWorkDir();
  o.heartbeat = std::chrono::seconds(f.heartbeat_seconds);
  o.rediscover_every = std::chrono::seconds(f.rediscover_seconds);
  o.keep_task_dirs = f.keep_task_dirs;
  o.fault_file = f.fault_file;
  auto ports = agent::ParsePortRange(f.port_range);
  if (!ports.ok()) {
    std::cerr << "abacus agent: " << f.where("port-range") << ": " << ports.status().message() << "\n";
    return kExitUsage;
  }
  o.port_range = *ports;
  auto task_uids = agent::ParseTaskUids(f.task_uids);
  if (!task_uids.ok()) {
    std::cerr << "abacus agent: " << f.where("task-uids") << ": " << task_uids.status().message() << "\n";
    return kExitUsage;
  }
  o.task_uids = *task_uids;
  if (f.advertise_host.empty() || f.advertise_host.find_first_of(" :/") != std::string::npos) {
    std::cerr << "abacus agent: " << f.where("advertise-host") << ": expected a host name or IPv4 address that gateways reach this "
                 "node at (no port), e.g. 10.0.0.7\n";
    return kExitUsage;
  }
  o.advertise_host = f.advertise_host;
  if (!f.cpus.empty()) {
    auto q = Quantity::Parse(f.cpus);
    if (!q.ok() || q->milli() <= 0) {
      std::cerr << "abacus agent: " << f.where("cpus") << ": expected a positive number of cores like 16 or 500m\n";
      return kExitUsage;
    }
    o.cpu_milli_override = q->milli();
  }
  if (!f.memory.empty()) {
    auto q = Quantity::Parse(f.memory);
    if (!q.ok() || q->CeilUnits() <= 0) {
      std::cerr << "abacus agent: " << f.where("memory") << ": expected a positive quantity like 64Gi\n";
      return kExitUsage;
    }
    o.memory_bytes_override = q->CeilUnits();
  }

  agent::DiscoveryOptions d;
  d.fake_devices = f.fake_devices;
  d.node_name = o.name;
  d.real_devices = f.real_devices;
  d.nvml_library = f.nvml_library;
  auto discoverer = agent::MakeDiscoverer(d);
  if (!discoverer.ok()) {
    std::cerr << "abacus agent: " << discoverer.status().message() << "\n";
    return kExitUsage;
  }

  // The shutdown signals are waited for by this thread only; tasks get a clean mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // a dropped terminal: the same clean shutdown, not the default death
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<agent::CgroupManager> cgroups;
  agent::AgentSeams seams;
  if (f.cgroups) {
    cgroups = agent::CgroupManager::Detect();
    if (!cgroups->warning().empty()) std::cerr << "abacus agent: warning: " << cgroups->warning() << "\n";
    seams.cgroups = cgroups.get();
  }
  if (f.real_devices) {
    seams.device_sampler = std::make_unique<agent::NvmlDeviceSampler>([lib = d.nvml_library] {
      return agent::OpenNvml(lib);
    });
    seams.health_watcher = std::make_unique<agent::NvmlHealthWatcher>([lib = d.nvml_library] {
      return agent::OpenNvml(lib);
    });
  }
  agent::Agent node(o, SystemClock::Get(), std::move(*discoverer), std::move(seams));
  Status started = node.Start();
  if (!started.ok()) {
    std::cerr << "abacus agent: cannot start: " << started.ToString() << "\n";
    return 1;
  }
  std::cerr << "abacus agent: node " << o.name << ", server " << o.server << ", work dir " << o.work_dir << "\n";
  if (node.WaitRegistered(std::chrono::seconds(3))) {
    std::cerr << "abacus agent: registered; running what the server assigns (Ctrl-C stops the tasks and exits)\n";
  } else {
    std::cerr << "abacus agent: not registered yet (see the warnings above); retrying in the background\n";
  }
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "abacus agent: " << (sig == SIGINT ? "interrupt" : sig == SIGHUP ? "hangup" : "terminate")
            << ": stopping tasks with their grace periods\n";
  node.Shutdown();
  return kExitOk;
}

}  // namespace

void AddAgentCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<AgentFlags>();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "Run the node agent: discover this machine's CPUs, memory and accelerators, register with the server, and run "
      "the tasks it assigns as local processes (or containers when a task names an image). Runs until SIGTERM or "
      "Ctrl-C, then stops its tasks with their grace periods and exits.\n"
      "The join token is the server's DATA/join.token.\n"
      "Examples:\n"
      "  abacus agent --server http://10.0.0.1:8420 --token-file /etc/abacus/join.token\n"
      "  abacus agent --server http://127.0.0.1:8420 --token $(cat .abacus/join.token) --name sim-a \\\n"
      "      --fake-devices gpu:nvidia:A100-80G:8,npu:huawei:Ascend910B:8 --work-dir /tmp/sim-a\n"
      "  abacus agent --token-file /etc/abacus/join.token --nvml-library /usr/lib64/libnvidia-ml.so.1\n"
      "A restarted agent kills the tasks its previous life left running (WORK_DIR/tasks/*/pid) and reports them "
      "Lost. Run as root, it runs each plain-process task as a uid of its own (--task-uids); not as root, every task "
      "runs as the agent's user and a warning says so. Details: docs/agent.md.\n"
      "Every option is also a key of the config file (--config, default /etc/abacus/agent.yaml).");
  auto config = std::make_shared<CommandConfig>(cmd, "/etc/abacus/agent.yaml");
  cmd->add_option("--server", f->server,
                  "server URL (else ABACUS_SERVER, else http://127.0.0.1:8420); URL1,URL2 for an HA pair: the agent "
                  "follows the leader");
  cmd->add_option("--token", f->token, "join token (else --token-file, else ABACUS_TOKEN)");
  cmd->add_option("--token-file", f->token_file, "file holding the join token, e.g. the server's DATA/join.token");
  cmd->add_option("--name", f->name, "node name (default: the host name)");
  cmd->add_option("--cluster", f->cluster, "cluster the node belongs to")->capture_default_str();
  cmd->add_option("--pool", f->pool, "pool (default: the server's default pool)");
  cmd->add_option("--cpus", f->cpus, "CPU cores to advertise instead of the discovered ones (simulation, benchmarks)");
  cmd->add_option("--memory", f->memory, "memory to advertise instead of the discovered amount, e.g. 64Gi");
  cmd->add_option("--labels", f->labels, "node labels, KEY=VALUE,… (e.g. zone=a,rack=r12)");
  cmd->add_option("--resources", f->resources,
                  "extended resources this node offers, NAME=AMOUNT,… (e.g. rdma/hca=4,ephemeral-storage=500Gi,"
                  "license/matlab=10); replaces what discovery found under a name (RDMA HCAs from "
                  "/sys/class/infiniband as rdma/hca), 0 declares none");
  cmd->add_option("--work-dir", f->work_dir,
                  "where task directories, logs and pid files go (default /var/lib/abacus/agent as root, else "
                  "~/.local/state/abacus/agent)");
  cmd->add_option("--fake-devices", f->fake_devices,
                  "simulated devices KIND:VENDOR:MODEL:COUNT[:MEMORY][@KEY=VALUE,…], comma-separated, e.g. "
                  "gpu:nvidia:A100-80G:8:80Gi@cuda=12.4 (docs/agent.md)");
  cmd->add_option("--fault-file", f->fault_file,
                  "inject device faults: read at every heartbeat, each line 'INDEX REASON' reports that device "
                  "Unhealthy with REASON (e.g. '1 XID 79'); remove the line to report it healthy again (docs/agent.md)");
  cmd->add_option("--port-range", f->port_range,
                  "TCP ports handed to InferenceService replicas as ABACUS_PORT, FIRST-LAST (docs/agent.md)")
      ->capture_default_str();
  cmd->add_option("--task-uids", f->task_uids,
                  "as root, run each plain-process task as a uid (and gid) of its own from FIRST-LAST, so tasks "
                  "cannot read each other's secrets, environments and logs or the node credential; none runs them "
                  "as the agent's user, unsafe where tenants share the node (docs/agent.md, \"Task users\")")
      ->capture_default_str();
  cmd->add_option("--advertise-host", f->advertise_host,
                  "host that gateways reach this node's service replicas at (their address is HOST:ABACUS_PORT)")
      ->capture_default_str();
  cmd->add_flag("!--no-real-devices", f->real_devices, "do not look for real accelerators (fake devices only)");
  cmd->add_option("--nvml-library", f->nvml_library,
                  "the NVML library to dlopen for NVIDIA GPUs (discovery, utilization and health), a file name "
                  "the loader finds or a path, e.g. /usr/lib64/libnvidia-ml.so.1 (docs/agent.md)")
      ->capture_default_str();
  cmd->add_option("--heartbeat", f->heartbeat_seconds, "seconds between heartbeats (0: what the server asks)")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  cmd->add_option("--rediscover", f->rediscover_seconds, "seconds between device re-discoveries (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));
  cmd->add_flag("!--no-cgroups", f->cgroups, "do not put tasks in cgroups (CPU and memory limits not enforced)");
  cmd->add_flag("--keep-task-dirs", f->keep_task_dirs,
                "keep each task's directory after it left the assignment (default: removed; logs are on the server)");
  cmd->callback([f, config, exit_code] {
    Status loaded = config->Apply();
    if (!loaded.ok()) {
      std::cerr << "abacus agent: " << loaded.message() << "\n";
      *exit_code = kExitUsage;
      return;
    }
    if (config->print_only()) {
      std::cout << config->Effective();
      return;
    }
    f->where = [config](const std::string& key) { return config->Where(key); };
    *exit_code = RunAgent(*f);
  });
}

}  // namespace abacus::cli

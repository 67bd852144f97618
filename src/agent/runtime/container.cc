#include "agent/runtime/container.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "agent/command.h"
#include "agent/runtime/network.h"

namespace abacus::agent {

namespace {

std::string SignalText(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : std::to_string(sig);
}

std::string Cpus(int64_t milli) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(milli / 1000), static_cast<long long>(milli % 1000));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// The variables the engine reads besides its task's: device visibility, ABACUS_TASK_ID and the
// network class, which override the task's own (in BuildContainerRunCommand's order).
std::map<std::string, std::string> EngineSetVariables(const ContainerSpec& spec) {
  std::map<std::string, std::string> env = DeviceEnvironment(spec.devices, spec.node_vendors);
  env["ABACUS_TASK_ID"] = spec.task_id;
  (void)AddNetworkClass(spec.network_class, env);  // validated by the caller
  return env;
}

bool StartsWith(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Status CheckSecretVariableName(const std::string& name) {
  const std::string up = Upper(name);
  static const std::vector<std::string_view> kExact = {
      "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "LANG", "IFS", "ENV", "BASH_ENV", "NOTIFY_SOCKET",
      "DBUS_SESSION_BUS_ADDRESS", "SSL_CERT_FILE", "SSL_CERT_DIR", "OPENSSL_CONF", "MALLOC_ARENA_MAX",
      "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "NLSPATH", "GCONV_PATH", "LOCPATH", "TERMINFO", "STORAGE_DRIVER",
      "STORAGE_OPTS", "REGISTRY_AUTH_FILE", "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK", "GORACE"};
  static const std::vector<std::string_view> kPrefixes = {
      "LD_", "XDG_", "CONTAINERS_", "CONTAINER_", "_CONTAINERS", "PODMAN_", "DOCKER_", "BUILDAH_", "CNI_",
      "NETAVARK_", "CONMON_", "CRUN_", "RUNC_", "LC_", "MALLOC_", "GLIBC_", "SYSTEMD_", "LISTEN_"};
  bool engine = std::find(kExact.begin(), kExact.end(), up) != kExact.end() || up.ends_with("_PROXY");
  for (std::string_view p : kPrefixes) engine |= StartsWith(up, p);
  if (!engine) return Status::OK();
  return InvalidArgument("secret variable " + name +
                         " would reach the container engine's own environment, which reads it (PATH, HOME, TMPDIR, "
                         "LD_*, XDG_*, CONTAINERS_*, *_PROXY, GODEBUG, …): give the secret as a file (secretMounts) or "
                         "under another variable name");
}

std::map<std::string, std::string> ContainerEngineEnvironment(const ContainerSpec& spec) {
  std::map<std::string, std::string> out;
  const std::map<std::string, std::string> set = EngineSetVariables(spec);
  for (const auto& [k, v] : spec.secret_env) {
    if (set.count(k) == 0) out[k] = v;
  }
  return out;
}

std::string_view ContainerEngineName(ContainerEngine engine) {
  return engine == ContainerEngine::kPodman ? "podman" : "docker";
}

Result<ContainerEngine> FindContainerEngine(const std::string& path_env) {
  if (FindExecutable("podman", path_env).ok()) return ContainerEngine::kPodman;
  if (FindExecutable("docker", path_env).ok()) return ContainerEngine::kDocker;
  return NotFound("neither podman nor docker is installed");
}

std::string ContainerName(const std::string& task_id) { return "abacus-" + task_id; }

Result<std::vector<std::string>> BuildContainerRunCommand(ContainerEngine engine, const ContainerSpec& spec) {
  if (spec.image.empty()) return InvalidArgument("task " + spec.task_id + ": container without an image");
  std::vector<std::string> argv = {std::string(ContainerEngineName(engine)), "run", "--rm", "--init",
                                   "--name", ContainerName(spec.task_id),
                                   "--label", "abacus.task=" + spec.task_id};
  auto add = [&](std::string flag, std::string value) {
    argv.push_back(std::move(flag));
    argv.push_back(std::move(value));
  };
  // 1) Confinement: the engine's default seccomp profile (never unconfined), no privilege gain
  // through setuid files, and a read-only root filesystem when the spec asks for one.
  add("--security-opt", "no-new-privileges");
  if (spec.read_only_root) argv.push_back("--read-only");
  // 2) Limits.
  if (spec.cpu_milli > 0) argv.push_back("--cpus=" + Cpus(spec.cpu_milli));
  if (spec.memory_bytes > 0) {
    argv.push_back("--memory=" + std::to_string(spec.memory_bytes) + "b");
    argv.push_back("--memory-swap=" + std::to_string(spec.memory_bytes) + "b");
  }
  if (spec.stop_signal > 0) argv.push_back("--stop-signal=" + SignalText(spec.stop_signal));
  auto network = ContainerNetworkFor(spec.network_class);
  if (!network.ok()) return network.status().WithContext("task " + spec.task_id);
  if (!network->empty()) argv.push_back("--network=" + *network);
  // 3) Devices, per vendor.
  std::vector<std::string> nvidia_uuids;
  bool ascend = false, rocm = false, cambricon = false;
  for (const auto& g : spec.devices) {
    const std::string& vendor = g.device.flavor.vendor();
    const std::string index = std::to_string(g.device.index);
    if (vendor == "nvidia") {
      if (engine == ContainerEngine::kPodman) {
        add("--device", "nvidia.com/gpu=" + index);
      } else {
        nvidia_uuids.push_back(g.device.uuid);
      }
    } else if (vendor == "huawei") {
      add("--device", "/dev/davinci" + index);
      ascend = true;
    } else if (vendor == "amd" || vendor == "hygon") {
      rocm = true;
    } else if (vendor == "cambricon") {
      add("--device", "/dev/cambricon_dev" + index);
      cambricon = true;
    }
  }
  if (!nvidia_uuids.empty()) {
    std::string list;
    for (const auto& u : nvidia_uuids) list += (list.empty() ? "" : ",") + u;
    add("--gpus", "\"device=" + list + "\"");
  }
  if (ascend) {
    for (const char* d : {"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}) add("--device", d);
    add("-v", "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro");
    add("-v", "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro");
  }
  if (rocm) {
    add("--device", "/dev/kfd");
    add("--device", "/dev/dri");
    add("--group-add", "video");
  }
  if (cambricon) add("--device", "/dev/cambricon_ctl");
  // 4) Environment: the task's, then device visibility (which wins), sorted for stable argv;
  // then the secret variables by name only: the engine reads their values from its own
  // environment (ContainerEngineEnvironment), so no value is in the process list.
  std::map<std::string, std::string> env = spec.env;
  const std::map<std::string, std::string> set = EngineSetVariables(spec);
  for (const auto& [k, v] : spec.secret_env) env.erase(k);
  for (const auto& [k, v] : set) env[k] = v;
  for (const auto& [k, v] : env) add("-e", k + "=" + v);
  for (const auto& [k, v] : ContainerEngineEnvironment(spec)) {
    if (Status s = CheckSecretVariableName(k); !s.ok()) return s.WithContext("task " + spec.task_id);
    add("--env", k);
  }
  // 5) Workspace and mounts.
  if (!spec.work_dir.empty()) {
    add("-v", spec.work_dir + ":/workspace");
    add("-w", "/workspace");
  }
  for (const auto& m : spec.mounts) add("-v", m.host_path + ":" + m.container_path + (m.read_only ? ":ro" : ""));
  // 6) Image and command.
  argv.push_back(spec.image);
  for (const auto& c : spec.command) argv.push_back(c);
  return argv;
}

std::vector<std::string> BuildContainerSignalCommand(ContainerEngine engine, const std::string& task_id, int signal) {
  return {std::string(ContainerEngineName(engine)), "kill", "--signal=" + SignalText(signal), ContainerName(task_id)};
}

std::vector<std::string> BuildContainerRemoveCommand(ContainerEngine engine, const std::string& task_id) {
  if (engine == ContainerEngine::kPodman) return {"podman", "rm", "--force", "--time=0", ContainerName(task_id)};
  return {"docker", "rm", "--force", ContainerName(task_id)};
}

std::vector<std::string> BuildContainerExecCommand(ContainerEngine engine, const std::string& task_id,
                                                   const std::vector<std::string>& command) {
  std::vector<std::string> argv = {std::string(ContainerEngineName(engine)), "exec", ContainerName(task_id)};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace abacus::agent

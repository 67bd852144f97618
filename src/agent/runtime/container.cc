#include "agent/runtime/container.h"

#include <signal.h>
#include <string.h>

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

}  // namespace

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
  // 4) Environment: the task's, then device visibility (which wins), sorted for stable argv.
  std::map<std::string, std::string> env = spec.env;
  for (const auto& [k, v] : DeviceEnvironment(spec.devices, spec.node_vendors)) env[k] = v;
  env["ABACUS_TASK_ID"] = spec.task_id;
  (void)AddNetworkClass(spec.network_class, env);  // validated above
  for (const auto& [k, v] : env) add("-e", k + "=" + v);
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

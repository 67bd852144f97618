// Container runtime: when a task has an image and podman or docker is on PATH, the task runs as
// `<engine> run …` under the process runtime (same logs, exit codes and stop path). This file
// builds those command lines; it never talks to an engine itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/runtime/env.h"
#include "common/status.h"

namespace abacus::agent {

enum class ContainerEngine { kPodman, kDocker };
// Returns "podman" or "docker".
std::string_view ContainerEngineName(ContainerEngine engine);

struct Mount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
};

struct ContainerSpec {
  std::string task_id;
  std::string image;
  std::vector<std::string> command;          // empty: the image's entrypoint/cmd
  std::map<std::string, std::string> env;    // task variables
  // Variables whose value is a secret's: on the command line by name only (`--env NAME`); the
  // engine takes the value from its own environment (ContainerEngineEnvironment), which only the
  // engine's user can read, never from `ps`.
  std::map<std::string, std::string> secret_env;
  std::vector<DeviceGrant> devices;
  std::vector<std::string> node_vendors;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::string work_dir;                      // host directory, mounted at /workspace
  std::vector<Mount> mounts;
  int stop_signal = 0;                       // the checkpoint signal; 0: engine default
  std::string network_class;                 // isolated, internal, internet; "": engine default (network.h)
  bool read_only_root = false;               // spec.readOnlyRootFilesystem: --read-only
};

// Finds the engine to use: podman first, then docker, on `path_env` (process PATH when empty).
// NotFound when neither is installed.
Result<ContainerEngine> FindContainerEngine(const std::string& path_env = "");

// Returns the name of the task's container: "abacus-<task id>".
std::string ContainerName(const std::string& task_id);

// Returns argv for `<engine> run` in the foreground (--rm, --init, name, labels,
// --security-opt no-new-privileges under the engine's default seccomp profile, --read-only when
// asked, --cpus,
// --memory and --memory-swap, --stop-signal, --network of the network class (network.h) with
// ABACUS_NETWORK_CLASS, env incl. device visibility, workspace and mounts,
// device access per vendor: NVIDIA via CDI "nvidia.com/gpu=<index>" on podman and
// --gpus device=<uuid,…> on docker; Ascend /dev/davinci<N> plus davinci_manager, devmm_svm,
// hisi_hdc and the driver mounted read-only; AMD and Hygon /dev/kfd, /dev/dri and group video; Cambricon
// /dev/cambricon_ctl and /dev/cambricon_dev<N>). Secret variables go as `--env NAME`, never
// with their value. InvalidArgument without an image, for an unknown network class, or for a
// secret variable the engine would read itself (CheckSecretVariableName).
Result<std::vector<std::string>> BuildContainerRunCommand(ContainerEngine engine, const ContainerSpec& spec);

// Returns the variables to add to the engine's own environment for the `--env NAME` arguments
// of BuildContainerRunCommand: the secret variables that device visibility and ABACUS_* do not
// override.
std::map<std::string, std::string> ContainerEngineEnvironment(const ContainerSpec& spec);

// OK when a secret's value may travel to the container in the engine's environment under
// `name`; InvalidArgument for a name the engine, its runtime or the loader reads itself (PATH,
// HOME, TMPDIR, LD_*, XDG_*, CONTAINERS_*, *_PROXY, GODEBUG, …), which would let a task steer the
// engine: such a secret is given as a file (secretMounts) or under another name.
Status CheckSecretVariableName(const std::string& name);

// Returns argv that sends `signal` to the task's container (`<engine> kill --signal …`).
std::vector<std::string> BuildContainerSignalCommand(ContainerEngine engine, const std::string& task_id, int signal);

// Returns argv that kills the task's container at once and removes it (`podman rm --force
// --time=0 abacus-<task>`, `docker rm --force abacus-<task>`): for a container whose `run` client
// was killed (the stop's SIGKILL after the grace reaches the client, not the container, which
// lives under the engine's monitor).
std::vector<std::string> BuildContainerRemoveCommand(ContainerEngine engine, const std::string& task_id);

// Returns argv running `command` inside the task's container: `<engine> exec abacus-<task> …`
// (exec probes of image tasks).
std::vector<std::string> BuildContainerExecCommand(ContainerEngine engine, const std::string& task_id,
                                                   const std::vector<std::string>& command);

}  // namespace abacus::agent

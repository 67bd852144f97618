#include "podman_sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace abacus::testing {
namespace {

namespace fs = std::filesystem;

// Quotes `s` for /bin/sh.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

PodmanSandbox::Output Shell(const std::string& command) {
  PodmanSandbox::Output out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) out.text.append(buf, n);
  int status = ::pclose(p);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

bool OnPath(const std::string& name) { return Shell("command -v " + name + " >/dev/null").code == 0; }

uint64_t Limit(int resource, uint64_t cap) {
  struct rlimit rl {};
  if (::getrlimit(resource, &rl) != 0 || rl.rlim_max == RLIM_INFINITY) return cap;
  return std::min<uint64_t>(rl.rlim_max, cap);
}

uint64_t PidMax() {
  std::ifstream in("/proc/sys/kernel/pid_max");
  uint64_t v = 0;
  return (in >> v) && v > 0 ? v : 32768;
}

}  // namespace

bool PodmanSandbox::Required() {
  const char* v = ::getenv("ABACUS_REQUIRE_PODMAN");
  return v != nullptr && std::string(v) == "1";
}

PodmanSandbox& PodmanSandbox::Get() {
  static PodmanSandbox sandbox;  // its containers and files go when the process exits
  return sandbox;
}

PodmanSandbox::PodmanSandbox() {
  if (!OnPath("podman")) {
    reason_ = "podman is not installed (scripts/install-deps.sh installs it)";
    return;
  }
  if (!OnPath("runc")) {
    reason_ = "runc is not installed (scripts/install-deps.sh installs it)";
    return;
  }
  char tmpl[] = "/tmp/abacus-podman-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    reason_ = "cannot make a temporary folder";
    return;
  }
  dir_ = tmpl;
  // The configuration docs/agent.md documents: runc (crun 1.8 refuses the hybrid cgroup layout of
  // a cgroup v1 host with a cgroup2 mount that has controllers), cgroupfs (no systemd), events in
  // a file (no journald), and rlimits within the engine's own: podman asks for nofile and nproc
  // of 1048576, which a root without CAP_SYS_RESOURCE cannot raise to, and lowers its own nproc
  // to kernel.pid_max.
  const uint64_t nofile = Limit(RLIMIT_NOFILE, 1048576);
  const uint64_t nproc = std::min(Limit(RLIMIT_NPROC, 1048576), PidMax());
  {
    std::ofstream conf(dir_ + "/containers.conf");
    conf << "[containers]\n"
         << "default_ulimits = [\"nofile=" << nofile << ":" << nofile << "\", \"nproc=" << nproc << ":" << nproc
         << "\"]\n"
         << "[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n"
         << "[network]\nnetwork_config_dir = \"" << dir_ << "/net\"\n";
    std::ofstream storage(dir_ + "/storage.conf");
    storage << "[storage]\ndriver = \"vfs\"\ngraphroot = \"" << dir_ << "/root\"\nrunroot = \"" << dir_ << "/run\"\n";
  }
  fs::create_directories(dir_ + "/net");
  ::setenv("CONTAINERS_CONF", (dir_ + "/containers.conf").c_str(), 1);
  ::setenv("CONTAINERS_STORAGE_CONF", (dir_ + "/storage.conf").c_str(), 1);

  // The image: a busybox-static root filesystem, imported (no registry).
  const std::string busybox = "/bin/busybox";
  if (Shell("file -L " + busybox + " | grep -q 'statically linked'").code != 0) {
    reason_ = busybox + " is missing or not statically linked (the Debian package busybox-static provides it)";
    return;
  }
  const std::string rootfs = dir_ + "/rootfs";
  for (const char* d : {"bin", "etc", "tmp", "proc", "sys", "dev", "workspace"}) fs::create_directories(rootfs + "/" + d);
  fs::copy_file(busybox, rootfs + "/bin/busybox");
  { std::ofstream(rootfs + "/etc/passwd") << "root:x:0:0:root:/root:/bin/sh\n"; }
  Output applets = Shell(busybox + " --list");
  std::istringstream names(applets.text);
  for (std::string name; std::getline(names, name);) {
    std::error_code ec;
    if (!name.empty() && name != "busybox") fs::create_symlink("busybox", rootfs + "/bin/" + name, ec);
  }
  Output built = Shell("tar -C " + Quote(rootfs) + " -cf " + Quote(dir_ + "/rootfs.tar") + " .");
  if (applets.code != 0 || built.code != 0) {
    reason_ = "cannot build the image's root filesystem: " + applets.text + built.text;
    return;
  }
  Output imported = Podman({"import", dir_ + "/rootfs.tar", kImage});
  if (imported.code != 0) {
    reason_ = "podman import: " + imported.text;
    return;
  }
  // One container with limits: what every test needs.
  const auto t0 = std::chrono::steady_clock::now();
  Output ran = Podman({"run", "--rm", "--init", "--memory=64m", "--cpus=0.5", "--network=none", kImage, "true"});
  start_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (ran.code != 0) reason_ = "podman run: " + ran.text;
}

PodmanSandbox::~PodmanSandbox() {
  if (dir_.empty()) return;
  (void)Podman({"rm", "--all", "--force", "--time=0"});
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

PodmanSandbox::Output PodmanSandbox::Podman(const std::vector<std::string>& args) const {
  std::string command = "podman";
  for (const auto& a : args) command += " " + Quote(a);
  return Shell(command);
}

}  // namespace abacus::testing

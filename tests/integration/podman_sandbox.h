// A podman for tests (issue 24, docs/agent.md "Containers"): its own containers.conf and storage
// under a temporary folder (never the machine's /var/lib/containers nor /etc/containers), a small
// image imported from a busybox-static root filesystem (no registry), exported to child processes
// through CONTAINERS_CONF and CONTAINERS_STORAGE_CONF so that an `abacus agent` started afterwards
// runs its containers there.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace abacus::testing {

class PodmanSandbox {
 public:
  // The image every test runs: busybox (sh, cat, stat, sleep, …) and nothing else.
  static constexpr char kImage[] = "localhost/abacus-busybox:test";

  // The sandbox of this test run, made on first use (config, image import, one smoke run) and
  // kept until the process exits. Never null; check usable().
  static PodmanSandbox& Get();
  ~PodmanSandbox();

  // Whether containers run here; when not, why (the engine's own words), for GTEST_SKIP.
  bool usable() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }
  // Whether the run must not skip (ABACUS_REQUIRE_PODMAN=1).
  static bool Required();

  // Runs `podman ARGS…` against the sandbox; returns its exit code and merged output.
  struct Output {
    int code = -1;
    std::string text;
  };
  Output Podman(const std::vector<std::string>& args) const;
  // Seconds the smoke run (`podman run --rm IMAGE true`) took: a container start here.
  double start_seconds() const { return start_seconds_; }
  const std::string& dir() const { return dir_; }

 private:
  PodmanSandbox();
  std::string dir_, reason_;
  double start_seconds_ = 0;
};

}  // namespace abacus::testing

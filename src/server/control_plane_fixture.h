// Test-only: a ControlPlane on a fresh data folder, a manual clock and sequential ids — the
// set-up the server's unit tests share — and the A100 node and training job most of them use.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "common/ids.h"
#include "server/control_plane.h"
#include "server/read_views_json.h"

namespace abacus::server::testing_cp {

// Returns an agent registration: node `name` with `gpus` gpu/nvidia/A100-80G (80 GiB each),
// 64 cores and 256 GiB.
inline nlohmann::json A100Node(const std::string& name, int gpus) {
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/A100-80G"}, {"memoryBytes", int64_t{80} << 30}});
  }
  return {{"name", name}, {"cpuMilli", 64000}, {"memoryBytes", int64_t{256} << 30}, {"devices", devices}};
}

// Returns YAML for TrainingJob `name` in `project` and `queue`: one task of 1 core, 1 GiB and
// `gpus` gpu/nvidia/A100-80G, command `true`.
inline std::string A100Job(const std::string& name, int gpus, const std::string& project = "acme/ml",
                           const std::string& queue = "train") {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         "\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: " +
         std::to_string(gpus) + "}}\n";
}

// The fixture: SetUp makes an empty data folder (named after the test), TearDown closes the
// control plane and removes it. A test (or its own SetUp) calls Open, then applies its org.
class ControlPlaneFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("abacus-" + std::string(info->test_suite_name()) + "-" + std::to_string(::getpid()) + "-" + info->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Opens the control plane on the data folder (again, after cp_.reset(), for a restart).
  // Nodes stay Ready for 24 h without heartbeats while the clock moves; `adjust` changes any
  // option before the open.
  void Open(const std::function<void(ControlPlaneOptions&)>& adjust = {}) {
    ControlPlaneOptions o;
    o.data_dir = dir_.string();
    o.clock = &clock_;
    o.ids = &ids_;
    o.node_timeout = std::chrono::hours(24);
    if (adjust) adjust(o);
    auto cp = ControlPlane::Open(o);
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    cp_ = std::move(*cp);
  }
  // Applies `yaml` (an organisation) and expects it to succeed.
  void ApplyOrg(const std::string& yaml) {
    auto applied = cp_->Apply(yaml, false, "org.yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  }
  // Submits `yaml`, waits for a scheduling cycle, and returns the first workload's id ("" and
  // a test failure when refused).
  std::string SubmitYaml(const std::string& yaml, const std::string& file = "job.yaml",
                         const govern::Principal* caller = nullptr) {
    auto r = cp_->Submit(yaml, false, file, caller, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
    return r.ok() ? r->answer.submitted[0].id : "";
  }
  // Returns the workload's JSON as the API shows it.
  nlohmann::json WorkloadJson(const std::string& id) { return WorkloadViewJson(*cp_->GetWorkload(id)); }
  // Returns the workload's state name.
  std::string State(const std::string& id) { return WorkloadJson(id)["state"]; }
  // Reports one task of `node` with `fields` (phase, exitCode, …) and waits for a cycle.
  void Report(const std::string& node, const std::string& task, nlohmann::json fields) {
    fields["taskId"] = task;
    auto r = cp_->AgentStatus(node, nlohmann::json{{"tasks", {fields}}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
  }

  std::filesystem::path dir_;
  ManualClock clock_;  // 2026-01-01T00:00:00Z
  SequentialIdGenerator ids_;
  std::unique_ptr<ControlPlane> cp_;
};

}  // namespace abacus::server::testing_cp

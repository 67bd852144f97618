// Test-only: the ControlPlaneTest fixture that control_plane_test.cc, control_plane_metrics_test.cc
// and control_plane_workloads_test.cc share: a ControlPlane on a manual clock
// (control_plane_fixture.h) with the acme organization and a price list applied.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "server/agent_api.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"

namespace abacus::server::testing_cp {

// The acme organization (queue train, 2 GPUs) and the default price list: 2 USD an hour for an
// A100 from the start of 2026-01-01, 3 USD from 02:00.
inline const std::string kMeteredOrg = testing_org::AcmeOrg("train", 2) + R"(---
kind: PriceList
name: default
spec:
  currency: USD
  prices:
    - {flavor: gpu/nvidia/A100-80G, perHour: "2", effectiveFrom: "2026-01-01T00:00:00Z"}
    - {flavor: gpu/nvidia/A100-80G, perHour: "3", effectiveFrom: "2026-01-01T02:00:00Z"}
)";

// Returns YAML for a TrainingJob `name` of two replicas of one A100 each (a gang), with `extra`
// spec lines (two spaces in) before its task groups.
inline std::string GangJob(const std::string& name, const std::string& extra) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"true\"]\n" + extra +
         "  taskGroups:\n    - name: w\n      replicas: 2\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n";
}

// The node's assignment as the long poll's route encodes it (no secret opened).
inline nlohmann::json AssignmentOf(ControlPlane& cp, const std::string& node) {
  return AssignmentJson(*cp.WaitAssignments(node, 0, std::chrono::milliseconds(0)), node, nullptr);
}

// The task `id` of an assignment AssignmentOf encoded, or null.
inline nlohmann::json TaskOf(const nlohmann::json& assignment, const std::string& id) {
  for (const auto& t : assignment["tasks"]) {
    if (t["taskId"] == id) return t;
  }
  return nullptr;
}

class ControlPlaneTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(kMeteredOrg);
  }
  using ControlPlaneFixture::Open;
  // Opens with nodes NotReady after `node_timeout` without a heartbeat.
  void Open(Duration node_timeout) {
    Open([&](ControlPlaneOptions& o) { o.node_timeout = node_timeout; });
  }
  std::string Submit(const std::string& name, int gpus) { return SubmitYaml(A100Job(name, gpus), name + ".yaml"); }
  nlohmann::json Usage(const std::string& by) {
    ControlPlane::ReportQuery q;
    q.from = "2026-01-01";
    q.to = "2026-01-02";
    q.by = by;
    q.format = "json";
    auto r = cp_->Report("usage", q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? nlohmann::json::parse(r->body) : nlohmann::json();
  }
  // Tenant acme auto-approves a temporary quota of 1 A100; a 4-GPU agent node gpu-a; a job takes
  // the queue's nominal 2 GPUs.
  void FillTheQueueWithAutoApproveOfOneGpu() {
    ASSERT_TRUE(cp_->Apply("kind: Tenant\nname: acme\ntemporaryQuotaAutoApprove:\n"
                           "  - {resource: gpu/nvidia/A100-80G, amount: 1}\n",
                           false, "acme.yaml", nullptr, {}, false, nullptr)
                    .ok());
    ASSERT_TRUE(cp_->RegisterAgent(A100Node("gpu-a", 4), nullptr).ok());
    ASSERT_EQ(State(Submit("full", 2)), "Admitted");
  }
  // The last entry of journal `stream` about workload `id` (its "workload" field); null if none.
  nlohmann::json JournalOf(const std::string& stream, const std::string& id) {
    auto records = cp_->store().Journal(stream, 0, 100000);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    nlohmann::json last;
    for (const auto& rec : records.ok() ? *records : std::vector<JournalRecord>{}) {
      nlohmann::json j = nlohmann::json::parse(rec.json, nullptr, false);
      if (j.is_object() && j.value("workload", "") == id) last = j;
    }
    return last;
  }
  // Every audit entry stored, one per line, as stored.
  std::string AuditText() {
    auto records = cp_->store().Journal("audit", 0, 100000);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    std::string all;
    for (const auto& rec : records.ok() ? *records : std::vector<JournalRecord>{}) all += rec.json + "\n";
    return all;
  }
};

}  // namespace abacus::server::testing_cp

// The `abacus up --demo` ledger: simulated heterogeneous nodes (A100 and H100 with NVLink
// domains, T4, Ascend 910B with HCCS domains, CPU-only), the example organisation and the
// example workloads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/control_plane.h"

namespace abacus::server {

// Returns the simulated demo nodes as POST /api/v1/nodes bodies.
std::vector<nlohmann::json> DemoNodes();

// Finds the examples/ folder: $ABACUS_EXAMPLES, ./examples, or next to the binary (../examples,
// ../../examples, ../share/abacus/examples). NotFound naming the places tried.
Result<std::string> FindExamplesDir();

// Registers the demo nodes, applies EXAMPLES/org.yaml and submits EXAMPLES/workloads/*.yaml
// (skipping nodes/config already present and workloads already submitted by name).
Status LoadDemo(ControlPlane& cp, const std::string& examples_dir);

// Submits EXAMPLES/demo/hello.yaml (small jobs for the local agents: GPU, NPU and CPU) unless
// workloads of those names exist.
Status SubmitDemoHello(ControlPlane& cp, const std::string& examples_dir);

}  // namespace abacus::server

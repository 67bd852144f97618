// What the real-process device-health tests (device_health_test.cc, nvml_health_test.cc) read
// from a server: a node's devices and events, where a workload's task runs, the audit trail.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/client.h"

namespace abacus::testing {

// A TrainingJob of one task (1 core, 1Gi, one `flavor` device) in acme/ml queue train that
// sleeps 120 s.
std::string GpuSleepJob(const std::string& name, const std::string& flavor);

// Device `index` of node `node` as GET /api/v1/nodes/NODE shows it; an empty object when absent.
nlohmann::json NodeDevice(cli::ApiClient& api, const std::string& node, int index);

// The device index the workload's first task holds, -1 while it is not Running on one.
int HeldDevice(cli::ApiClient& api, const std::string& workload_id);

// How many of the node's events have `type` and mention `text`.
int CountNodeEvents(cli::ApiClient& api, const std::string& node, const std::string& type, const std::string& text);

// How many audit records of the last hour have `action` (and `actor`, when not empty).
int CountAudit(cli::ApiClient& api, const std::string& action, const std::string& actor = "");

}  // namespace abacus::testing

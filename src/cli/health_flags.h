// The device health rule's thresholds as command-line flags (--health-cordon-after,
// --health-window, --health-clean-window): one copy for `abacus server` and `abacus sim events`,
// whose defaults are sched::HealthPolicy's (sched/health_rule.h), written nowhere else.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "sched/health_rule.h"

namespace abacus::cli {

// What the flags hold until Resolve turns them into a policy.
struct HealthFlags {
  int32_t cordon_after = sched::HealthPolicy{}.cordon_after;
  std::string window;        // a duration ("24h"); filled with the default by AddHealthFlags
  std::string clean_window;  // a duration ("10m")
};

// Adds the three --health-* flags to `cmd`, writing into `*flags`, with sched::HealthPolicy's defaults.
void AddHealthFlags(CLI::App* cmd, const std::shared_ptr<HealthFlags>& flags);

// Returns the policy the flags name; InvalidArgument naming where the bad value came from
// (`where(key)`, e.g. "FILE:LINE: health-window" for a config file's key; default "--KEY") on a
// bad duration or a negative count.
Result<sched::HealthPolicy> ResolveHealthFlags(
    const HealthFlags& flags,
    const std::function<std::string(const std::string& key)>& where = [](const std::string& key) { return "--" + key; });

}  // namespace abacus::cli

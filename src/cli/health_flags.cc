#include "cli/health_flags.h"

#include "common/duration_parse.h"

namespace abacus::cli {

void AddHealthFlags(CLI::App* cmd, const std::shared_ptr<HealthFlags>& flags) {
  const sched::HealthPolicy defaults;
  flags->window = FormatDurationSpec(defaults.window);
  flags->clean_window = FormatDurationSpec(defaults.clean_window);
  cmd->add_option("--health-cordon-after", flags->cordon_after,
                  "device faults (a device its agent reports unhealthy) within --health-window that cordon the node "
                  "(by abacus/health); 0: never (docs/agent.md, \"Device health\")")
      ->capture_default_str();
  cmd->add_option("--health-window", flags->window, "how long a device fault counts towards the cordon")
      ->capture_default_str();
  cmd->add_option("--health-clean-window", flags->clean_window,
                  "how long a device healthy again waits before work goes to it, and a node cordoned by the health "
                  "rule stays cordoned without a new fault (an operator's uncordon ends both at once); 0: at once")
      ->capture_default_str();
}

Result<sched::HealthPolicy> ResolveHealthFlags(const HealthFlags& flags,
                                               const std::function<std::string(const std::string& key)>& where) {
  sched::HealthPolicy policy;
  if (flags.cordon_after < 0) return InvalidArgument(where("health-cordon-after") + ": must not be negative");
  policy.cordon_after = flags.cordon_after;
  auto window = ParseDurationSpec(flags.window);
  if (!window.ok()) return InvalidArgument(where("health-window") + ": " + window.status().message());
  policy.window = *window;
  auto clean = ParseDurationSpec(flags.clean_window);
  if (!clean.ok()) return InvalidArgument(where("health-clean-window") + ": " + clean.status().message());
  policy.clean_window = *clean;
  return policy;
}

}  // namespace abacus::cli

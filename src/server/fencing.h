// Fencing of cut-off nodes (docs/agent-protocol.md, "Fencing"): an agent that cannot reach any
// server for the node timeout stops its tasks itself (the fencing signal, then SIGKILL after
// the fencing grace); the server places that work elsewhere only after node timeout + grace,
// so that the same task never runs twice. The grace is per workload kind, or the workload's own
// checkpoint grace when it declares one.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "workload/workload.h"

namespace abacus::server {

struct WorkloadRecord;

struct FencingPolicy {
  // Grace per kind; a kind not listed gets kDefaultFencingGrace.
  std::map<WorkloadKind, Duration> grace = {{WorkloadKind::kTrainingJob, std::chrono::seconds(30)}};

  // Returns how long a fenced task of `r` may take to stop: its checkpoint grace when it has a
  // checkpoint, else its kind's grace.
  Duration Grace(const WorkloadRecord& r) const;
  // Returns the signal a fenced task of `r` gets first: its checkpoint signal, else "SIGTERM".
  std::string Signal(const WorkloadRecord& r) const;
};

inline constexpr Duration kDefaultFencingGrace = std::chrono::seconds(10);

// Parses "KIND=DURATION[,KIND=DURATION…]" (e.g. "TrainingJob=60s,BatchJob=5s") over the
// defaults; InvalidArgument naming the bad entry otherwise.
Result<FencingPolicy> ParseFencingGrace(std::string_view text);

}  // namespace abacus::server

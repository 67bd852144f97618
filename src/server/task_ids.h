// Task identity: one task is one placement (group, replica) of one attempt of a workload. The id
// "<workload id>.<group>.<replica>.<attempt>" is what agents run and report; a new attempt (after
// a requeue or a retry) gets a new id, so no task is ever started twice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::server {

struct TaskRef {
  std::string workload_id;
  int32_t group = 0;
  int32_t replica = 0;
  int32_t attempt = 1;
  bool operator==(const TaskRef&) const = default;
};

// Returns "<workload id>.<group>.<replica>.<attempt>".
std::string FormatTaskId(const TaskRef& ref);
// Parses a task id; InvalidArgument naming the expected form otherwise.
Result<TaskRef> ParseTaskId(std::string_view id);

}  // namespace abacus::server

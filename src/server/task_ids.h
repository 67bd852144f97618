// Task identity: one task is one run of one placement (group, replica) of one attempt of a
// workload. The id "<workload id>.<group>.<replica>.<attempt>" (first run) or
// "<workload id>.<group>.<replica>.<attempt>.<run>" (run ≥ 1: a restarted replica, the next array
// task of a batch slot) is what agents run and report; a new attempt or run gets a new id, so no
// task is ever started twice.
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
  int32_t run = 0;
  bool operator==(const TaskRef&) const = default;
};

// Returns "<workload id>.<group>.<replica>.<attempt>", with ".<run>" when run > 0.
std::string FormatTaskId(const TaskRef& ref);
// Parses a task id; InvalidArgument naming the expected form otherwise.
Result<TaskRef> ParseTaskId(std::string_view id);

}  // namespace abacus::server

// Task output on the server: DATA/logs/<task id>.<stream>. The file name is built only from a
// task's parts — a workload id the server made and four integers — never from request bytes, and
// a task named in a request (GET …/logs?task=) is parsed as an id and must belong to the workload
// of the route (docs/governance.md, "Objects named in requests").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/task_ids.h"

namespace abacus::server {


// What `?task=` of GET /api/v1/workloads/{W}/logs asks for.
struct LogTaskQuery {
  std::optional<TaskRef> exact;  // a full task id (of workload W)
  bool has_unit = false;         // "GROUP.REPLICA": the latest run of that unit that wrote output
  int32_t group = 0, replica = 0;
};

// Parses `task` for workload `workload_id`: empty (the first unit), "GROUP.REPLICA" (two
// non-negative integers) or a task id. InvalidArgument for anything else; NotFound when a task
// id names another workload's task (whose existence it does not confirm).
Result<LogTaskQuery> ParseLogTaskQuery(std::string_view task, const std::string& workload_id);

// True when `id` can be a workload id the server made: 1–64 of [A-Za-z0-9_-], not starting with
// '-' (never a path, never "." or "..").
bool IsPlainWorkloadId(std::string_view id);

// DATA/logs/<FormatTaskId(ref)>.<stream>; InvalidArgument when the stream is not stdout/stderr or
// the workload id is not plain.
Result<std::filesystem::path> TaskLogPath(const std::string& data_dir, const TaskRef& ref, std::string_view stream);

}  // namespace abacus::server

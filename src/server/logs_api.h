// Task output for `abacus logs` beyond one task's tail (docs/api.md "Task logs"):
//   GET /api/v1/workloads/{W}/tasks — every task of W that wrote output (every attempt, every
//     run of a slot: each array task of a BatchJob), with its slot's node, phase and exit code
//     when it is the current run; `abacus logs --all-tasks` and `--previous` read it.
//   GET /api/v1/workloads/{W}/logs?follow=1[&offset=N][&timeoutSeconds=T] — `abacus logs -f`:
//     without offset, the last `tail` bytes at once; with offset, the bytes after N as soon as
//     there are some (a long poll on the server's ChangeFeed, which agents' log uploads wake),
//     or when the task ended, or after T seconds (default 30). {taskId, content, size, done}.
// The task is resolved and authorized as GET …/logs does (ControlPlane::Logs).
#pragma once

#include <string>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds GET /api/v1/workloads/{W}/tasks.
void AddTaskRoutes(RouteTable& t, const ControlPlane& cp);
// True when GET …/logs asks to follow (?follow=1).
bool IsLogFollow(const httplib::Request& req);
// Answers GET …/logs?follow=1 for workload `workload_id` (already authorized).
void ServeLogFollow(const ControlPlane& cp, const std::string& workload_id, const httplib::Request& req,
                    httplib::Response& res);

}  // namespace abacus::server

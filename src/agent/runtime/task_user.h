// Task users (docs/agent.md, "Task users"): the uid and gid a plain-process task runs as when the
// agent is root, so that tasks of different tenants on one node cannot read each other's files,
// environments (/proc/<pid>/environ) or the agent's own files. The helpers here switch a child
// to that user between fork and exec, and find or end what still runs as a uid.
#pragma once

#include <cstdint>
#include <set>

#include "common/status.h"

namespace abacus::agent {

struct TaskUser {
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool operator==(const TaskUser&) const = default;
};

// In a child between fork (or vfork) and exec: drops every supplementary group, sets the real,
// effective and saved gid, then uid, to `user`'s and checks that all six hold, so the process
// cannot go back to root. Raw system calls only (async-signal-safe, and no glibc broadcast to
// the parent's threads from a vfork child). Returns nullptr on success, else the step that
// failed ("setgroups", "setgid", "setuid", "check ids") with errno set.
const char* BecomeTaskUser(const TaskUser& user);

// The uids within [first, last] some process of this host runs as (real, effective or saved,
// from /proc): one pass over the processes, whatever the range.
std::set<uint32_t> UidsWithProcesses(uint32_t first, uint32_t last);
// True when some process of this host runs as `uid` (UidsWithProcesses of it alone).
bool UidHasProcesses(uint32_t uid);

// Kills (SIGKILL) every process running as `uid`, through a short-lived child that becomes that
// user and signals all it may (kill(-1)); so nothing an ended task left behind meets the next
// task given the uid. Internal when the child cannot be started or cannot become the user.
Status KillProcessesOf(uint32_t uid);

}  // namespace abacus::agent

// Pid files: how an agent finds the tasks of its previous life. Each started task gets
// <tasks dir>/<task id>/pid holding "<pid> <start time>" (the start time from /proc/<pid>/stat,
// so a pid the kernel has since given to another process is recognised and left alone).
#pragma once

#include <string>
#include <vector>

#include "agent/loop/protocol.h"
#include "agent/runtime/process_os.h"
#include "common/status.h"

namespace abacus::agent {

// Writes the pid file of a task started as process group `pid`.
Status WritePidFile(const std::string& task_dir, int pid);
// Removes it (the task has been reaped); missing is fine.
void RemovePidFile(const std::string& task_dir);

// Returns the start time of `pid` (field 22 of /proc/<pid>/stat), or -1 when it does not exist.
long long ProcessStartTime(int pid);

// Kills the tasks a previous agent left behind: for every <tasks dir>/*/pid, SIGKILL to the
// process group when the leader is still the same process (or gone: the rest of the group may
// live on), then removes the pid file. Returns a Lost status for each, to report at
// registration: ended at `now` when its process still ran (it ran until this kill), with no end
// when it was gone (when it died is not known here: the server takes the previous agent's last
// call, its tasks' lifeline having stopped them with it).
std::vector<TaskStatus> KillOrphans(const std::string& tasks_dir, ProcessOs& os, Time now);

}  // namespace abacus::agent

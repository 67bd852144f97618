// What /proc says of a process that is not necessarily our child: alive, or gone for good.
#pragma once

#include <sys/types.h>

namespace abacus {

// The state letter of `pid` (field 3 of /proc/<pid>/stat: R, S, D, Z, …), '\0' when there is
// no such process.
char ProcessState(pid_t pid);

// True when every thread of `pid` has exited: no such process, or a zombie leader nobody reaped
// yet (it is not our child) with no other thread left. A leader turns zombie while its other
// threads still exit, holding the process's files (a listening socket) open until the last one is
// gone: its state letter alone is not enough.
bool ProcessExited(pid_t pid);

}  // namespace abacus

// What /proc says of a process that is not necessarily our child: alive, or gone for good.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

namespace abacus {

// The fields of /proc/<pid>/stat that Abacus reads (after "(comm)", whose name may hold any
// character: the line is read from its last ')').
struct ProcStat {
  char state = '?';           // field 3: R, S, D, Z, …
  long long utime = 0;        // field 14, clock ticks
  long long stime = 0;        // field 15, clock ticks
  long long start_time = 0;   // field 22, clock ticks since boot: with the pid, names one process
  long long rss_pages = 0;    // field 24
};

// Parses a stat line; nullopt when malformed.
std::optional<ProcStat> ParseProcStat(std::string_view line);
// Reads and parses /proc/<pid>/stat; nullopt when there is no such process.
std::optional<ProcStat> ReadProcStat(pid_t pid);

// The state letter of `pid` (field 3 of /proc/<pid>/stat: R, S, D, Z, …), '\0' when there is
// no such process.
char ProcessState(pid_t pid);

// True when every thread of `pid` has exited: no such process, or a zombie leader nobody reaped
// yet (it is not our child) with no other thread left. A leader turns zombie while its other
// threads still exit, holding the process's files (a listening socket) open until the last one is
// gone: its state letter alone is not enough.
bool ProcessExited(pid_t pid);

}  // namespace abacus

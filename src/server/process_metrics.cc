#include "server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/build_info.h"
#include "server/metrics.h"

namespace abacus::server {
namespace {

// The process's start, read once: the first scrape of a process that lives for months.
const double kStart = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Resident set size from /proc/self/statm (pages), or -1.
double ResidentBytes() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = -1;
  if (!(in >> size >> resident)) return -1;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

// Open descriptors (entries of /proc/self/fd), or -1.
double OpenFds() {
  std::error_code ec;
  double n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return ec ? -1 : n;
}

}  // namespace

void RenderProcessMetrics(std::string& out) {
  out += "# HELP abacus_build_info The running binary: version, git commit and build day (value 1).\n"
         "# TYPE abacus_build_info gauge\n";
  out += "abacus_build_info{version=\"" + EscapeLabel(std::string(BuildVersion())) + "\",commit=\"" +
         EscapeLabel(std::string(BuildCommit())) + "\",built=\"" + EscapeLabel(std::string(BuildDate())) + "\"} 1\n";
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  out += "# HELP process_cpu_seconds_total User and system CPU time spent, in seconds.\n"
         "# TYPE process_cpu_seconds_total counter\n"
         "process_cpu_seconds_total " + Number(cpu) + "\n";
  if (double rss = ResidentBytes(); rss >= 0) {
    out += "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
           "# TYPE process_resident_memory_bytes gauge\n"
           "process_resident_memory_bytes " + Number(rss) + "\n";
  }
  if (double fds = OpenFds(); fds >= 0) {
    out += "# HELP process_open_fds Open file descriptors.\n"
           "# TYPE process_open_fds gauge\n"
           "process_open_fds " + Number(fds) + "\n";
  }
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    out += "# HELP process_max_fds The open file descriptor limit.\n"
           "# TYPE process_max_fds gauge\n"
           "process_max_fds " + Number(static_cast<double>(lim.rlim_cur)) + "\n";
  }
  out += "# HELP process_start_time_seconds Start time of the process since the Unix epoch, in seconds.\n"
         "# TYPE process_start_time_seconds gauge\n"
         "process_start_time_seconds " + Number(kStart) + "\n";
}

}  // namespace abacus::server

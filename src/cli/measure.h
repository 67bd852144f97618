// Measurements the benchmark and simulator commands print.
#pragma once

#include <sys/resource.h>

namespace abacus::cli {

// Returns this process's peak resident set size in MB (ru_maxrss is in KiB on Linux).
inline double PeakRssMb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

}  // namespace abacus::cli

// Steal time: CPU time the hypervisor gave to other guests while this machine's vCPUs wanted it.
// On a shared VM it, not the code, is what makes one minute's benchmark slower than the next;
// the benchmarks print it beside their numbers so that a reader can tell the two apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace abacus {

// The machine-wide CPU counters of /proc/stat's "cpu" line, in clock ticks.
struct CpuTimes {
  int64_t total = 0;  // every field: user, nice, system, idle, iowait, irq, softirq, steal
  int64_t steal = 0;
};

// Parses the "cpu " line of a /proc/stat text; nullopt when there is none or it is malformed.
std::optional<CpuTimes> ParseCpuTimes(std::string_view proc_stat);
// Reads /proc/stat; nullopt where it is not readable (not Linux).
std::optional<CpuTimes> ReadCpuTimes();
// Returns the percentage of the machine's CPU time stolen between `before` and `after`
// (0 when no time passed).
double StolenPercent(const CpuTimes& before, const CpuTimes& after);

// Measures the stolen share of the CPU from its construction on.
class StealMeter {
 public:
  StealMeter() : start_(ReadCpuTimes()) {}
  // Returns the percentage stolen since construction; nullopt where /proc/stat is unreadable.
  std::optional<double> Percent() const {
    std::optional<CpuTimes> now = ReadCpuTimes();
    if (!start_ || !now) return std::nullopt;
    return StolenPercent(*start_, *now);
  }

 private:
  std::optional<CpuTimes> start_;
};

}  // namespace abacus

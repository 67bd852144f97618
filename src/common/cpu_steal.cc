#include "common/cpu_steal.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace abacus {

std::optional<CpuTimes> ParseCpuTimes(std::string_view proc_stat) {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest time is
  // already counted in user and nice, so it is not added again).
  size_t at = 0;
  while (at < proc_stat.size() && proc_stat.substr(at, 4) != "cpu ") {
    size_t next = proc_stat.find('\n', at);
    if (next == std::string_view::npos) return std::nullopt;
    at = next + 1;
  }
  if (at >= proc_stat.size()) return std::nullopt;
  std::string_view line = proc_stat.substr(at + 4);
  line = line.substr(0, line.find('\n'));
  CpuTimes t;
  int field = 0;
  while (field < 8) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc() || value < 0) return std::nullopt;
    line.remove_prefix(static_cast<size_t>(end - line.data()));
    t.total += value;
    if (field == 7) t.steal = value;
    ++field;
  }
  if (field < 4) return std::nullopt;  // kernels before 2.6.11 have no steal field: 0
  return t;
}

std::optional<CpuTimes> ReadCpuTimes() {
  std::ifstream in("/proc/stat");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCpuTimes(text.str());
}

double StolenPercent(const CpuTimes& before, const CpuTimes& after) {
  const int64_t total = after.total - before.total;
  if (total <= 0) return 0;
  return 100.0 * static_cast<double>(after.steal - before.steal) / static_cast<double>(total);
}

}  // namespace abacus

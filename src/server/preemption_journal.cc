#include "server/preemption_journal.h"

#include <nlohmann/json.hpp>

namespace abacus::server {

void AppendPreemption(WriteBatch& batch, const WorkloadRecord& r, std::string_view reason, const std::string& by,
                      const std::string& by_queue, Time now) {
  int64_t milli = 0;
  for (const auto& p : r.placements) {
    for (const auto& g : p.devices) milli += g.milli;
  }
  batch.AppendJournal("preemptions",
                      nlohmann::json({{"workload", r.id},
                                      {"tenant", r.spec.tenant()},
                                      {"queue", r.spec.queue},
                                      {"flavor", r.group_flavors.empty() ? "cpu" : r.group_flavors[0]},
                                      {"deviceMilli", milli},
                                      {"reason", reason},
                                      {"by", by},
                                      {"byQueue", by_queue}})
                          .dump(),
                      now);
}

std::string ReclaimReason(std::string_view reason) {
  return reason == "IdleReclaimed" ? "Idle" : std::string(reason);
}

}  // namespace abacus::server

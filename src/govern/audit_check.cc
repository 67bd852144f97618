#include "govern/audit_check.h"

#include <string>
#include <vector>

namespace abacus::govern {

Result<AuditVerifyReport> CheckAuditChain(const AuditLog& log, const AuditHead& head, size_t chunk,
                                          const std::function<bool()>& keep_going) {
  AuditVerifyReport report;
  auto fail = [&](int64_t seq, std::string why) {
    report.ok = false;
    report.first_bad_seq = seq;
    report.reason = std::move(why);
    return report;
  };
  std::string prev = GenesisHash();
  int64_t after = 0;
  while (after < head.seq) {
    if (keep_going && !keep_going()) return Aborted("audit chain check stopped");
    auto read = log.Read(after, chunk == 0 ? 10000 : chunk);
    if (!read.ok()) return fail(after + 1, read.status().message());
    std::vector<AuditEntry>& entries = *read;
    while (!entries.empty() && entries.back().seq > head.seq) entries.pop_back();
    if (entries.empty()) {
      return fail(after + 1, "seq " + std::to_string(after + 1) + ": missing (the chain's head is seq " +
                                 std::to_string(head.seq) + "; entries removed)");
    }
    AuditVerifyReport part = VerifyAudit(entries, std::nullopt, after + 1);
    if (!part.ok) {
      part.checked += report.checked;
      return part;
    }
    if (entries.front().prev_hash != prev) {
      return fail(after + 1, "seq " + std::to_string(after + 1) + ": prev_hash is not seq " + std::to_string(after) +
                                 "'s hash (an entry edited, removed or inserted)");
    }
    report.checked += static_cast<int64_t>(entries.size());
    prev = entries.back().hash;
    after = entries.back().seq;
  }
  if (head.seq > 0 && prev != head.hash) {
    return fail(head.seq, "seq " + std::to_string(head.seq) +
                              ": the newest entry does not carry the chain's head hash (the newest entries edited or "
                              "removed)");
  }
  return report;
}

}  // namespace abacus::govern

// The running server's audit chain check (docs/governance.md, docs/metrics.md): a thread that
// verifies the whole chain every `every` in chunks (govern/audit_check.h), without holding up
// the writers, and keeps the last result for /metrics (abacus_audit_chain_ok and friends) so
// that the AbacusAuditChainBroken alert fires when an entry was edited or removed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"
#include "govern/audit.h"

namespace abacus::server {

class Governance;

class AuditWatch {
 public:
  struct Last {
    bool done = false;     // a check has finished
    bool ok = true;        // the last check found the chain whole
    int64_t checked = 0;   // entries it read
    int64_t first_bad_seq = 0;
    std::string reason;
    Time at{};             // when it finished
  };

  // Starts the thread when `every` > 0 (its first check right away); `gov` must outlive it.
  AuditWatch(const Governance& gov, const Clock& clock, Duration every);
  ~AuditWatch();
  AuditWatch(const AuditWatch&) = delete;
  AuditWatch& operator=(const AuditWatch&) = delete;

  // Stops and joins the thread (a check in progress stops at its next chunk). Idempotent.
  void Stop();
  // Checks the chain now, up to its head at this instant, and records the result (the thread's
  // step; tests call it). An error reading the store is recorded as a failed check.
  Last CheckNow();
  Last last() const;
  // Appends the abacus_audit_chain_ok, _checked_entries and _last_check_timestamp_seconds
  // families, with samples once a check has finished (no value rather than a guess before).
  void Render(std::string& out) const;

 private:
  void Run();

  const Governance& gov_;
  const Clock& clock_;
  const Duration every_;
  mutable Mutex mu_;
  std::condition_variable wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  Last last_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace abacus::server

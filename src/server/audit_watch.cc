#include "server/audit_watch.h"

#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "govern/audit_check.h"
#include "server/governance.h"

namespace abacus::server {

AuditWatch::AuditWatch(const Governance& gov, const Clock& clock, Duration every)
    : gov_(gov), clock_(clock), every_(every) {
  if (every_ > Duration::zero()) thread_ = std::thread([this] { Run(); });
}

AuditWatch::~AuditWatch() { Stop(); }

void AuditWatch::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

AuditWatch::Last AuditWatch::CheckNow() {
  auto keep_going = [this] {
    MutexLock lock(mu_);
    return !stopping_;
  };
  auto report = govern::CheckAuditChain(gov_.audit_log(), gov_.audit_head(), 10000, keep_going);
  if (!report.ok() && !keep_going()) return last();  // stopped: keep the previous result
  Last l;
  l.done = true;
  l.at = clock_.Now();
  if (!report.ok()) {
    l.ok = false;
    l.reason = report.status().message();
  } else {
    l.ok = report->ok;
    l.checked = report->checked;
    l.first_bad_seq = report->first_bad_seq;
    l.reason = report->reason;
  }
  if (l.ok) {
    // Whole as stored; the anchors say whether it is the chain that was (a rollback to an older
    // backup is whole, and ends before its newest anchor).
    auto anchored = gov_.CheckAnchors();
    if (!anchored.ok()) {
      l.ok = false;
      l.reason = anchored.status().message();
    } else if (*anchored && !(*anchored)->ok) {
      l.ok = false;
      l.first_bad_seq = (*anchored)->first_bad_seq;
      l.reason = (*anchored)->reason;
    }
  }
  if (!l.ok) ABACUS_LOG_ERROR("audit chain check: the chain is broken: {}", l.reason);
  MutexLock lock(mu_);
  last_ = l;
  return l;
}

AuditWatch::Last AuditWatch::last() const {
  MutexLock lock(mu_);
  return last_;
}

void AuditWatch::Render(std::string& out) const {
  Last l = last();
  // The families are always declared; their samples appear once a check has finished.
  out += "# HELP abacus_audit_chain_ok Whether the last background check found the audit chain whole (1) or "
         "broken (0).\n# TYPE abacus_audit_chain_ok gauge\n";
  if (l.done) out += "abacus_audit_chain_ok " + std::string(l.ok ? "1" : "0") + "\n";
  out += "# HELP abacus_audit_chain_checked_entries Entries the last audit chain check read.\n"
         "# TYPE abacus_audit_chain_checked_entries gauge\n";
  if (l.done) out += "abacus_audit_chain_checked_entries " + std::to_string(l.checked) + "\n";
  out += "# HELP abacus_audit_chain_last_check_timestamp_seconds When the last audit chain check finished.\n"
         "# TYPE abacus_audit_chain_last_check_timestamp_seconds gauge\n";
  if (l.done) out += "abacus_audit_chain_last_check_timestamp_seconds " + std::to_string(ToMicros(l.at) / 1000000) + "\n";
}

void AuditWatch::Run() {
  NameThisThread("abacus-audit-check");
  while (true) {
    CheckNow();
    MutexLock lock(mu_);
    if (lock.WaitFor(wake_, every_, [this]() REQUIRES(mu_) { return stopping_; })) return;
  }
}

}  // namespace abacus::server

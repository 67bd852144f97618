// Who lent how much to whom, computed from usage and quotas.
//
// Rule, per cohort and accelerator flavor, at every instant of the window:
//   1) used(q) = milli-devices of q's open intervals of that flavor.
//   2) borrowed(q) = max(0, used(q) - nominal(q)); B = sum of borrowed.
//   3) lendable(l) = min(max(0, nominal(l) - used(l)), lendingLimit(l)); L = sum of lendable.
//   4) Lender l lent to borrower q: borrowed(q) × lendable(l) / max(B, L) — the borrowing is
//      spread over the idle lendable quota in proportion to it. When B > L, the rest,
//      borrowed(q) × (B - L) / B, came from capacity no queue's lendable quota covers and is
//      attributed to the lender "(cohort)".
// Integrated over time this gives device-hours per (borrower, lender). Queues outside any
// cohort neither lend nor borrow; a queue using a flavor it has no quota for has nominal 0.
// Nested cohorts are not walked: lending happens among the queues of one cohort name.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "meter/report_inputs.h"
#include "meter/table.h"
#include "meter/units.h"
#include "meter/usage.h"

namespace abacus::meter {

inline constexpr char kCohortLender[] = "(cohort)";

struct BorrowFlow {
  std::string cohort;
  std::string flavor;
  std::string borrower;
  std::string lender;  // a queue, or kCohortLender
  ResourceTime amount = 0;  // milli-devices × us
};

// One queue's use of one flavor over the window.
struct QueueUse {
  std::string queue;
  std::string cohort;
  std::string flavor;
  int64_t nominal_milli = 0;
  ResourceTime used = 0;      // milli-devices × us
  ResourceTime borrowed = 0;  // used above nominal
  ResourceTime lent = 0;      // what other queues borrowed from it
};

struct BorrowingResult {
  std::vector<BorrowFlow> flows;  // by cohort, flavor, borrower, lender
  std::vector<QueueUse> queues;   // by cohort, flavor, queue
};

// Applies the rule above over [window.from, window.end()).
BorrowingResult ComputeBorrowing(std::span<const UsageInterval> intervals,
                                 std::span<const QueueQuota> quotas, const ReportWindow& window);

// One queue's use of one resource now: milli-devices of a flavor, millicores ("cpu") or bytes
// ("memory").
struct UseNow {
  std::string queue;
  std::string resource;
  int64_t used = 0;
};

// The rule above at one instant, for any resource (QueueQuota::flavor names it, nominal and
// lending limit in its unit): what each queue borrows and lends now, and from and to whom.
// Amounts in the result are in the resource's unit (no time factor).
BorrowingResult BorrowingNow(std::span<const QueueQuota> quotas, std::span<const UseNow> use);

// Returns the flows as a table: cohort, flavor, borrower, lender, deviceHours.
Table BorrowFlowTable(const BorrowingResult& result, const ReportWindow& window);

}  // namespace abacus::meter

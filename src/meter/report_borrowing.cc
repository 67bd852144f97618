// The borrowing report.
#include "meter/borrowing.h"
#include "meter/reports.h"

namespace abacus::meter {

Table BorrowFlowTable(const BorrowingResult& result, const ReportWindow& window) {
  Table table;
  table.title = "borrowing " + FormatTime(window.from) + " .. " + FormatTime(window.to);
  table.columns = {{"cohort", false}, {"flavor", false}, {"borrower", false}, {"lender", false},
                   {"deviceHours", true}};
  for (const BorrowFlow& f : result.flows) {
    table.rows.push_back({f.cohort, f.flavor, f.borrower, f.lender, FormatMilliHours(f.amount)});
  }
  table.notes.push_back("borrowing above nominal is spread over the lenders' idle lendable quota in "
                        "proportion to it; what no lendable quota covers is lent by (cohort)");
  return table;
}

Table BorrowingReport(std::span<const UsageInterval> intervals, std::span<const QueueQuota> quotas,
                      const ReportWindow& window) {
  return BorrowFlowTable(ComputeBorrowing(intervals, quotas, window), window);
}

}  // namespace abacus::meter

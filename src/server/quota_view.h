// What a POC reader needs to see of queues and pools (issue 19.6), computed once here and shown
// by `abacus get queues|pools`, GET /api/v1/queues|pools and the dashboard: per queue and
// resource who it borrows from and lends to now (meter::BorrowingNow, the rule of the borrowing
// report), and per pool the tenants whose work may run on it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "meter/borrowing.h"
#include "meter/report_inputs.h"
#include "server/ledger.h"

namespace abacus::server {

// Returns every queue's quotas as the borrowing rule reads them (amounts in ledger units);
// `devices_only`: accelerator flavors alone (the metered borrowing report), else CPU and memory too.
std::vector<meter::QueueQuota> BorrowingQuotas(const TenancyConfig& config, bool devices_only);

// Who one queue borrows one resource from and lends it to now (ledger units); a lender
// "(cohort)" stands for capacity no queue's lendable quota covers.
struct BorrowingNowLine {
  struct Flow {
    std::string queue;
    int64_t amount = 0;
  };
  int64_t borrowed = 0;
  std::vector<Flow> borrowed_from;
  int64_t lent = 0;
  std::vector<Flow> lent_to;
};

// Returns the borrowing now of every (queue, resource) that borrows or lends, given what each
// queue uses (`use`, ledger units); lending happens inside each queue's root cohort.
std::map<std::pair<std::string, std::string>, BorrowingNowLine> BorrowingNowByQueue(
    const TenancyConfig& config, const std::vector<meter::UseNow>& use);

// Returns `usage` (one entry of a queue's "usage") with `line` as "borrowed", "borrowedFrom",
// "lent" and "lentTo" ([{queue, amount}]).
nlohmann::json BorrowingNowJson(const BorrowingNowLine& line, nlohmann::json usage);

// Adds to every entry of each queue's "usage" ([{resource, used, nominal}], ledger units):
// "borrowed" and "borrowedFrom" [{queue, amount}], "lent" and "lentTo" [{queue, amount}]; a
// lender "(cohort)" stands for capacity no queue's lendable quota covers.
void AddBorrowingNow(const TenancyConfig& config, nlohmann::json& queue_items);

// A pool beside its document: who may run there and how many nodes it has.
struct PoolStatus {
  std::string name;
  bool declared = true;  // false: nodes name it but no Pool object declares it
  int nodes = 0;         // agent and simulated nodes in it
  std::vector<std::string> tenants_allowed;  // the tenants the pool and their own pool lists let in
};

// Returns the status of each pool of `declared` (in that order), then of each pool that nodes
// name but no Pool object declares (by name).
std::vector<PoolStatus> PoolStatuses(const Ledger& ledger, const std::vector<const PoolConfig*>& declared);

}  // namespace abacus::server

// Queue, Quota and Cohort: where workloads wait and how much they may use.
//
// A queue's quota lists resources IN ORDER; for accelerators the order is the order in which
// flavors are tried at admission. Per resource: `nominal` is guaranteed; `borrowing_limit` caps
// what the queue may borrow from its cohort above nominal (absent = unlimited); `lending_limit`
// caps how much of its idle nominal others in the cohort may borrow (absent = all of it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/flavor.h"
#include "model/quantity.h"

namespace abacus {

// What a quota entry counts: CPU cores, memory bytes, whole devices of one exact flavor, or an
// extended resource ("rdma/hca", "license/matlab", "ephemeral-storage").
struct QuotaResource {
  enum class Kind : uint8_t { kCpu, kMemory, kDevices, kExtended };
  Kind kind = Kind::kCpu;
  Flavor flavor;         // kDevices only; Flavor::Cpu() otherwise
  std::string extended;  // kExtended only: the resource's name

  // Parses "cpu", "memory", an exact accelerator flavor ("gpu/nvidia/A100-80G") or an extended
  // resource name ("rdma/hca", model/extended_resource.h).
  static Result<QuotaResource> Parse(std::string_view text);
  static QuotaResource Cpu() { return {}; }
  static QuotaResource Memory() { return {Kind::kMemory, Flavor::Cpu(), {}}; }
  static QuotaResource Devices(Flavor f) { return {Kind::kDevices, std::move(f), {}}; }
  static QuotaResource Extended(std::string name) { return {Kind::kExtended, Flavor::Cpu(), std::move(name)}; }
  // Returns "cpu", "memory", the flavor name or the extended resource's name.
  std::string Name() const;
  bool operator==(const QuotaResource& o) const {
    return kind == o.kind && flavor == o.flavor && extended == o.extended;
  }
};

// Returns `q` in the ledger's integer unit for `r` (ResourceVector's): millicores for cpu,
// bytes (rounded up) for memory, milli-devices for devices, whole units (bytes for storage,
// rounded up) for extended resources.
int64_t LedgerAmount(const QuotaResource& r, const Quantity& q);

struct Quota {
  QuotaResource resource;
  Quantity nominal;
  std::optional<Quantity> borrowing_limit;  // absent: unlimited within the cohort
  std::optional<Quantity> lending_limit;    // absent: all of nominal may be lent; <= nominal
  bool operator==(const Quota&) const = default;
};

enum class QueueingStrategy : uint8_t {
  kStrictFifo,      // the head blocks the queue until it is admitted
  kBestEffortFifo,  // a head that does not fit is skipped for this cycle (default)
};
// Returns "StrictFIFO" or "BestEffortFIFO".
std::string_view QueueingStrategyName(QueueingStrategy s);
Result<QueueingStrategy> ParseQueueingStrategy(std::string_view text);

// Whom a queue may preempt to take back its own nominal quota lent to other queues of its cohort:
// borrowers of any priority (the default: nominal quota is guaranteed), or only of strictly lower
// priority. Kueue's reclaimWithinCohort (Any / LowerPriority) is the analogue.
enum class ReclaimWithinNominal : uint8_t { kAny, kLowerPriority };
// Returns "Any" or "LowerPriority".
std::string_view ReclaimWithinNominalName(ReclaimWithinNominal r);
Result<ReclaimWithinNominal> ParseReclaimWithinNominal(std::string_view text);

struct Queue {
  std::string name;
  std::string tenant;
  std::string cohort;          // empty: not in a cohort (no borrowing or lending)
  int64_t weight_milli = 1000;  // fair-share weight, exact thousandths ("1.5" → 1500)
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFifo;
  std::vector<Quota> quotas;   // ordered; at most one entry per resource
  std::string description;
  std::vector<std::string> clusters;            // its work runs only there; empty = any cluster
  std::vector<std::string> preferred_clusters;  // tried first when they have room
  ReclaimWithinNominal reclaim_within_nominal = ReclaimWithinNominal::kAny;

  // Returns the quota entry for `r`, or nullptr.
  const Quota* FindQuota(const QuotaResource& r) const;
  bool operator==(const Queue&) const = default;
};

// A node of the cohort tree. Queues join a cohort; cohorts nest through `parent`. A cohort
// may hold quota of its own, shared by everything below it.
struct Cohort {
  std::string name;
  std::string parent;  // empty: a root
  std::vector<Quota> quotas;
  std::string description;
  bool operator==(const Cohort&) const = default;
};

}  // namespace abacus

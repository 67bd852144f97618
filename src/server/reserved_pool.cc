#include "server/reserved_pool.h"

#include "server/elastic_units.h"

namespace abacus::server {

const std::string& ReservationPool(const WorkloadRecord& r) {
  static const std::string kNone;
  const InferenceSpec* inf = r.spec.inference();
  return inf != nullptr && inf->reservation ? inf->reservation->pool : kNone;
}

std::set<int32_t> UnitsOutsidePool(const WorkloadRecord& r, const Ledger& ledger) {
  std::set<int32_t> out;
  const std::string& pool = ReservationPool(r);
  if (pool.empty()) return out;
  for (const auto& p : r.placements) {
    const NodeRecord* n = ledger.FindNode(p.node);
    if (n == nullptr || n->node.pool != pool) out.insert(UnitOf(r, p));
  }
  return out;
}

std::string OutsidePoolLine(const WorkloadRecord& r, const Ledger& ledger) {
  std::set<int32_t> outside = UnitsOutsidePool(r, ledger);
  if (outside.empty()) return "";
  const InferenceSpec* inf = r.spec.inference();
  return std::to_string(outside.size()) + " of " + std::to_string(PlacedUnits(r).size()) +
         " replica(s) run outside reservation pool " + ReservationPool(r) +
         " (overflow: " + (inf->reservation->overflow ? "Allow" : "Deny") + ")";
}

void StageOutsidePoolEvent(const WorkloadRecord& r, const std::set<int32_t>& units, const Ledger& ledger,
                           WriteBatch& batch, Time now) {
  std::set<int32_t> outside = UnitsOutsidePool(r, ledger);
  std::vector<int32_t> now_outside;
  for (int32_t u : units) {
    if (outside.count(u) != 0) now_outside.push_back(u);
  }
  if (now_outside.empty()) return;
  std::string which;
  for (int32_t u : now_outside) which += (which.empty() ? "" : ", ") + std::to_string(u);
  nlohmann::json details = {{"pool", ReservationPool(r)},
                            {"units", now_outside},
                            {"outside", outside.size()},
                            {"placed", PlacedUnits(r).size()},
                            {"overflow", "Allow"}};
  batch.AppendEvent(kWorkloadKind, r.id, "ReplicaOutsidePool",
                    EventJson(r.state, "replica(s) " + which + " placed outside reservation pool " +
                                           ReservationPool(r) + ", which is full; " + OutsidePoolLine(r, ledger),
                              details)
                        .dump(),
                    now);
}

}  // namespace abacus::server

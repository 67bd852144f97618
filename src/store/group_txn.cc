#include "store/group_txn.h"

namespace abacus {

std::vector<size_t> SelectGroupMembers(std::span<const WriteBatch* const> batches,
                                       std::span<CommitResult* const> results, std::span<Status> statuses) {
  std::vector<size_t> members;
  members.reserve(batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    statuses[i] = ValidateBatch(*batches[i]);
    if (!statuses[i].ok()) continue;
    if (!batches[i]->empty()) {
      members.push_back(i);
    } else if (i < results.size() && results[i] != nullptr) {
      results[i]->assigned.clear();
    }
  }
  return members;
}

void FailGroup(const GroupTxn& txn, const std::vector<size_t>& members, std::span<Status> statuses,
               const Status& error) {
  if (txn.in_transaction()) (void)txn.exec(TxnStatement::kRollback);
  for (size_t i : members) {
    if (statuses[i].ok()) statuses[i] = error;
  }
}

void RunGroupTransaction(const GroupTxn& txn, std::span<const WriteBatch* const> batches,
                         std::span<CommitResult* const> results, std::span<Status> statuses,
                         const std::vector<size_t>& members) {
  std::vector<CommitResult> staged(batches.size());
  auto fail = [&](const Status& error) { FailGroup(txn, members, statuses, error); };
  if (Status s = txn.exec(TxnStatement::kBegin); !s.ok()) return fail(s);
  const bool savepoints = members.size() > 1;
  for (size_t i : members) {
    if (savepoints) {
      if (Status s = txn.exec(TxnStatement::kSavepoint); !s.ok()) return fail(s);
    }
    Status applied = txn.apply(*batches[i], staged[i]);
    if (!applied.ok()) {
      statuses[i] = applied;
      // An I/O error, a full disk or an aborted connection may have rolled everything back.
      if (!savepoints || !txn.in_transaction()) return fail(applied);
      if (Status s = txn.exec(TxnStatement::kRollbackToSavepoint); !s.ok()) return fail(s);
    }
    if (savepoints) {
      if (Status s = txn.exec(TxnStatement::kReleaseSavepoint); !s.ok()) return fail(s);
    }
  }
  // The durable commit; only now does any member learn it succeeded.
  if (Status s = txn.exec(TxnStatement::kCommit); !s.ok()) return fail(s);
  for (size_t i : members) {
    if (statuses[i].ok() && i < results.size() && results[i] != nullptr) *results[i] = std::move(staged[i]);
  }
}

}  // namespace abacus

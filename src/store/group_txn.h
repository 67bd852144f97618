// The shape every SQL backend gives a group commit (Store::CommitGroup): validate the batches,
// apply the members in one transaction with a savepoint per batch so that a failing batch rolls
// back alone, commit, and only then hand each member its result. The backends supply the
// statements; this file owns the order and the failure rules.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "store/store.h"

namespace abacus {

enum class TxnStatement { kBegin, kSavepoint, kRollbackToSavepoint, kReleaseSavepoint, kCommit, kRollback };

// What a backend's writer connection does for a group transaction.
struct GroupTxn {
  std::function<Status(TxnStatement)> exec;  // runs one statement
  std::function<bool()> in_transaction;      // false once the backend rolled everything back
  std::function<Status(const WriteBatch&, CommitResult&)> apply;  // one batch's ops
};

// Validates every batch (ValidateBatch) into `statuses`; returns the indexes of the valid,
// non-empty batches (the members). A valid empty batch succeeds at once with no versions.
std::vector<size_t> SelectGroupMembers(std::span<const WriteBatch* const> batches,
                                       std::span<CommitResult* const> results, std::span<Status> statuses);

// Rolls back an open transaction and fails with `error` every member not already failed.
void FailGroup(const GroupTxn& txn, const std::vector<size_t>& members, std::span<Status> statuses,
               const Status& error);

// Applies `members` in one transaction and commits: with several members, each in a savepoint
// that a failing batch rolls back alone (its status says why); a failed statement or commit
// fails the whole group. Each member that committed gets its result.
void RunGroupTransaction(const GroupTxn& txn, std::span<const WriteBatch* const> batches,
                         std::span<CommitResult* const> results, std::span<Status> statuses,
                         const std::vector<size_t>& members);

}  // namespace abacus

// The scheduling lease (HA, docs/operations.md "HA pair with PostgreSQL"): several servers share
// one store; the one holding the lease runs the scheduling loop. Every change of holder bumps
// the lease's fencing token, and the holder's commits carry it (WriteBatch::Fence) so that the
// store refuses a deposed holder's late write.
//
// These are the store-independent parts: the types every backend returns, and the rule that
// decides the next lease row (used by the SQLite and in-memory backends; PostgreSQL states the
// same rule in SQL).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace abacus {

// The lease as one server sees it after trying to take or renew it.
struct LeaseState {
  bool held = false;    // the caller holds the lease now
  std::string holder;   // the current holder; empty when nobody holds an unexpired lease
  std::string address;  // the URL the current holder advertised ("" when none)
  int64_t token = 0;    // the current fencing token (0: never held)

  bool operator==(const LeaseState&) const = default;
};

// What a fenced batch requires: lease `name` is still at `token`.
struct LeaseFence {
  std::string name;
  int64_t token = 0;

  bool operator==(const LeaseFence&) const = default;
};

// One stored lease row.
struct LeaseRow {
  std::string holder;
  std::string address;
  int64_t token = 0;
  int64_t expires_us = 0;  // store clock, microseconds since the epoch

  bool operator==(const LeaseRow&) const = default;
};

// Decides a TryAcquireLease at `now_us`: `holder` takes the lease when nobody holds it or it has
// expired (the token grows by one when the holder changes), renews it when it already holds it
// (same token), and otherwise leaves `current` as it is. Returns the row to store (nullopt: no
// change) and fills `state`.
std::optional<LeaseRow> DecideLease(const std::optional<LeaseRow>& current, std::string_view holder,
                                    std::string_view address, int64_t now_us, Duration ttl,
                                    LeaseState& state);

// Returns the row after `holder` releases it at `now_us` (it expires at once; nullopt when
// `holder` does not hold it).
std::optional<LeaseRow> ReleasedLease(const std::optional<LeaseRow>& current, std::string_view holder,
                                      int64_t now_us);

// Returns OK when `current_token` (nullopt: the lease was never taken) matches `fence`, else
// FailedPrecondition "fenced: lease token N is no longer current ...".
Status CheckFence(const LeaseFence& fence, std::optional<int64_t> current_token);

// Returns InvalidArgument unless the lease name and holder are non-empty and ttl is positive.
Status ValidateLeaseRequest(std::string_view name, std::string_view holder, Duration ttl);

}  // namespace abacus

// Idempotency keys of submissions (issue 20): a client sends `Idempotency-Key: K` with a
// submission; the server stores (user, K) -> (SHA-256 of the body, the answer) in the same commit
// as the workloads, so that a retry of a request whose answer was lost returns the original
// answer (the same ids) instead of a second set of workloads. Keys are scoped per user and
// expire after a TTL (24 h by default); expired ones are ignored and purged.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"

namespace abacus::server {

inline constexpr char kIdempotencyKind[] = "idempotency";
inline constexpr Duration kIdempotencyTtl = std::chrono::hours(24);

// OK for 1–255 printable ASCII characters without spaces; InvalidArgument otherwise.
Status ValidateIdempotencyKey(const std::string& key);

// What the store knows of (user, key).
struct IdempotencyLookup {
  std::optional<std::vector<nlohmann::json>> replay;  // set: the original answer, to return again
  int64_t version = 0;  // the stored record's version when expired (to overwrite); 0: none
};

// Looks (user, key) up at `now`: the original answer when the key was used with the same body
// (`body_sha256`) and has not expired; FailedPrecondition when it was used with another body;
// neither (replay unset) when it is new or expired.
Result<IdempotencyLookup> LookupIdempotencyKey(Store& store, const std::string& user, const std::string& key,
                                               const std::string& body_sha256, Time now);

// Adds the record of (user, key) -> answer `items` to `batch`, conditional on the lookup's
// version (0: must not exist), so that of two concurrent requests with one key only one commits.
void StageIdempotencyKey(WriteBatch& batch, const std::string& user, const std::string& key,
                         const std::string& body_sha256, const std::vector<nlohmann::json>& items, Time now,
                         Duration ttl, int64_t version);

// Deletes the records expired at `now`; returns how many.
Result<int64_t> PurgeExpiredIdempotencyKeys(Store& store, Time now);

}  // namespace abacus::server

// Idempotency keys of writes (issue 20): a client sends `Idempotency-Key: K` with a submission,
// an apply or a cancel; the server stores (user, K) -> (the request's route and digest, the
// answer) in the same commit as the change, so that a retry of a request whose answer was lost
// returns the original answer instead of doing the work twice. Keys are scoped per user and
// expire after a TTL (24 h by default); expired ones are ignored and purged. One rule for every
// route: IdempotentWrite (Check before the change, Stage into its batch, AfterFailedCommit).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"

namespace abacus::server {

inline constexpr char kIdempotencyKind[] = "idempotency";

inline constexpr Duration kIdempotencyTtl = std::chrono::hours(24);

// OK for 1–255 printable ASCII characters without spaces; InvalidArgument otherwise.
Status ValidateIdempotencyKey(const std::string& key);

// What a keyed request is: who sent it, its key, and what it asks.
struct IdempotentRequest {
  std::string user;    // keys are per user
  std::string key;     // the Idempotency-Key header; empty: the request is not keyed
  std::string route;   // method and path as sent: "POST /api/v1/workloads/llama-ft/cancel"
  std::string digest;  // SHA-256 (hex) of the body and the query
  bool keyed() const { return !key.empty(); }
};

// The request `method path?query` with `body` by `user`, keyed by `key` ("" when unkeyed). The
// digest is the body's SHA-256 when there is no query, else that of the body, "\n?" and the
// query parameters (`params`, sorted by name, as "name=value&…").
IdempotentRequest DescribeRequest(std::string user, std::string key, const std::string& method,
                                  const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
                                  std::string_view body);

// One keyed write. Unkeyed requests pass through every step unchanged.
class IdempotentWrite {
 public:
  // `store` must outlive this; `ttl`: how long a stored answer is replayed.
  IdempotentWrite(Store& store, IdempotentRequest request, Duration ttl);
  // Lets the next request with the same (user, key) in this process go on (see Check).
  ~IdempotentWrite();
  IdempotentWrite(const IdempotentWrite&) = delete;
  IdempotentWrite& operator=(const IdempotentWrite&) = delete;

  const IdempotentRequest& request() const { return request_; }
  // The store key of this request's record (user and key); empty when unkeyed.
  std::string store_key() const;

  // For a change made off the scheduling loop (a submission): waits (at most 30 s) until no
  // other request of this process holds (user, key), then holds it until this is destroyed. A
  // Check after it sees what a concurrent repeat committed, so repeats replay the first answer
  // instead of racing its change. False when unkeyed or when the wait timed out. (Changes made
  // on the loop need none: the loop runs them one after another and checks again there.)
  bool HoldKeyInFlight();

  // Looks (user, key) up at `now`: true when the key was used for this same route and digest
  // and has not expired (first_answer() then holds that request's answer); FailedPrecondition
  // naming the key when it was used for another route or body; false when it is new or expired
  // (or the request is unkeyed). InvalidArgument for a malformed key.
  Result<bool> Check(Time now);
  // The first answer, after a Check that returned true.
  const nlohmann::json& first_answer() const { return first_answer_; }

  // Adds (user, key) -> `encode()` (the answer as the HTTP edge writes it) to `batch`,
  // conditional on what the last Check saw (a record that did not exist must still not exist),
  // so that of two concurrent requests with one key only one commits. Nothing when unkeyed:
  // `encode` is not called. The encoding is kept for the edge (TakeStaged).
  void Stage(WriteBatch& batch, const std::function<nlohmann::json()>& encode, Time now);
  // The answer the last Stage encoded, handed over once (nullopt: none, or unkeyed): the edge
  // writes it as it is instead of encoding the answer again.
  std::optional<nlohmann::json> TakeStaged() { return std::exchange(staged_, std::nullopt); }

  // After the change's commit failed with `failed`: the first answer when a concurrent request
  // with the same key committed first (the commit was aborted on the key's record); `failed`
  // otherwise.
  Result<nlohmann::json> AfterFailedCommit(const Status& failed, Time now);

 private:
  Store& store_;
  IdempotentRequest request_;
  Duration ttl_;
  int64_t version_ = 0;  // the stored record's version when expired (to overwrite); 0: none
  bool holds_key_ = false;  // this request holds its key among the requests in flight
  nlohmann::json first_answer_;
  std::optional<nlohmann::json> staged_;
};

// Deletes the records expired at `now`; returns how many.
Result<int64_t> PurgeExpiredIdempotencyKeys(Store& store, Time now);

}  // namespace abacus::server

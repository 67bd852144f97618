#include "server/idempotency.h"

#include <algorithm>
#include <condition_variable>
#include <set>

#include "common/mutex.h"
#include "govern/crypto.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// Records stored before keys covered more than submissions name no route.
constexpr char kSubmitRoute[] = "POST /api/v1/workloads";

std::string StoreKey(const std::string& user, const std::string& key) {
  return govern::Sha256Hex(user + "\n" + key);
}

// The keys of the keyed requests in flight in this process. A second request with a key in
// flight waits until the first is done (its change committed or refused), then looks its key up:
// concurrent repeats of one request (a client's retry after a timeout) replay the first answer.
// Without it a repeat raced the first past its lookup and was refused by the change itself (the
// probe of 2026-12-07: 409 "already exists" for 2 to 5 of 10 concurrent repeats of a submission).
class KeysInFlight {
 public:
  static KeysInFlight& Get() {
    static KeysInFlight* keys = new KeysInFlight();  // never destroyed: requests may outlive main
    return *keys;
  }
  // Takes `key`, waiting at most `limit` for its holder; false when the wait timed out (the
  // request then goes on, as before: the store's condition on the key's record still holds).
  bool Take(const std::string& key, std::chrono::milliseconds limit) {
    MutexLock lock(mu_);
    if (!lock.WaitFor(released_, limit, [&]() REQUIRES(mu_) { return held_.count(key) == 0; })) return false;
    held_.insert(key);
    return true;
  }
  void Release(const std::string& key) {
    {
      MutexLock lock(mu_);
      held_.erase(key);
    }
    released_.notify_all();
  }

 private:
  Mutex mu_;
  std::condition_variable released_;
  std::set<std::string> held_ GUARDED_BY(mu_);
};

}  // namespace

Status ValidateIdempotencyKey(const std::string& key) {
  if (key.empty() || key.size() > 255) {
    return InvalidArgument("Idempotency-Key: expected 1 to 255 characters, got " + std::to_string(key.size()));
  }
  for (char c : key) {
    if (c < 0x21 || c > 0x7e) return InvalidArgument("Idempotency-Key: only printable ASCII without spaces");
  }
  return Status::OK();
}

IdempotentRequest DescribeRequest(std::string user, std::string key, const std::string& method, const std::string& path,
                                  const std::vector<std::pair<std::string, std::string>>& params, std::string_view body) {
  IdempotentRequest r;
  r.user = std::move(user);
  r.key = std::move(key);
  r.route = method + " " + path;
  if (params.empty()) {
    r.digest = govern::Sha256Hex(body);
  } else {
    std::vector<std::pair<std::string, std::string>> sorted = params;
    std::sort(sorted.begin(), sorted.end());
    std::string text(body);
    text += "\n?";
    for (size_t i = 0; i < sorted.size(); ++i) text += (i ? "&" : "") + sorted[i].first + "=" + sorted[i].second;
    r.digest = govern::Sha256Hex(text);
  }
  return r;
}

IdempotentWrite::IdempotentWrite(Store& store, IdempotentRequest request, Duration ttl)
    : store_(store), request_(std::move(request)), ttl_(ttl) {}

IdempotentWrite::~IdempotentWrite() {
  if (holds_key_) KeysInFlight::Get().Release(store_key());
}

bool IdempotentWrite::HoldKeyInFlight() {
  if (!request_.keyed() || !ValidateIdempotencyKey(request_.key).ok()) return false;
  if (!holds_key_) holds_key_ = KeysInFlight::Get().Take(store_key(), std::chrono::seconds(30));
  return holds_key_;
}

Result<bool> IdempotentWrite::Check(Time now) {
  if (!request_.keyed()) return false;
  ABACUS_RETURN_IF_ERROR(ValidateIdempotencyKey(request_.key));
  version_ = 0;
  ABACUS_ASSIGN_OR_RETURN(auto found, store_.Get(kIdempotencyKind, StoreKey(request_.user, request_.key)));
  if (!found) return false;
  json doc = json::parse(found->json, nullptr, false);
  const bool has_answer = doc.is_object() && (doc.contains("answer") || (doc.contains("items") && doc["items"].is_array()));
  if (!has_answer) return Internal("stored idempotency record " + found->key + " is unreadable");
  if (doc.value("expiresUs", int64_t{0}) <= ToMicros(now)) {
    version_ = found->version;  // expired: the key is new again
    return false;
  }
  const std::string used_at = FormatTime(FromMicros(doc.value("createdUs", int64_t{0})));
  const std::string route = doc.value("route", std::string(kSubmitRoute));
  if (route != request_.route) {
    return FailedPrecondition("Idempotency-Key '" + request_.key + "' was used at " + used_at + " for " + route +
                              ", not " + request_.route + "; send a new key for a new request");
  }
  if (doc.value("digest", doc.value("bodySha256", "")) != request_.digest) {
    return FailedPrecondition("Idempotency-Key '" + request_.key + "' was used at " + used_at +
                              " for a different request body or query; send a new key for a new request");
  }
  first_answer_ = std::move(doc.contains("answer") ? doc["answer"] : doc["items"]);
  return true;
}

std::string IdempotentWrite::store_key() const {
  return request_.keyed() ? StoreKey(request_.user, request_.key) : std::string();
}

void IdempotentWrite::Stage(WriteBatch& batch, const std::function<json()>& encode, Time now) {
  if (!request_.keyed()) return;
  staged_ = encode();
  const json& answer = *staged_;
  json doc = {{"user", request_.user},
              {"key", request_.key},
              {"route", request_.route},
              {"digest", request_.digest},
              {"answer", answer},
              {"createdUs", ToMicros(now)},
              {"expiresUs", ToMicros(now + ttl_)}};
  batch.PutJson(kIdempotencyKind, StoreKey(request_.user, request_.key), doc, version_);
}

Result<json> IdempotentWrite::AfterFailedCommit(const Status& failed, Time now) {
  if (!request_.keyed() || failed.code() != StatusCode::kAborted) return failed;
  ABACUS_ASSIGN_OR_RETURN(bool repeat, Check(now));
  if (!repeat) return failed;
  return first_answer_;
}

Result<int64_t> PurgeExpiredIdempotencyKeys(Store& store, Time now) {
  ABACUS_ASSIGN_OR_RETURN(auto records, store.List(kIdempotencyKind));
  WriteBatch batch;
  for (const auto& r : records) {
    json doc = json::parse(r.json, nullptr, false);
    if (doc.is_object() && doc.value("expiresUs", int64_t{0}) > ToMicros(now)) continue;
    batch.Delete(kIdempotencyKind, r.key, r.version);  // unless a retry renewed it meanwhile
  }
  if (batch.empty()) return int64_t{0};
  ABACUS_RETURN_IF_ERROR(store.Commit(batch));
  return static_cast<int64_t>(batch.size());
}

}  // namespace abacus::server

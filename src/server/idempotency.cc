#include "server/idempotency.h"

#include "govern/crypto.h"

namespace abacus::server {
namespace {

using nlohmann::json;

std::string StoreKey(const std::string& user, const std::string& key) {
  return govern::Sha256Hex(user + "\n" + key);
}

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

Result<IdempotencyLookup> LookupIdempotencyKey(Store& store, const std::string& user, const std::string& key,
                                               const std::string& body_sha256, Time now) {
  IdempotencyLookup out;
  ABACUS_ASSIGN_OR_RETURN(auto found, store.Get(kIdempotencyKind, StoreKey(user, key)));
  if (!found) return out;
  json doc = json::parse(found->json, nullptr, false);
  if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) {
    return Internal("stored idempotency record " + found->key + " is unreadable");
  }
  if (doc.value("expiresUs", int64_t{0}) <= ToMicros(now)) {
    out.version = found->version;  // expired: the key is new again
    return out;
  }
  if (doc.value("bodySha256", "") != body_sha256) {
    return FailedPrecondition("Idempotency-Key '" + key + "' was used at " +
                              FormatTime(FromMicros(doc.value("createdUs", int64_t{0}))) +
                              " for a different request body; send a new key for a new request");
  }
  out.replay = doc["items"].get<std::vector<json>>();
  return out;
}

void StageIdempotencyKey(WriteBatch& batch, const std::string& user, const std::string& key,
                         const std::string& body_sha256, const std::vector<json>& items, Time now, Duration ttl,
                         int64_t version) {
  json doc = {{"user", user},
              {"key", key},
              {"bodySha256", body_sha256},
              {"items", items},
              {"createdUs", ToMicros(now)},
              {"expiresUs", ToMicros(now + ttl)}};
  batch.PutJson(kIdempotencyKind, StoreKey(user, key), doc, version);
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

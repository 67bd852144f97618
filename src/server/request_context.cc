// The request a write serves, and the audit entry it carries (request_context.h).
#include "server/request_context.h"

#include <random>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace abacus::server {
namespace {

using nlohmann::json;

constexpr size_t kSummaryMax = 1024;

}  // namespace

std::string TruncateSummary(std::string s) {
  if (s.size() > kSummaryMax) s = s.substr(0, kSummaryMax - 3) + "...";
  return s;
}

namespace {

// `request` when it is a request being served; null otherwise.
RequestContext* Served(RequestContext* request) { return request != nullptr && request->active ? request : nullptr; }
const RequestContext* Served(const RequestContext* request) {
  return request != nullptr && request->active ? request : nullptr;
}

}  // namespace

void NoteRequestObject(RequestContext* request, const std::string& kind, const std::string& name,
                       const std::string& tenant) {
  RequestContext* ctx = Served(request);
  if (ctx == nullptr) return;
  ctx->object_kind = kind;
  ctx->object_name = name;
  ctx->tenant = tenant;
}

std::string RequestIdOf(const RequestContext* request) {
  const RequestContext* ctx = Served(request);
  return ctx != nullptr ? ctx->request_id : "";
}

// The fields of a request's entry that the request context knows (who, what, which object).
govern::AuditRecord ContextRecord(const RequestContext& ctx) {
  govern::AuditRecord r;
  r.actor = ctx.caller.Actor();
  r.action = ctx.action;
  r.object_kind = ctx.object_kind;
  r.object_name = ctx.object_name;
  r.tenant = ctx.tenant;
  r.before = TruncateSummary(ctx.before);
  r.request_id = ctx.request_id;
  return r;
}

std::optional<govern::AuditRecord> RequestAuditRecord(const RequestContext* request, std::string after) {
  const RequestContext* ctx = Served(request);
  if (ctx == nullptr || !ctx->audit || ctx->caller.principal.name.empty()) return std::nullopt;
  govern::AuditRecord r = ContextRecord(*ctx);
  r.after = TruncateSummary(std::move(after));
  r.result = "ok";
  return r;
}

void NoteRequestAudited(RequestContext* request) {
  if (RequestContext* ctx = Served(request)) ctx->audited = true;
}

void NoteRequestReplayed(RequestContext* request, const std::string& key) {
  if (RequestContext* ctx = Served(request)) ctx->replayed_key = key;
}

namespace {

// What a batch writes, for the "after" of the entry committed with it.
std::string BatchSummary(const WriteBatch& batch) {
  json out = json::array();
  for (const WriteOp& op : batch.ops()) {
    if (const auto* put = std::get_if<PutOp>(&op)) {
      out.push_back("put " + put->kind + "/" + put->key);
    } else if (const auto* del = std::get_if<DeleteOp>(&op)) {
      out.push_back("delete " + del->kind + "/" + del->key);
    } else if (const auto* event = std::get_if<EventOp>(&op)) {
      out.push_back("event " + event->object_kind + "/" + event->object_key + " " + event->type);
    }
  }
  return TruncateSummary(out.dump());
}

}  // namespace

std::shared_ptr<PendingRequestAudit> PendingAuditOf(RequestContext* request) {
  RequestContext* ctx = Served(request);
  if (ctx == nullptr || !ctx->audit || ctx->audited || ctx->caller.principal.name.empty()) return nullptr;
  if (!ctx->pending) ctx->pending = std::make_shared<PendingRequestAudit>();
  // What the request knows now (its object is noted while it is served); fixed once claimed.
  if (!ctx->pending->claimed.load()) ctx->pending->record = ContextRecord(*ctx);
  return ctx->pending;
}

std::optional<govern::AuditRecord> ClaimRequestAudit(PendingRequestAudit* pending, const WriteBatch& batch) {
  if (pending == nullptr || batch.empty() || pending->committed.load() || pending->claimed.exchange(true)) {
    return std::nullopt;
  }
  govern::AuditRecord r = pending->record;
  r.after = BatchSummary(batch);
  r.result = "ok";
  return r;
}

void SettleRequestAudit(PendingRequestAudit* pending, bool committed) {
  if (pending == nullptr) return;
  if (committed) {
    pending->committed = true;
  } else {
    pending->claimed = false;
  }
}

// A request id no other request of this process gets, hard to guess across restarts: "req-" and
// 16 hex digits from a per-thread generator seeded once from the system's random source (a
// correlation id, not a secret; RAND_bytes per request cost 2% of a submission's CPU).
std::string NewRequestId() {
  thread_local uint64_t state = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  // splitmix64: a bijection of the counter, so ids of one thread never repeat.
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  std::string id = "req-0000000000000000";
  for (size_t i = id.size(); i > 4; --i, z >>= 4) id[i - 1] = "0123456789abcdef"[z & 15];
  return id;
}

}  // namespace abacus::server

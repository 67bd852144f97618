#include "store/store.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "store/memory_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"

namespace abacus {

WriteBatch& WriteBatch::Put(std::string kind, std::string key, std::string json,
                            std::optional<int64_t> expected_version) {
  ops_.emplace_back(PutOp{std::move(kind), std::move(key), std::move(json), expected_version});
  return *this;
}

WriteBatch& WriteBatch::PutJson(std::string kind, std::string key, const nlohmann::json& doc,
                                std::optional<int64_t> expected_version) {
  ops_.emplace_back(PutOp{std::move(kind), std::move(key), doc.dump(), expected_version, true});
  return *this;
}

WriteBatch& WriteBatch::AppendEventJson(std::string object_kind, std::string object_key, std::string type,
                                        const nlohmann::json& doc, Time time) {
  ops_.emplace_back(EventOp{std::move(object_kind), std::move(object_key), std::move(type), doc.dump(),
                            ToMicros(time), true});
  return *this;
}

WriteBatch& WriteBatch::AppendJournalJson(std::string stream, const nlohmann::json& doc, Time time) {
  ops_.emplace_back(JournalOp{std::move(stream), doc.dump(), ToMicros(time), true});
  return *this;
}

WriteBatch& WriteBatch::AppendJournalJsonAt(std::string stream, const nlohmann::json& doc, Time time,
                                            int64_t seq) {
  ops_.emplace_back(JournalOp{std::move(stream), doc.dump(), ToMicros(time), true, seq});
  return *this;
}

WriteBatch& WriteBatch::AppendJournalTextAt(std::string stream, std::string json, Time time, int64_t seq) {
  ops_.emplace_back(JournalOp{std::move(stream), std::move(json), ToMicros(time), true, seq});
  return *this;
}

Status JournalSeqConflict(const JournalOp& op, int64_t assigned) {
  return Aborted("journal " + op.stream + ": entry expected as seq " + std::to_string(op.expected_seq.value_or(0)) +
                 " would be seq " + std::to_string(assigned) + " (the stream was written by someone else)");
}

WriteBatch& WriteBatch::Delete(std::string kind, std::string key,
                               std::optional<int64_t> expected_version) {
  ops_.emplace_back(DeleteOp{std::move(kind), std::move(key), expected_version});
  return *this;
}

WriteBatch& WriteBatch::AppendEvent(std::string object_kind, std::string object_key,
                                    std::string type, std::string json, Time time) {
  ops_.emplace_back(EventOp{std::move(object_kind), std::move(object_key), std::move(type),
                            std::move(json), ToMicros(time)});
  return *this;
}

WriteBatch& WriteBatch::AppendJournal(std::string stream, std::string json, Time time) {
  ops_.emplace_back(JournalOp{std::move(stream), std::move(json), ToMicros(time)});
  return *this;
}

WriteBatch& WriteBatch::PutMeta(std::string key, std::string value) {
  ops_.emplace_back(MetaOp{std::move(key), std::move(value)});
  return *this;
}

WriteBatch& WriteBatch::Fence(LeaseFence fence) {
  fence_ = std::move(fence);
  return *this;
}

WriteBatch& WriteBatch::Append(const WriteBatch& other) {
  ops_.insert(ops_.end(), other.ops_.begin(), other.ops_.end());
  if (other.fence_) fence_ = other.fence_;
  return *this;
}

namespace {

Status Malformed(size_t index, std::string_view what) {
  return InvalidArgument("write batch op " + std::to_string(index) + ": " + std::string(what));
}

bool IsJson(const std::string& text) { return nlohmann::json::accept(text); }

// Returns OK when op `index` is well formed.
Status ValidateOp(size_t index, const WriteOp& op) {
  if (const auto* put = std::get_if<PutOp>(&op)) {
    if (put->kind.empty() || put->key.empty()) return Malformed(index, "put needs a kind and a key");
    if (put->expected_version && *put->expected_version < 0) {
      return Malformed(index, "expected version must be >= 0");
    }
    if (!put->json_checked && !IsJson(put->json)) {
      return Malformed(index, "put " + put->kind + "/" + put->key + ": document is not valid JSON");
    }
  } else if (const auto* del = std::get_if<DeleteOp>(&op)) {
    if (del->kind.empty() || del->key.empty()) {
      return Malformed(index, "delete needs a kind and a key");
    }
    if (del->expected_version && *del->expected_version <= 0) {
      return Malformed(index, "delete's expected version must be >= 1");
    }
  } else if (const auto* event = std::get_if<EventOp>(&op)) {
    if (event->object_kind.empty() || event->object_key.empty() || event->type.empty()) {
      return Malformed(index, "event needs an object kind, an object key and a type");
    }
    if (!event->json_checked && !IsJson(event->json)) return Malformed(index, "event document is not valid JSON");
  } else if (const auto* entry = std::get_if<JournalOp>(&op)) {
    if (entry->stream.empty()) return Malformed(index, "journal entry needs a stream");
    if (entry->expected_seq && *entry->expected_seq <= 0) {
      return Malformed(index, "journal entry's expected seq must be >= 1");
    }
    if (!entry->json_checked && !IsJson(entry->json)) {
      return Malformed(index, "journal entry for '" + entry->stream + "' is not valid JSON");
    }
  } else if (const auto* meta = std::get_if<MetaOp>(&op)) {
    if (meta->key.empty()) return Malformed(index, "meta needs a key");
  }
  return Status::OK();
}

}  // namespace

Status ValidateBatch(const WriteBatch& batch) {
  if (batch.fence() && batch.fence()->name.empty()) return InvalidArgument("write batch: fence needs a lease name");
  for (size_t i = 0; i < batch.ops().size(); ++i) {
    ABACUS_RETURN_IF_ERROR(ValidateOp(i, batch.ops()[i]));
  }
  return Status::OK();
}

Result<LeaseState> Store::TryAcquireLease(std::string_view name, std::string_view, std::string_view, Duration) {
  return FailedPrecondition("store " + Describe() + " offers no lease '" + std::string(name) + "'");
}

Status Store::ReleaseLease(std::string_view name, std::string_view) {
  return FailedPrecondition("store " + Describe() + " offers no lease '" + std::string(name) + "'");
}

Status Store::Commit(const WriteBatch& batch, CommitResult* result) {
  const WriteBatch* batches[] = {&batch};
  CommitResult* results[] = {result};
  Status statuses[1];
  CommitGroup(batches, results, statuses);
  return statuses[0];
}

namespace {

// Splits "a=1&b=2" into the options of a sqlite url.
Status ParseSqliteQuery(std::string_view query, SqliteStoreOptions& options) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument("store url option '" + std::string(pair) + "' needs a value");
    }
    std::string_view name = pair.substr(0, eq);
    std::string_view value = pair.substr(eq + 1);
    if (name == "synchronous") {
      if (value == "full") {
        options.synchronous = SqliteSynchronous::kFull;
      } else if (value == "normal") {
        options.synchronous = SqliteSynchronous::kNormal;
      } else {
        return InvalidArgument("store url: synchronous must be 'full' or 'normal', not '" +
                               std::string(value) + "'");
      }
    } else if (name == "busy_timeout_ms") {
      int ms = 0;
      try {
        size_t used = 0;
        ms = std::stoi(std::string(value), &used);
        if (used != value.size() || ms < 0) throw std::invalid_argument("bad");
      } catch (const std::exception&) {
        return InvalidArgument("store url: busy_timeout_ms must be a non-negative integer, not '" +
                               std::string(value) + "'");
      }
      options.busy_timeout_ms = ms;
    } else if (name == "max_pages") {
      int64_t pages = 0;
      try {
        size_t used = 0;
        pages = std::stoll(std::string(value), &used);
        if (used != value.size() || pages < 0) throw std::invalid_argument("bad");
      } catch (const std::exception&) {
        return InvalidArgument("store url: max_pages must be a non-negative integer, not '" + std::string(value) +
                               "'");
      }
      options.max_pages = pages;
    } else {
      return InvalidArgument("store url: unknown option '" + std::string(name) +
                             "' (known: synchronous, busy_timeout_ms, max_pages)");
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Store>> OpenStore(std::string_view url, const StoreOptions& options) {
  const Clock& clock = options.clock ? *options.clock : SystemClock::Get();
  constexpr std::string_view kSqlite = "sqlite://";
  if (url.starts_with(kSqlite)) {
    std::string_view rest = url.substr(kSqlite.size());
    SqliteStoreOptions sqlite_options;
    sqlite_options.clock = &clock;
    if (size_t q = rest.find('?'); q != std::string_view::npos) {
      ABACUS_RETURN_IF_ERROR(ParseSqliteQuery(rest.substr(q + 1), sqlite_options));
      rest = rest.substr(0, q);
    }
    if (rest.empty()) return InvalidArgument("store url '" + std::string(url) + "' names no file");
    ABACUS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store,
                            SqliteStore::Open(std::string(rest), sqlite_options));
    return std::unique_ptr<Store>(std::move(store));
  }
  if (url == "memory://" || url == "memory:") {
    return std::unique_ptr<Store>(std::make_unique<InMemoryStore>(clock));
  }
  if (url.starts_with("postgres://") || url.starts_with("postgresql://")) {
    PostgresStoreOptions pg_options;
    pg_options.clock = &clock;
    ABACUS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> store,
                            PostgresStore::Open(std::string(url), pg_options));
    return std::unique_ptr<Store>(std::move(store));
  }
  // Name only the scheme: a url may carry a password.
  std::string_view scheme = url.substr(0, url.find("://"));
  return InvalidArgument("unknown store url scheme '" + std::string(scheme) +
                         "': expected sqlite://PATH, sqlite://:memory:, memory:// or "
                         "postgres://...");
}

}  // namespace abacus

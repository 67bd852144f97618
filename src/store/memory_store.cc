#include "store/memory_store.h"

#include <algorithm>
#include <set>

#include "common/mutex.h"

namespace abacus {

namespace {

Status VersionConflict(const std::string& kind, const std::string& key, int64_t expected,
                       const std::optional<ObjectRecord>& found) {
  std::string msg = kind + "/" + key + ": expected version " + std::to_string(expected) + ", ";
  msg += found ? "found version " + std::to_string(found->version) : std::string("not found");
  return Aborted(std::move(msg));
}

}  // namespace

InMemoryStore::InMemoryStore(const Clock& clock) : clock_(clock) {}

void InMemoryStore::CommitGroup(std::span<const WriteBatch* const> batches,
                                std::span<CommitResult* const> results,
                                std::span<Status> statuses) {
  MutexLock lock(mu_);
  const int64_t now_us = ToMicros(clock_.Now());
  for (size_t i = 0; i < batches.size(); ++i) {
    CommitResult result;
    statuses[i] = ValidateBatch(*batches[i]);
    if (statuses[i].ok()) statuses[i] = ApplyBatch(*batches[i], now_us, result);
    if (statuses[i].ok() && i < results.size() && results[i] != nullptr) {
      *results[i] = std::move(result);
    }
  }
}

Status InMemoryStore::ApplyBatch(const WriteBatch& batch, int64_t now_us, CommitResult& result) {
  if (const auto& fence = batch.fence()) {
    auto it = leases_.find(fence->name);
    ABACUS_RETURN_IF_ERROR(
        CheckFence(*fence, it == leases_.end() ? std::nullopt : std::optional<int64_t>(it->second.token)));
  }
  std::vector<Undo> undo;
  result.assigned.assign(batch.size(), 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    Status s = ApplyOp(batch.ops()[i], now_us, result.assigned[i], undo);
    if (!s.ok()) {
      Rollback(undo);
      return s;
    }
  }
  return Status::OK();
}

Status InMemoryStore::ApplyOp(const WriteOp& op, int64_t now_us, int64_t& assigned,
                              std::vector<Undo>& undo) {
  if (const auto* put = std::get_if<PutOp>(&op)) {
    ObjectKey id{put->kind, put->key};
    auto it = objects_.find(id);
    std::optional<ObjectRecord> previous;
    if (it != objects_.end()) previous = it->second;
    if (put->expected_version) {
      int64_t found = previous ? previous->version : 0;
      if (found != *put->expected_version) {
        return VersionConflict(put->kind, put->key, *put->expected_version, previous);
      }
    }
    ObjectRecord record{put->kind, put->key, previous ? previous->version + 1 : 1, put->json,
                        now_us};
    assigned = record.version;
    objects_.insert_or_assign(id, std::move(record));
    undo.push_back(Undo{Undo::Kind::kObject, std::move(id), std::move(previous), {}, {}});
  } else if (const auto* del = std::get_if<DeleteOp>(&op)) {
    ObjectKey id{del->kind, del->key};
    auto it = objects_.find(id);
    std::optional<ObjectRecord> previous;
    if (it != objects_.end()) previous = it->second;
    if (del->expected_version && (!previous || previous->version != *del->expected_version)) {
      return VersionConflict(del->kind, del->key, *del->expected_version, previous);
    }
    if (previous) {
      objects_.erase(it);
      undo.push_back(Undo{Undo::Kind::kObject, std::move(id), std::move(previous), {}, {}});
    }
  } else if (const auto* event = std::get_if<EventOp>(&op)) {
    events_.push_back(EventRecord{++last_event_seq_, event->object_kind, event->object_key,
                                  event->time_us, event->type, event->json});
    assigned = last_event_seq_;
    undo.push_back(Undo{Undo::Kind::kEvent, {}, {}, {}, {}});
  } else if (const auto* entry = std::get_if<JournalOp>(&op)) {
    std::vector<JournalRecord>& stream = journal_[entry->stream];
    int64_t seq = stream.empty() ? 1 : stream.back().seq + 1;
    if (entry->expected_seq && *entry->expected_seq != seq) {
      if (stream.empty()) journal_.erase(entry->stream);
      return JournalSeqConflict(*entry, seq);
    }
    stream.push_back(JournalRecord{entry->stream, seq, entry->time_us, entry->json});
    assigned = seq;
    undo.push_back(Undo{Undo::Kind::kJournal, {}, {}, entry->stream, {}});
  } else if (const auto* meta = std::get_if<MetaOp>(&op)) {
    std::optional<std::string> previous;
    if (auto it = meta_.find(meta->key); it != meta_.end()) previous = it->second;
    meta_.insert_or_assign(meta->key, meta->value);
    undo.push_back(Undo{Undo::Kind::kMeta, {}, {}, meta->key, std::move(previous)});
  }
  return Status::OK();
}

void InMemoryStore::Rollback(std::vector<Undo>& undo) {
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    switch (it->kind) {
      case Undo::Kind::kObject:
        if (it->previous) {
          objects_.insert_or_assign(it->object, std::move(*it->previous));
        } else {
          objects_.erase(it->object);
        }
        break;
      case Undo::Kind::kEvent:
        events_.pop_back();
        --last_event_seq_;
        break;
      case Undo::Kind::kJournal: {
        auto stream = journal_.find(it->name);
        stream->second.pop_back();
        if (stream->second.empty()) journal_.erase(stream);
        break;
      }
      case Undo::Kind::kMeta:
        if (it->previous_meta) {
          meta_.insert_or_assign(it->name, std::move(*it->previous_meta));
        } else {
          meta_.erase(it->name);
        }
        break;
    }
  }
  undo.clear();
}

Result<std::optional<ObjectRecord>> InMemoryStore::Get(std::string_view kind,
                                                       std::string_view key) {
  MutexLock lock(mu_);
  auto it = objects_.find(ObjectKey{std::string(kind), std::string(key)});
  if (it == objects_.end()) return std::optional<ObjectRecord>();
  return std::optional<ObjectRecord>(it->second);
}

Result<std::vector<ObjectRecord>> InMemoryStore::List(std::string_view kind) {
  MutexLock lock(mu_);
  std::vector<ObjectRecord> out;
  for (auto it = objects_.lower_bound(ObjectKey{std::string(kind), std::string()});
       it != objects_.end() && it->first.first == kind; ++it) {
    out.push_back(it->second);
  }
  return out;
}

Result<int64_t> InMemoryStore::Count(std::string_view kind) {
  ABACUS_ASSIGN_OR_RETURN(std::vector<ObjectRecord> all, List(kind));
  return static_cast<int64_t>(all.size());
}

Result<std::vector<EventRecord>> InMemoryStore::Events(std::string_view kind,
                                                       std::string_view key, int64_t after_seq,
                                                       size_t limit) {
  MutexLock lock(mu_);
  std::vector<EventRecord> out;
  auto it = std::upper_bound(events_.begin(), events_.end(), after_seq,
                             [](int64_t seq, const EventRecord& e) { return seq < e.seq; });
  for (; it != events_.end() && (limit == 0 || out.size() < limit); ++it) {
    if (it->object_kind == kind && it->object_key == key) out.push_back(*it);
  }
  return out;
}

Result<std::vector<JournalRecord>> InMemoryStore::Journal(std::string_view stream,
                                                          int64_t after_seq, size_t limit) {
  MutexLock lock(mu_);
  std::vector<JournalRecord> out;
  auto found = journal_.find(stream);
  if (found == journal_.end()) return out;
  const std::vector<JournalRecord>& entries = found->second;
  auto it = std::upper_bound(entries.begin(), entries.end(), after_seq,
                             [](int64_t seq, const JournalRecord& e) { return seq < e.seq; });
  for (; it != entries.end() && (limit == 0 || out.size() < limit); ++it) out.push_back(*it);
  return out;
}

Result<std::optional<std::string>> InMemoryStore::GetMeta(std::string_view key) {
  MutexLock lock(mu_);
  auto it = meta_.find(key);
  if (it == meta_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

// --- StoreCopyAccess ---

Result<std::vector<std::string>> InMemoryStore::ObjectKinds() {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, record] : objects_) {
    if (out.empty() || out.back() != id.first) out.push_back(id.first);
  }
  return out;
}

Result<std::vector<std::string>> InMemoryStore::JournalStreams() {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [stream, entries] : journal_) {
    if (!entries.empty()) out.push_back(stream);
  }
  return out;
}

Result<std::vector<EventRecord>> InMemoryStore::EventsAfter(int64_t after_seq, size_t limit) {
  MutexLock lock(mu_);
  std::vector<EventRecord> out;
  auto it = std::upper_bound(events_.begin(), events_.end(), after_seq,
                             [](int64_t seq, const EventRecord& e) { return seq < e.seq; });
  for (; it != events_.end() && (limit == 0 || out.size() < limit); ++it) out.push_back(*it);
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> InMemoryStore::AllMeta() {
  MutexLock lock(mu_);
  return std::vector<std::pair<std::string, std::string>>(meta_.begin(), meta_.end());
}

Status InMemoryStore::Load(const StoreRecords& records) {
  MutexLock lock(mu_);
  // Check everything first: a load applies whole or not at all.
  std::set<ObjectKey> objects;
  for (const ObjectRecord& o : records.objects) {
    if (objects_.contains(ObjectKey{o.kind, o.key}) || !objects.insert({o.kind, o.key}).second) {
      return Aborted("load: object " + o.kind + "/" + o.key + " already exists");
    }
  }
  std::set<int64_t> seqs;
  for (const EventRecord& e : records.events) {
    bool taken = std::binary_search(events_.begin(), events_.end(), e,
                                    [](const EventRecord& a, const EventRecord& b) {
                                      return a.seq < b.seq;
                                    });
    if (taken || !seqs.insert(e.seq).second) {
      return Aborted("load: event seq " + std::to_string(e.seq) + " already exists");
    }
  }
  std::set<std::pair<std::string, int64_t>> entries;
  for (const JournalRecord& j : records.journal) {
    auto found = journal_.find(j.stream);
    bool taken = found != journal_.end() &&
                 std::any_of(found->second.begin(), found->second.end(),
                             [&](const JournalRecord& e) { return e.seq == j.seq; });
    if (taken || !entries.insert({j.stream, j.seq}).second) {
      return Aborted("load: journal entry " + j.stream + "/" + std::to_string(j.seq) +
                     " already exists");
    }
  }
  auto by_seq = [](const auto& a, const auto& b) { return a.seq < b.seq; };
  for (const ObjectRecord& o : records.objects) objects_.emplace(ObjectKey{o.kind, o.key}, o);
  events_.insert(events_.end(), records.events.begin(), records.events.end());
  std::sort(events_.begin(), events_.end(), by_seq);
  if (!events_.empty()) last_event_seq_ = std::max(last_event_seq_, events_.back().seq);
  std::set<std::string> touched;
  for (const JournalRecord& j : records.journal) {
    journal_[j.stream].push_back(j);
    touched.insert(j.stream);
  }
  for (const std::string& name : touched) {
    std::sort(journal_[name].begin(), journal_[name].end(), by_seq);
  }
  for (const auto& [key, value] : records.meta) meta_[key] = value;
  return Status::OK();
}

Status InMemoryStore::Erase() {
  MutexLock lock(mu_);
  objects_.clear();
  events_.clear();
  last_event_seq_ = 0;
  journal_.clear();
  meta_.clear();
  return Status::OK();
}

Result<LeaseState> InMemoryStore::TryAcquireLease(std::string_view name, std::string_view holder,
                                                  std::string_view address, Duration ttl) {
  ABACUS_RETURN_IF_ERROR(ValidateLeaseRequest(name, holder, ttl));
  MutexLock lock(mu_);
  auto it = leases_.find(name);
  std::optional<LeaseRow> current;
  if (it != leases_.end()) current = it->second;
  LeaseState state;
  if (auto next = DecideLease(current, holder, address, ToMicros(clock_.Now()), ttl, state)) {
    leases_.insert_or_assign(std::string(name), std::move(*next));
  }
  return state;
}

Status InMemoryStore::ReleaseLease(std::string_view name, std::string_view holder) {
  MutexLock lock(mu_);
  auto it = leases_.find(name);
  if (it == leases_.end()) return Status::OK();
  if (auto next = ReleasedLease(it->second, holder, ToMicros(clock_.Now()))) it->second = std::move(*next);
  return Status::OK();
}

}  // namespace abacus

#include "meter/usage_ledger.h"

#include <algorithm>

#include "common/mutex.h"
#include "store/store.h"

namespace abacus::meter {
namespace {

Result<UsageInterval> Decode(const ObjectRecord& rec) {
  nlohmann::json j = nlohmann::json::parse(rec.json, nullptr, /*allow_exceptions=*/false);
  auto iv = UsageFromJson(j);
  if (!iv.ok()) return Internal("stored usage " + rec.key + ": " + iv.status().message());
  return iv;
}

}  // namespace

Result<std::vector<UsageInterval>> ReadUsage(Store& store, Time from, Time to) {
  ABACUS_ASSIGN_OR_RETURN(auto records, store.List(UsageLedger::kKind));
  std::vector<UsageInterval> out;
  for (const auto& rec : records) {
    ABACUS_ASSIGN_OR_RETURN(auto iv, Decode(rec));
    if (iv.start < to && (iv.open() || *iv.end > from)) out.push_back(std::move(iv));
  }
  return out;
}

Result<std::unique_ptr<UsageLedger>> UsageLedger::Load(Store& store, const Clock& clock) {
  std::unique_ptr<UsageLedger> ledger(new UsageLedger(store, clock));
  ABACUS_ASSIGN_OR_RETURN(auto records, store.List(kKind));
  MutexLock lock(ledger->mu_);  // no other thread yet: uncontended
  for (const auto& rec : records) {
    ABACUS_ASSIGN_OR_RETURN(auto iv, Decode(rec));
    if (!iv.open()) continue;
    std::string task = iv.task_id;
    ledger->open_[task] = OpenEntry{std::move(iv), rec.version};
  }
  return ledger;
}

Result<std::string> UsageLedger::Open(UsageInterval iv) {
  if (ToMicros(iv.start) == 0) iv.start = clock_.Now();
  iv.end.reset();
  iv.end_reason = EndReason::kOpen;
  iv.id = iv.task_id + "@" + std::to_string(ToMicros(iv.start));
  MutexLock lock(mu_);
  if (open_.contains(iv.task_id)) {
    return FailedPrecondition("task " + iv.task_id + " already has an open usage interval");
  }
  WriteBatch batch;
  const OpRef put = batch.Put(std::string(kKind), iv.id, UsageToJson(iv).dump(), /*expected_version=*/0).LastOp();
  CommitResult result;
  ABACUS_RETURN_IF_ERROR(store_.Commit(batch, &result));
  std::string id = iv.id;
  std::string task = iv.task_id;
  open_[task] = OpenEntry{std::move(iv), result.AssignedTo(put)};
  return id;
}

Status UsageLedger::Close(std::string_view task_id, Time end, EndReason reason) {
  if (reason == EndReason::kOpen) return InvalidArgument("closing with reason Open");
  MutexLock lock(mu_);
  auto it = open_.find(task_id);
  if (it == open_.end()) {
    return NotFound("task " + std::string(task_id) + " has no open usage interval");
  }
  return CloseLocked(it, end, reason);
}

Status UsageLedger::CloseLocked(std::map<std::string, OpenEntry, std::less<>>::iterator it,
                                Time end, EndReason reason) {
  UsageInterval iv = it->second.interval;
  iv.end = std::max(end, iv.start);
  iv.end_reason = reason;
  WriteBatch batch;
  batch.Put(std::string(kKind), iv.id, UsageToJson(iv).dump(), it->second.version);
  ABACUS_RETURN_IF_ERROR(store_.Commit(batch));
  open_.erase(it);
  return Status::OK();
}

Result<std::string> UsageLedger::StageOpen(UsageInterval iv, WriteBatch& batch) {
  iv.end.reset();
  iv.end_reason = EndReason::kOpen;
  iv.id = iv.task_id + "@" + std::to_string(ToMicros(iv.start));
  MutexLock lock(mu_);
  if (open_.contains(iv.task_id)) {
    return FailedPrecondition("task " + iv.task_id + " already has an open usage interval");
  }
  batch.Put(std::string(kKind), iv.id, UsageToJson(iv).dump());
  std::string id = iv.id;
  std::string task = iv.task_id;
  open_[task] = OpenEntry{std::move(iv), std::nullopt};
  return id;
}

Status UsageLedger::StageClose(std::string_view task_id, Time end, EndReason reason, WriteBatch& batch) {
  if (reason == EndReason::kOpen) return InvalidArgument("closing with reason Open");
  MutexLock lock(mu_);
  auto it = open_.find(task_id);
  if (it == open_.end()) return NotFound("task " + std::string(task_id) + " has no open usage interval");
  UsageInterval iv = it->second.interval;
  iv.end = std::max(end, iv.start);
  iv.end_reason = reason;
  batch.Put(std::string(kKind), iv.id, UsageToJson(iv).dump());
  open_.erase(it);
  return Status::OK();
}

std::optional<UsageInterval> UsageLedger::FindOpen(std::string_view task_id) const {
  MutexLock lock(mu_);
  auto it = open_.find(task_id);
  if (it == open_.end()) return std::nullopt;
  return it->second.interval;
}

bool UsageLedger::IsOpen(std::string_view task_id) const {
  MutexLock lock(mu_);
  return open_.find(task_id) != open_.end();
}

Status UsageLedger::Reload() {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kKind));
  std::map<std::string, OpenEntry, std::less<>> open;
  for (const auto& rec : records) {
    ABACUS_ASSIGN_OR_RETURN(auto iv, Decode(rec));
    if (!iv.open()) continue;
    std::string task = iv.task_id;
    open[task] = OpenEntry{std::move(iv), rec.version};
  }
  MutexLock lock(mu_);
  open_ = std::move(open);
  return Status::OK();
}

Status UsageLedger::Checkpoint() {
  WriteBatch batch;
  batch.PutMeta(std::string(kCheckpointMeta), std::to_string(ToMicros(clock_.Now())));
  return store_.Commit(batch);
}

Result<std::optional<Time>> UsageLedger::LastCheckpoint() const {
  ABACUS_ASSIGN_OR_RETURN(auto text, store_.GetMeta(kCheckpointMeta));
  if (!text) return std::optional<Time>();
  try {
    return std::optional<Time>(FromMicros(std::stoll(*text)));
  } catch (const std::exception&) {
    return Internal("meta " + std::string(kCheckpointMeta) + " is not a number: " + *text);
  }
}

Result<RecoverResult> UsageLedger::Recover(Time now, const std::set<std::string>& running_task_ids,
                                           const std::map<std::string, Time>& node_heartbeats) {
  ABACUS_ASSIGN_OR_RETURN(auto checkpoint, LastCheckpoint());
  RecoverResult result;
  {
    MutexLock lock(mu_);
    for (auto it = open_.begin(); it != open_.end();) {
      auto next = std::next(it);
      const UsageInterval& iv = it->second.interval;
      if (running_task_ids.contains(iv.task_id)) {
        ++result.kept;
      } else {
        // 1) The last time the task was known to run: checkpoint or its node's heartbeat.
        Time known = checkpoint.value_or(iv.start);
        if (auto hb = node_heartbeats.find(iv.node); hb != node_heartbeats.end()) {
          known = std::max(known, hb->second);
        }
        // 2) Never before it started, never after now.
        known = std::clamp(known, iv.start, std::max(iv.start, now));
        ABACUS_RETURN_IF_ERROR(CloseLocked(it, known, EndReason::kServerRestart));
        ++result.closed;
      }
      it = next;
    }
  }
  WriteBatch batch;
  batch.PutMeta(std::string(kCheckpointMeta), std::to_string(ToMicros(now)));
  ABACUS_RETURN_IF_ERROR(store_.Commit(batch));
  return result;
}

std::vector<UsageInterval> UsageLedger::OpenIntervals() const {
  MutexLock lock(mu_);
  std::vector<UsageInterval> out;
  out.reserve(open_.size());
  for (const auto& [task, entry] : open_) out.push_back(entry.interval);
  return out;
}

Result<std::vector<UsageInterval>> UsageLedger::Read(Time from, Time to) const {
  return ReadUsage(store_, from, to);
}

}  // namespace abacus::meter

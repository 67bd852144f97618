#include "control/batch.h"

#include <functional>
#include <set>

namespace abacus::control {

using nlohmann::json;

namespace {

// The index a task runs, or kNoIndex for an empty slot or an index out of range.
int32_t IndexOf(const TaskView& t, const BatchState& s) {
  return t.index >= 0 && t.index < static_cast<int32_t>(s.status.size()) ? t.index : kNoIndex;
}

// Counts one ended run of index `i`; appends the TaskFailed event of a failure.
void Account(const TaskView& t, int32_t i, const RestartPolicy& policy, BatchState& s, Time now, Decisions& out) {
  s.accounted[i] = t.finished_at;
  if (t.succeeded()) {
    s.status[i] = 'D';
    s.accounted.erase(i);
    s.not_before.erase(i);
    s.retries.erase(i);
    return;
  }
  FailureClass c = ClassifyFailure(t);
  if (c == FailureClass::kNone) {  // stopped on request: run it again
    s.not_before[i] = now;
    return;
  }
  json details = FailureDetails(t, c);
  details["index"] = i;
  std::string what = "array task " + std::to_string(i) + " failed (" + std::string(FailureClassName(c)) + ")" +
                     (t.message.empty() ? "" : ": " + t.message);
  int32_t& used = s.retries[i];
  if (!ConsumesRetry(c)) {
    s.not_before[i] = now;
    details["retryConsumed"] = false;
  } else if (used < policy.max_retries) {
    ++used;
    Duration wait = RetryBackoff(policy, used);
    s.not_before[i] = now + wait;
    details["retry"] = used;
    details["maxRetries"] = policy.max_retries;
    details["notBefore"] = FormatTime(now + wait);
  } else {
    s.status[i] = 'F';
    s.not_before.erase(i);
    s.accounted.erase(i);
    details["retries"] = used;
    if (s.failed_index == kNoIndex) {
      s.failed_index = i;
      s.failure_reason = FailureClassName(c);
      s.failure_message = what + (policy.max_retries > 0 ? "; retries exhausted" : "");
      s.failed_at = now;
    }
  }
  out.push_back(MakeEvent("TaskFailed", what, details));
}

}  // namespace

BatchProgress Progress(const WorkloadView& w, const BatchState& s) {
  BatchProgress p;
  p.total = static_cast<int32_t>(s.status.size());
  std::set<int32_t> running;
  for (const TaskView& t : w.tasks) {
    int32_t i = IndexOf(t, s);
    if (i != kNoIndex && !t.ended() && s.status[i] == 'P') running.insert(i);
  }
  for (char c : s.status) {
    if (c == 'D') p.done++;
    if (c == 'F') p.failed++;
  }
  p.running = static_cast<int32_t>(running.size());
  p.pending = p.total - p.done - p.failed - p.running;
  return p;
}

BatchOutcome ReconcileBatch(const WorkloadView& w, BatchState s, Time now) {
  BatchOutcome out;
  const BatchSpec& spec = *w.spec->batch();
  if (s.status.size() != static_cast<size_t>(std::max(spec.tasks, 0))) {
    s = BatchState{};
    s.status.assign(static_cast<size_t>(std::max(spec.tasks, 0)), 'P');
  }
  Decisions& ds = out.decisions;
  auto finish = [&] {
    out.progress = Progress(w, s);
    out.state = std::move(s);
    return std::move(out);
  };
  // 1) Preemption and start, as every run-to-completion kind.
  if (DecidePreempted(w, kDefaultGraceSeconds, now, ds)) return finish();
  WorkloadState state = DecideStarted(w, ds);
  if (state != WorkloadState::kAdmitted && state != WorkloadState::kRunning) return finish();
  // 2) Count the runs that ended since the last call.
  std::set<int32_t> active;
  for (const TaskView& t : w.tasks) {
    int32_t i = IndexOf(t, s);
    if (i == kNoIndex || s.status[i] != 'P') continue;
    if (!t.ended()) {
      active.insert(i);
    } else if (auto it = s.accounted.find(i); it == s.accounted.end() || it->second != t.finished_at) {
      Account(t, i, spec.restart_policy, s, now, ds);
    }
  }
  // 3) One index out of retries: stop the rest, then Failed.
  if (s.failed_index != kNoIndex) {
    StopPlan plan;
    plan.since = s.failed_at;
    plan.to = WorkloadState::kFailed;
    plan.reason = s.failure_reason;
    plan.message = s.failure_message;
    plan.details = {{"index", s.failed_index}};
    StopThenFinish(w, plan, "StoppingBatch", now, ds);
    return finish();
  }
  // 4) All done: Succeeded.
  if (s.status.find('P') == std::string::npos) {
    if (state == WorkloadState::kRunning) {
      ds.push_back(SetState{WorkloadState::kSucceeded, "Completed", "all array tasks done"});
      ds.push_back(MakeEvent("Succeeded", "all array tasks done", {{"tasks", s.status.size()}}, "Completed"));
    }
    return finish();
  }
  // 5) Fill free slots with the lowest indexes that are ready.
  int32_t free = spec.parallelism - static_cast<int32_t>(active.size());
  for (int32_t i = 0; free > 0 && i < static_cast<int32_t>(s.status.size()); ++i) {
    if (s.status[i] != 'P' || active.count(i) != 0) continue;
    if (auto nb = s.not_before.find(i); nb != s.not_before.end() && nb->second > now) continue;
    ds.push_back(StartTask{i});
    --free;
  }
  return finish();
}

namespace {

json TimesJson(const std::map<int32_t, Time>& m) {
  json j = json::object();
  for (const auto& [i, t] : m) j[std::to_string(i)] = ToMicros(t);
  return j;
}

Status ReadIndexMap(const json& j, const char* field, const std::function<void(int32_t, int64_t)>& put) {
  if (!j.contains(field)) return Status::OK();
  if (!j[field].is_object()) return InvalidArgument(std::string("batch state: ") + field + " must be an object");
  for (const auto& [k, v] : j[field].items()) {
    if (!v.is_number_integer()) return InvalidArgument(std::string("batch state: ") + field + "." + k + " must be an integer");
    try {
      put(static_cast<int32_t>(std::stol(k)), v.get<int64_t>());
    } catch (const std::exception&) {
      return InvalidArgument(std::string("batch state: ") + field + " key \"" + k + "\" is not an index");
    }
  }
  return Status::OK();
}

}  // namespace

json ToJson(const BatchState& s) {
  json retries = json::object();
  for (const auto& [i, n] : s.retries) retries[std::to_string(i)] = n;
  return {{"status", s.status},
          {"retries", retries},
          {"notBefore", TimesJson(s.not_before)},
          {"accounted", TimesJson(s.accounted)},
          {"failedIndex", s.failed_index},
          {"failureReason", s.failure_reason},
          {"failureMessage", s.failure_message},
          {"failedAt", ToMicros(s.failed_at)}};
}

Result<BatchState> BatchStateFromJson(const json& j) {
  BatchState s;
  if (j.is_null()) return s;
  if (!j.is_object()) return InvalidArgument("batch state must be an object");
  if (j.contains("status")) {
    if (!j["status"].is_string()) return InvalidArgument("batch state: status must be a string");
    s.status = j["status"].get<std::string>();
    if (s.status.find_first_not_of("PDF") != std::string::npos) {
      return InvalidArgument("batch state: status holds a letter other than P, D, F");
    }
  }
  ABACUS_RETURN_IF_ERROR(ReadIndexMap(j, "retries", [&](int32_t i, int64_t v) { s.retries[i] = static_cast<int32_t>(v); }));
  ABACUS_RETURN_IF_ERROR(ReadIndexMap(j, "notBefore", [&](int32_t i, int64_t v) { s.not_before[i] = FromMicros(v); }));
  ABACUS_RETURN_IF_ERROR(ReadIndexMap(j, "accounted", [&](int32_t i, int64_t v) { s.accounted[i] = FromMicros(v); }));
  try {
    s.failed_index = j.value("failedIndex", kNoIndex);
    s.failure_reason = j.value("failureReason", "");
    s.failure_message = j.value("failureMessage", "");
    s.failed_at = FromMicros(j.value("failedAt", int64_t{0}));
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("batch state: ") + e.what());
  }
  return s;
}

json ToJson(const BatchProgress& p) {
  return {{"total", p.total}, {"done", p.done}, {"running", p.running}, {"failed", p.failed}, {"pending", p.pending}};
}

}  // namespace abacus::control

#include "agent/loop/task_uids.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <random>

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;

bool ParseUid(std::string_view s, uint32_t& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

}  // namespace

Result<std::optional<UidRange>> ParseTaskUids(std::string_view text) {
  if (text == "none") return std::optional<UidRange>();
  auto bad = [&] {
    return InvalidArgument("task uids '" + std::string(text) + "': expected FIRST-LAST with 1 <= FIRST <= LAST <= " +
                           "4294967294, e.g. " + FormatUidRange(kDefaultTaskUids) +
                           ", or none (tasks run as the agent's user: unsafe where tenants share the node)");
  };
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) return bad();
  UidRange r;
  if (!ParseUid(text.substr(0, dash), r.first) || !ParseUid(text.substr(dash + 1), r.last)) return bad();
  if (r.first < 1 || r.last > 4294967294u || r.first > r.last) return bad();
  return std::optional<UidRange>(r);
}

std::string FormatUidRange(UidRange range) { return std::to_string(range.first) + "-" + std::to_string(range.last); }

TaskUidPool::TaskUidPool(UidRange range, Scan in_use, std::optional<uint32_t> first_try)
    : range_(range), in_use_(std::move(in_use)), next_(range.first) {
  const uint64_t size = uint64_t{range.last} - range.first + 1;
  if (first_try && *first_try >= range.first && *first_try <= range.last) {
    next_ = *first_try;
  } else if (!first_try) {
    std::random_device seed;
    next_ = range.first + static_cast<uint32_t>(((uint64_t{seed()} << 32) | seed()) % size);
  }
}

Result<TaskUser> TaskUidPool::Acquire(const std::string& task_id) {
  MutexLock lock(mu_);
  if (auto it = by_task_.find(task_id); it != by_task_.end()) return TaskUser{it->second, it->second};
  for (int pass = 0; pass < 2; ++pass) {
    while (!ready_.empty()) {
      const uint32_t uid = ready_.front();
      ready_.pop_front();
      if (by_uid_.count(uid) != 0) continue;  // adopted since the scan
      by_task_[task_id] = uid;
      by_uid_[uid] = task_id;
      return TaskUser{uid, uid};
    }
    if (pass == 0) Refill();
  }
  return ResourceExhausted("no free task uid in the agent's range " + FormatUidRange(range_) + " for task " + task_id +
                           " (" + std::to_string(by_uid_.size()) +
                           " held by tasks, the rest run by processes of the host); widen `abacus agent --task-uids`");
}

Status TaskUidPool::Adopt(const std::string& task_id, uint32_t uid) {
  if (uid < range_.first || uid > range_.last) {
    return InvalidArgument("uid " + std::to_string(uid) + " of task " + task_id + " is outside the task uids " +
                           FormatUidRange(range_));
  }
  MutexLock lock(mu_);
  if (auto it = by_uid_.find(uid); it != by_uid_.end()) {
    if (it->second == task_id) return Status::OK();
    return AlreadyExists("uid " + std::to_string(uid) + " of task " + task_id + " is held by task " + it->second);
  }
  if (auto it = by_task_.find(task_id); it != by_task_.end()) {
    return AlreadyExists("task " + task_id + " already holds uid " + std::to_string(it->second));
  }
  by_task_[task_id] = uid;
  by_uid_[uid] = task_id;
  return Status::OK();
}

void TaskUidPool::Refill() {
  const std::set<uint32_t> busy = in_use_(range_.first, range_.last);
  const uint64_t size = uint64_t{range_.last} - range_.first + 1;
  for (uint64_t i = 0; i < size && ready_.size() < kReadyUids; ++i) {
    const auto uid = static_cast<uint32_t>(range_.first + (uint64_t{next_} - range_.first + i) % size);
    if (by_uid_.count(uid) != 0 || busy.count(uid) != 0) continue;
    if (std::find(ready_.begin(), ready_.end(), uid) != ready_.end()) continue;
    ready_.push_back(uid);
  }
  if (!ready_.empty()) next_ = ready_.back() == range_.last ? range_.first : ready_.back() + 1;
}

std::optional<TaskUser> TaskUidPool::Held(const std::string& task_id) const {
  MutexLock lock(mu_);
  auto it = by_task_.find(task_id);
  if (it == by_task_.end()) return std::nullopt;
  return TaskUser{it->second, it->second};
}

void TaskUidPool::Release(const std::string& task_id) {
  MutexLock lock(mu_);
  auto it = by_task_.find(task_id);
  if (it == by_task_.end()) return;
  by_uid_.erase(it->second);
  by_task_.erase(it);
}

size_t TaskUidPool::held() const {
  MutexLock lock(mu_);
  return by_task_.size();
}

std::map<std::string, uint32_t> RecoverTaskUids(const std::string& tasks_dir, UidRange range) {
  std::map<std::string, uint32_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(tasks_dir, ec)) {
    struct stat st {};
    const std::string work = entry.path().string() + "/work";
    if (::lstat(work.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (st.st_uid >= range.first && st.st_uid <= range.last) out[entry.path().filename().string()] = st.st_uid;
  }
  return out;
}

Status CheckTraversable(const std::string& dir) {
  std::error_code ec;
  fs::path path = fs::absolute(dir, ec).lexically_normal();
  if (ec) return FailedPrecondition("cannot resolve " + dir + ": " + ec.message());
  for (fs::path p = path.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;  // not made yet: the agent makes it
    if ((st.st_mode & S_IXOTH) == 0) {
      return FailedPrecondition("the task users cannot reach " + dir + ": " + p.string() +
                                " does not let others pass (mode o+x); run `chmod o+x " + p.string() +
                                "`, choose a --work-dir under directories others may pass, or run tasks as "
                                "the agent's user with --task-uids none (unsafe where tenants share the node)");
    }
    if (p == p.root_path()) break;
  }
  return Status::OK();
}

}  // namespace abacus::agent

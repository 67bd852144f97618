#include "agent/loop/log_shipper.h"

#include <fstream>

#include "common/mutex.h"

namespace abacus::agent {

void LogShipper::Track(const std::string& task_id, const std::string& stdout_path, const std::string& stderr_path) {
  auto t = std::make_shared<Task>();
  {
    MutexLock task_lock(t->mu);  // not shared yet: uncontended
    t->streams[0].path = stdout_path;
    t->streams[1].path = stderr_path;
  }
  MutexLock lock(mu_);
  tasks_.emplace(task_id, std::move(t));
}

void LogShipper::Forget(const std::string& task_id) {
  MutexLock lock(mu_);
  tasks_.erase(task_id);
}

std::shared_ptr<LogShipper::Task> LogShipper::Find(const std::string& task_id) const {
  MutexLock lock(mu_);
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : it->second;
}

Status LogShipper::Ship(const std::string& task_id) {
  std::shared_ptr<Task> t = Find(task_id);
  if (!t) return NotFound("no log for task " + task_id);
  MutexLock lock(t->mu);
  Status out = ShipStream(task_id, LogStream::kStdout, t->streams[0]);
  Status err = ShipStream(task_id, LogStream::kStderr, t->streams[1]);
  return out.ok() ? err : out;
}

int LogShipper::ShipAll() {
  std::vector<std::string> ids;
  {
    MutexLock lock(mu_);
    for (const auto& [id, t] : tasks_) ids.push_back(id);
  }
  int failed = 0;
  for (const auto& id : ids) {
    Status s = Ship(id);
    if (!s.ok() && s.code() != StatusCode::kNotFound) ++failed;
  }
  return failed;
}

Status LogShipper::ShipStream(const std::string& task_id, LogStream which, Stream& s) {
  std::ifstream in(s.path, std::ios::binary);
  if (!in) return Status::OK();  // nothing written yet
  // A 409 may move the offset back or forward; a few rounds settle it, a server that keeps
  // answering 409 is not followed forever.
  for (int round = 0; round < 64; ++round) {
    in.clear();
    in.seekg(0, std::ios::end);
    int64_t size = static_cast<int64_t>(in.tellg());
    if (size <= s.offset) return Status::OK();
    LogChunk chunk;
    chunk.node = node_;
    chunk.task_id = task_id;
    chunk.stream = which;
    chunk.offset = s.offset;
    chunk.data.resize(static_cast<size_t>(std::min<int64_t>(size - s.offset, static_cast<int64_t>(max_chunk_))));
    in.seekg(s.offset);
    in.read(chunk.data.data(), static_cast<std::streamsize>(chunk.data.size()));
    chunk.data.resize(static_cast<size_t>(in.gcount()));
    if (chunk.data.empty()) return Status::OK();
    auto ack = sender_(chunk);
    if (!ack.ok()) return ack.status().WithContext("log of " + task_id);
    s.offset = ack->accepted ? s.offset + static_cast<int64_t>(chunk.data.size()) : ack->server_size;
  }
  return Aborted("log of " + task_id + ": the server keeps asking for another offset");
}

int64_t LogShipper::shipped(const std::string& task_id, LogStream stream) const {
  std::shared_ptr<Task> t = Find(task_id);
  if (!t) return 0;
  MutexLock lock(t->mu);
  return t->streams[stream == LogStream::kStdout ? 0 : 1].offset;
}

}  // namespace abacus::agent

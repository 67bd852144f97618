// LogShipper: sends the new bytes of each task's stdout and stderr to the server
// (POST /api/v1/agent/logs) at the offset the server expects. A 409 answer moves the offset to
// the server's size and resends from there; a transport error leaves the offset where it was,
// so the next round sends the same bytes again (the server skips an overlap).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/loop/protocol.h"
#include "common/mutex.h"
#include "common/status.h"

namespace abacus::agent {

class LogShipper {
 public:
  // Sends one chunk (AgentClient::SendLog in production).
  using Sender = std::function<Result<LogAck>(const LogChunk&)>;

  LogShipper(std::string node, Sender sender, size_t max_chunk = 1 << 20)
      : node_(std::move(node)), sender_(std::move(sender)), max_chunk_(max_chunk) {}

  // Starts following a task's log files.
  void Track(const std::string& task_id, const std::string& stdout_path, const std::string& stderr_path);
  // Stops following it.
  void Forget(const std::string& task_id);

  // Sends everything written so far to both streams of `task_id`. OK when the server has it
  // all; the first error otherwise (the rest is sent by a later call).
  Status Ship(const std::string& task_id);
  // Ship() for every tracked task; returns the number of tasks that failed.
  int ShipAll();

  // Bytes of `task_id`'s stream the server has acknowledged (tests, logs).
  int64_t shipped(const std::string& task_id, LogStream stream) const;

 private:
  struct Stream {
    std::string path;
    int64_t offset = 0;  // the server has [0, offset)
  };
  struct Task {
    Mutex mu;  // one sender per task at a time (the status and background threads both ship)
    Stream streams[2] GUARDED_BY(mu);
  };
  Status ShipStream(const std::string& task_id, LogStream which, Stream& s);
  std::shared_ptr<Task> Find(const std::string& task_id) const;

  std::string node_;
  Sender sender_;
  size_t max_chunk_;
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Task>> tasks_ GUARDED_BY(mu_);
};

}  // namespace abacus::agent

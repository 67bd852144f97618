// PortPool: the TCP ports an agent hands to its InferenceService replicas (ABACUS_PORT). Each
// task gets one port of the agent's range (`abacus agent --port-range 20000-29999`) that no
// other task of this agent holds and that nothing on the host listens on when it is handed out
// (a bind test on every address); it is the task's until Release. Ports are handed out round
// the range, so a port just given back is not reused at once (a client still talking to the
// old replica does not reach a new one). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "common/status.h"

namespace abacus::agent {

struct PortRange {
  int first = 20000;
  int last = 29999;
  bool operator==(const PortRange&) const = default;
};

// Parses "FIRST-LAST" (1024 ≤ FIRST ≤ LAST ≤ 65535); InvalidArgument naming the expected form.
Result<PortRange> ParsePortRange(std::string_view text);

// True when a TCP socket can bind `port` on every address (nothing listens there).
bool PortFree(int port);

class PortPool {
 public:
  // `free` says whether the host has a port free (default: PortFree); tests inject one. The first
  // port tried is `first_try`, else a random one of the range: two agents on one host (tests,
  // a second agent for another device set) then rarely hand out the same port in the same
  // moment, when neither replica has bound it yet and both bind tests pass.
  explicit PortPool(PortRange range, std::function<bool(int)> free = PortFree, std::optional<int> first_try = std::nullopt);

  // Returns the port of `task_id`: the one it holds, else the next free one of the range;
  // ResourceExhausted (naming the range and what to do) when every port is taken.
  Result<int> Acquire(const std::string& task_id);
  // Gives back the port of `task_id` (nothing when it holds none).
  void Release(const std::string& task_id);
  // The port `task_id` holds, 0 when none.
  int PortOf(const std::string& task_id) const;
  size_t held() const;

 private:
  PortRange range_;
  std::function<bool(int)> free_;
  mutable Mutex mu_;
  std::map<std::string, int> by_task_ GUARDED_BY(mu_);
  std::map<int, std::string> by_port_ GUARDED_BY(mu_);
  int next_ GUARDED_BY(mu_);  // where the next search starts
};

}  // namespace abacus::agent

// Test helper: the stderr of the children SpawnChild starts (server_process.h), so that a test can
// search the server's and the agent's logs (secrets_test.cc: the canary search).
#pragma once

#include <string>

namespace abacus::testing {

// While alive, children spawned by SpawnChild append their stderr to `path` (silenced or not).
class ChildStderrTo {
 public:
  explicit ChildStderrTo(std::string path);
  ~ChildStderrTo();
  ChildStderrTo(const ChildStderrTo&) = delete;
  ChildStderrTo& operator=(const ChildStderrTo&) = delete;
};

}  // namespace abacus::testing

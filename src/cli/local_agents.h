// The agents `abacus up` runs in its own process: the local node (real discovery), and with
// --demo two nodes of fake accelerators (NVIDIA A100 + T4 on two CUDA versions, Huawei Ascend).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/loop/agent.h"
#include "common/status.h"

namespace abacus::cli {

class LocalAgents {
 public:
  // Starts the agents against `url` with the join token in DATA/join.token; each works under
  // DATA/agents/<name>. Returns the names started.
  Result<std::vector<std::string>> Start(const std::string& url, const std::string& data_dir, bool demo);
  // Stops every agent (their tasks get their grace). Idempotent.
  void Stop();
  ~LocalAgents() { Stop(); }

 private:
  std::unique_ptr<agent::CgroupManager> cgroups_;
  std::vector<std::unique_ptr<agent::Agent>> agents_;
};

}  // namespace abacus::cli

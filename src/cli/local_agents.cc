#include "cli/local_agents.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/discover/discoverer.h"
#include "agent/loop/task_uids.h"
#include "agent/runtime/cgroup.h"

namespace abacus::cli {
namespace {

std::string LocalName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "local";
  std::string name;
  for (char c : std::string(host)) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    name += (std::isalnum(static_cast<unsigned char>(l)) || l == '-' || l == '.') ? l : '-';
  }
  return name.substr(0, 63);
}

}  // namespace

Result<std::vector<std::string>> LocalAgents::Start(const std::string& url, const std::string& data_dir, bool demo) {
  std::string token;
  std::ifstream(data_dir + "/join.token") >> token;
  if (token.empty()) return NotFound("no join token in " + data_dir + "/join.token");
  struct Spec {
    std::string name, fake_devices;
    bool real;
  };
  std::vector<Spec> specs = {{LocalName(), "", true}};
  if (demo) {
    // Four T4s: the example embedding service may hold one while hello-gpu takes two.
    specs.push_back({"demo-gpu", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4,gpu:nvidia:T4:4:16Gi@cuda=12.2", false});
    specs.push_back({"demo-npu", "npu:huawei:Ascend910B:2:64Gi@cann=8.0.RC2", false});
  }
  cgroups_ = agent::CgroupManager::Detect();
  std::vector<std::string> names;
  for (const Spec& s : specs) {
    agent::AgentOptions o;
    o.server = url;
    o.join_token = token;
    o.name = s.name;
    o.pool = "general";
    o.labels = {{"abacus.io/agent", "local"}};
    // Tenants share these nodes too (a POC runs several teams on `abacus up`): as root, each task
    // runs as a uid of its own (docs/agent.md, "Task users"), so the agents work beside the
    // private data folder (0700, which task users could not pass), in DATA.agents (0711). Where
    // the folders above it do not let others pass either (a data folder under a private home),
    // they work inside it and run tasks as the user who ran `abacus up`; the agent says so.
    const std::filesystem::path beside = std::filesystem::path(data_dir).lexically_normal().string() + ".agents";
    std::error_code ec;
    std::filesystem::create_directories(beside, ec);
    std::filesystem::permissions(beside, std::filesystem::perms(0711), std::filesystem::perm_options::replace, ec);
    if (!ec && agent::CheckTraversable((beside / s.name).string()).ok()) {
      o.work_dir = (beside / s.name).string();
    } else {
      o.work_dir = (std::filesystem::path(data_dir) / "agents" / s.name).string();
      o.task_uids = std::nullopt;
    }
    if (!s.real) {
      o.cpu_milli_override = 32000;  // simulated nodes: room for the demo's tasks
      o.memory_bytes_override = int64_t{64} << 30;
    }
    agent::DiscoveryOptions d;
    d.fake_devices = s.fake_devices;
    d.node_name = s.name;
    d.real_devices = s.real;
    ABACUS_ASSIGN_OR_RETURN(auto discoverer, agent::MakeDiscoverer(d));
    agent::AgentSeams seams;
    seams.cgroups = cgroups_.get();
    auto a = std::make_unique<agent::Agent>(o, SystemClock::Get(), std::move(discoverer), std::move(seams));
    ABACUS_RETURN_IF_ERROR(a->Start().WithContext("agent " + s.name));
    a->WaitRegistered(std::chrono::seconds(5));
    agents_.push_back(std::move(a));
    names.push_back(s.name);
  }
  return names;
}

void LocalAgents::Stop() {
  for (auto& a : agents_) a->Shutdown();
  agents_.clear();
}

}  // namespace abacus::cli

#include "server/demo.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/log.h"

namespace abacus::server {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int64_t kGi = 1024LL * 1024 * 1024;

json DemoNode(const std::string& name, const std::string& pool, int64_t cores, int64_t mem_gi,
              const std::string& flavor, int devices, int64_t dev_mem_gi, int per_domain,
              std::map<std::string, std::string> runtime, const std::string& driver) {
  json devs = json::array();
  for (int i = 0; i < devices; ++i) {
    json d = {{"index", i},
              {"flavor", flavor},
              {"memoryBytes", dev_mem_gi * kGi},
              {"numa", i < devices / 2 ? 0 : 1},
              {"simulated", true},
              {"uuid", name + "-dev" + std::to_string(i)}};
    if (per_domain > 0) d["interconnectDomain"] = name + "-d" + std::to_string(i / per_domain);
    if (!runtime.empty()) d["runtimeVersions"] = runtime;
    if (!driver.empty()) d["driverVersion"] = driver;
    devs.push_back(d);
  }
  return {{"name", name},
          {"cluster", "dc1"},
          {"pool", pool},
          {"labels", {{"abacus.io/pool", pool}}},
          {"cpuMilli", cores * 1000},
          {"memoryBytes", mem_gi * kGi},
          {"simulated", true},
          {"devices", devs}};
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

std::vector<json> DemoNodes() {
  std::vector<json> nodes;
  std::map<std::string, std::string> cuda = {{"cuda", "12.4"}};
  for (int i = 1; i <= 2; ++i) {
    nodes.push_back(DemoNode("h100-" + std::to_string(i), "train-a100", 192, 2048, "gpu/nvidia/H100-80G", 8, 80,
                             8, cuda, "550.54.15"));
  }
  for (int i = 1; i <= 2; ++i) {
    nodes.push_back(DemoNode("a100-" + std::to_string(i), "train-a100", 128, 1024, "gpu/nvidia/A100-80G", 8, 80,
                             8, cuda, "550.54.15"));
  }
  for (int i = 1; i <= 2; ++i) {
    nodes.push_back(DemoNode("a100-inf-" + std::to_string(i), "inference-a100", 128, 1024, "gpu/nvidia/A100-80G",
                             8, 80, 4, cuda, "550.54.15"));
  }
  for (int i = 1; i <= 2; ++i) {
    nodes.push_back(DemoNode("t4-" + std::to_string(i), "general", 64, 256, "gpu/nvidia/T4", 4, 16, 0,
                             {{"cuda", "12.2"}}, "535.104.05"));
  }
  for (int i = 1; i <= 2; ++i) {
    json n = DemoNode("ascend-" + std::to_string(i), "train-npu", 192, 1536, "npu/huawei/Ascend910B", 8, 64, 8,
                      {{"cann", "8.0.RC2"}}, "23.0.3");
    n["taints"] = json::array({{{"key", "dedicated"}, {"value", "npu"}, {"effect", "NoSchedule"}}});
    nodes.push_back(n);
  }
  for (int i = 1; i <= 2; ++i) {
    nodes.push_back(DemoNode("cpu-" + std::to_string(i), "general", 64, 256, "", 0, 0, 0, {}, ""));
  }
  return nodes;
}

Result<std::string> FindExamplesDir() {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("ABACUS_EXAMPLES")) tried.emplace_back(env);
  tried.emplace_back(fs::current_path() / "examples");
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    fs::path dir = fs::path(exe).parent_path();
    tried.push_back(dir / ".." / "examples");
    tried.push_back(dir / ".." / ".." / "examples");
    tried.push_back(dir / ".." / "share" / "abacus" / "examples");
  }
  std::string list;
  for (const auto& p : tried) {
    std::error_code ec;
    if (fs::exists(p / "org.yaml", ec)) return fs::weakly_canonical(p, ec).string();
    list += (list.empty() ? "" : ", ") + p.string();
  }
  return NotFound("examples/org.yaml not found (tried " + list + "); set ABACUS_EXAMPLES=DIR");
}

Status LoadDemo(ControlPlane& cp, const std::string& examples_dir) {
  for (const json& node : DemoNodes()) {
    bool known = cp.Read([&](const Ledger& l) { return l.FindNode(node["name"].get<std::string>()) != nullptr; });
    if (known) continue;
    auto r = cp.PutNode(node, nullptr);
    if (!r.ok()) return r.status().WithContext("demo node " + node["name"].get<std::string>());
  }
  fs::path org = fs::path(examples_dir) / "org.yaml";
  auto applied = cp.Apply(ReadFile(org), false, org.string(), nullptr, {}, false, nullptr);
  if (!applied.ok()) return applied.status().WithContext("apply " + org.string());
  if (fs::path prices = fs::path(examples_dir) / "prices.yaml"; fs::exists(prices)) {
    auto p = cp.Apply(ReadFile(prices), false, prices.string(), nullptr, {}, false, nullptr);
    if (!p.ok()) return p.status().WithContext("apply " + prices.string());
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(examples_dir) / "workloads")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string text = ReadFile(f);
    // Submit each file once: skip it when a workload of that name exists.
    auto parsed = ParseDocuments(text, f.string());
    bool seen = !parsed.documents.empty() && cp.Read([&](const Ledger& l) {
      return l.Resolve(parsed.documents.front().name()) != nullptr;
    });
    if (seen) continue;
    auto r = cp.Submit(text, false, f.string(), nullptr, {}, false, nullptr);
    if (!r.ok()) return r.status().WithContext("submit " + f.string());
  }
  cp.WaitForCycle();
  return Status::OK();
}

Status SubmitDemoHello(ControlPlane& cp, const std::string& examples_dir) {
  fs::path file = fs::path(examples_dir) / "demo" / "hello.yaml";
  std::string text = ReadFile(file);
  auto parsed = ParseDocuments(text, file.string());
  if (!parsed.diagnostics.empty()) return parsed.diagnostics.ToStatus();
  bool seen = !parsed.documents.empty() && cp.Read([&](const Ledger& l) {
    return l.Resolve(parsed.documents.front().name()) != nullptr;
  });
  if (seen) return Status::OK();
  auto r = cp.Submit(text, false, file.string(), nullptr, {}, false, nullptr);
  if (!r.ok()) return r.status().WithContext("submit " + file.string());
  return Status::OK();
}

}  // namespace abacus::server

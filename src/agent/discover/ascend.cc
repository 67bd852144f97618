#include "agent/discover/ascend.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "agent/discover/text.h"
#include "agent/discover/union_find.h"
#include "common/log.h"

namespace abacus::agent {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

Status InfoError(int line, const std::string& why) {
  return InvalidArgument("npu-smi info: line " + std::to_string(line) + ": " + why);
}

// "x / y" pairs in a cell, in order.
std::vector<std::pair<int64_t, int64_t>> UsagePairs(std::string_view cell) {
  static const std::regex kPair(R"((\d+)\s*/\s*(\d+))");
  std::vector<std::pair<int64_t, int64_t>> out;
  std::string s(cell);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kPair); it != std::sregex_iterator(); ++it) {
    out.emplace_back(std::stoll((*it)[1]), std::stoll((*it)[2]));
  }
  return out;
}

}  // namespace

DeviceHealth AscendHealth(std::string_view word) {
  if (EqualsIgnoreCase(word, "OK") || EqualsIgnoreCase(word, "Warning")) return DeviceHealth::kHealthy;
  if (EqualsIgnoreCase(word, "Alarm") || EqualsIgnoreCase(word, "Critical")) return DeviceHealth::kUnhealthy;
  return DeviceHealth::kUnknown;
}

std::string NormalizeAscendModel(std::string_view name) {
  std::string clean;
  for (char c : TrimText(name)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') clean += c;
  }
  if (clean.empty()) return "Ascend-unknown";
  if (clean.rfind("Ascend", 0) == 0) return clean;
  return "Ascend" + clean;
}

Result<NpuSmiInfo> ParseNpuSmiInfo(std::string_view text) {
  // 1) The header carries the version. 2) Rows are split into '|' cells; a '+' line ends a block.
  // 3) In a block, the first row is the card (NPU id, name, health); the following rows are
  //    its chips (chip id [logic id], bus id, AICore %, memory usage pairs).
  // 4) The process table after the "Process id" header is skipped.
  NpuSmiInfo info;
  auto lines = SplitLines(text);
  bool in_block = false;
  bool seen_table = false;
  NpuSmiChip card;
  for (size_t i = 0; i < lines.size(); ++i) {
    int line_no = static_cast<int>(i) + 1;
    std::string_view line = TrimText(lines[i]);
    if (line.empty()) continue;
    if (line.front() == '+') {
      if (line.find('=') != std::string_view::npos) {
        in_block = true;
        card = NpuSmiChip{};
        card.npu_id = -1;
      }
      continue;
    }
    if (line.front() != '|') continue;
    auto cells = SplitTrim(line.substr(1, line.size() > 1 && line.back() == '|' ? line.size() - 2 : std::string_view::npos), '|');
    std::string_view first = cells.empty() ? std::string_view() : cells[0];
    if (first.find("npu-smi") != std::string_view::npos) {
      size_t v = first.find("Version:");
      if (v != std::string_view::npos) info.version = std::string(TrimText(first.substr(v + 8)));
      continue;
    }
    if (first.rfind("NPU", 0) == 0 && line.find("Process") != std::string_view::npos) break;  // process table
    if (first.rfind("NPU", 0) == 0 || first.rfind("Chip", 0) == 0) {
      seen_table = true;
      continue;  // column headers
    }
    if (first.rfind("No running", 0) == 0) continue;
    if (!in_block || !seen_table) continue;
    if (cells.size() < 3) return InfoError(line_no, "expected 3 columns, found " + std::to_string(cells.size()));
    auto words = SplitWords(first);
    long long a = 0, b = 0;
    if (words.empty() || !ParseUint(words[0], a)) {
      return InfoError(line_no, "expected an NPU or chip number, found '" + std::string(first) + "'");
    }
    if (card.npu_id < 0) {
      // The card row.
      if (words.size() < 2) return InfoError(line_no, "NPU row without a name");
      card.npu_id = static_cast<int>(a);
      std::string name;
      for (size_t w = 1; w < words.size(); ++w) name += std::string(words[w]);
      card.name = name;
      card.health = std::string(cells[1]);
      if (card.health.empty()) return InfoError(line_no, "NPU " + std::to_string(a) + " without a health value");
      continue;
    }
    // A chip row.
    NpuSmiChip chip = card;
    chip.chip_id = static_cast<int>(a);
    if (words.size() >= 2 && ParseUint(words[1], b)) chip.logic_id = static_cast<int>(b);
    chip.bus_id = std::string(cells[1]);
    if (chip.bus_id.find(':') == std::string::npos) {
      return InfoError(line_no, "expected a PCI bus id, found '" + chip.bus_id + "'");
    }
    auto stats = SplitWords(cells[2]);
    long long aicore = 0;
    if (!stats.empty() && ParseUint(stats[0], aicore)) chip.aicore_percent = static_cast<int>(aicore);
    auto pairs = UsagePairs(cells[2]);
    if (pairs.empty()) return InfoError(line_no, "no memory usage 'used / total' in '" + std::string(cells[2]) + "'");
    auto mem = pairs.size() >= 2 && pairs[1].second > 0 ? pairs[1] : pairs[0];
    chip.memory_bytes = mem.second * kMiB;
    chip.memory_used_bytes = mem.first * kMiB;
    info.chips.push_back(std::move(chip));
  }
  return info;
}

Result<std::map<int, std::vector<int>>> ParseNpuSmiTopo(std::string_view text) {
  std::map<int, std::vector<int>> out;
  std::vector<int> columns;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    int line_no = static_cast<int>(i) + 1;
    auto words = SplitWords(lines[i]);
    if (words.empty()) continue;
    if (columns.empty()) {
      if (words[0].rfind("NPU", 0) != 0) continue;
      // The header: NPU0 NPU1 … [CPU Affinity]
      for (auto w : words) {
        long long n = 0;
        if (w.rfind("NPU", 0) == 0 && ParseUint(w.substr(3), n)) columns.push_back(static_cast<int>(n));
      }
      continue;
    }
    if (words[0].rfind("Legend", 0) == 0) break;
    long long row = 0;
    if (words[0].rfind("NPU", 0) != 0 || !ParseUint(words[0].substr(3), row)) continue;
    if (words.size() < columns.size() + 1) {
      return InvalidArgument("npu-smi info -t topo: line " + std::to_string(line_no) + ": expected " +
                             std::to_string(columns.size()) + " columns after " + std::string(words[0]));
    }
    auto& peers = out[static_cast<int>(row)];
    for (size_t c = 0; c < columns.size(); ++c) {
      if (words[c + 1].rfind("HCCS", 0) == 0) peers.push_back(columns[c]);
    }
  }
  return out;
}

std::map<std::string, std::string> ParseColonKeyValues(std::string_view text) {
  std::map<std::string, std::string> out;
  for (auto line : SplitLines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = TrimText(line.substr(0, colon));
    if (key.empty()) continue;
    out[std::string(key)] = std::string(TrimText(line.substr(colon + 1)));
  }
  return out;
}

std::string ParseCannVersion(std::string_view text) {
  std::string runtime;
  for (auto line : SplitLines(text)) {
    line = TrimText(line);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = TrimText(line.substr(0, eq));
    std::string_view value = TrimText(line.substr(eq + 1));
    if (EqualsIgnoreCase(key, "version") && !value.empty()) return std::string(value);
    if (key == "runtime_running_version" && value.size() > 2 && value.front() == '[') {
      size_t colon = value.find(':');
      size_t close = value.find(']');
      if (colon != std::string_view::npos && close != std::string_view::npos && close > colon) {
        runtime = std::string(value.substr(colon + 1, close - colon - 1));
      }
    }
  }
  return runtime;
}

Result<std::vector<Device>> AscendDeviceSource::Discover(const HostInfo& host, const std::vector<Device>&) {
  auto run = runner_->Run({"npu-smi", "info"});
  if (!run.ok()) {
    if (run.status().code() == StatusCode::kNotFound) return std::vector<Device>{};
    return run.status().WithContext("npu-smi info");
  }
  if (!run->ok()) {
    return Unavailable("npu-smi info exited with " + std::to_string(run->exit_code) + ": " + run->out.substr(0, 200));
  }
  ABACUS_ASSIGN_OR_RETURN(NpuSmiInfo info, ParseNpuSmiInfo(run->out));

  // CANN version: the first install file that names one.
  std::string cann;
  for (const char* rel : {"/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info",
                          "/ascend-toolkit/latest/x86_64-linux/ascend_toolkit_install.info",
                          "/ascend-toolkit/latest/version.cfg", "/ascend-toolkit/latest/toolkit/version.info",
                          "/nnrt/latest/aarch64-linux/ascend_nnrt_install.info",
                          "/nnae/latest/aarch64-linux/ascend_nnae_install.info"}) {
    auto text = ReadFileToString(root_ + rel);
    if (!text.ok()) continue;
    cann = ParseCannVersion(*text);
    if (!cann.empty()) break;
  }
  std::string driver = info.version;
  if (auto text = ReadFileToString(root_ + "/driver/version.info"); text.ok()) {
    std::string v = ParseCannVersion(*text);  // "Version=23.0.6"
    if (!v.empty()) driver = v;
  }

  // Board serial numbers, one call per card.
  std::map<int, std::string> serials;
  for (const auto& chip : info.chips) {
    if (serials.count(chip.npu_id) != 0) continue;
    auto board = runner_->Run({"npu-smi", "info", "-t", "board", "-i", std::to_string(chip.npu_id)});
    std::string serial;
    if (board.ok() && board->ok()) {
      auto kv = ParseColonKeyValues(board->out);
      auto it = kv.find("Serial Number");
      if (it != kv.end() && it->second != "NA") serial = it->second;
    }
    serials[chip.npu_id] = serial;
  }

  std::vector<Device> out;
  int next = 0;
  for (const auto& chip : info.chips) {
    Device d;
    d.index = chip.logic_id >= 0 ? chip.logic_id : next;
    ++next;
    auto flavor = Flavor::Parse("npu/huawei/" + NormalizeAscendModel(chip.name));
    if (!flavor.ok()) return flavor.status().WithContext("npu-smi info: NPU " + std::to_string(chip.npu_id));
    d.flavor = *flavor;
    d.memory_bytes = chip.memory_bytes;
    d.health = AscendHealth(chip.health);
    d.driver_version = driver;
    if (!cann.empty()) d.runtime_versions["cann"] = cann;
    const std::string& serial = serials[chip.npu_id];
    d.uuid = serial.empty() ? "NPU-" + CanonicalPciBusId(chip.bus_id)
                            : "NPU-" + serial + "-" + std::to_string(chip.chip_id);
    d.topology.numa_node = host.NumaNodeOfPci(chip.bus_id);
    out.push_back(std::move(d));
  }

  // HCCS domains: the topology matrix when npu-smi prints one, else the model's usual layout.
  std::map<int, std::vector<int>> topo;
  if (auto t = runner_->Run({"npu-smi", "info", "-t", "topo"}); t.ok() && t->ok()) {
    auto parsed = ParseNpuSmiTopo(t->out);
    if (parsed.ok()) {
      topo = *parsed;
    } else {
      ABACUS_LOG_WARN("{}", parsed.status().message());
    }
  }
  if (!topo.empty()) {
    UnionFind uf;
    std::set<int> linked;
    for (const auto& [npu, peers] : topo) {
      for (int p : peers) {
        uf.Union(std::to_string(1000 + npu), std::to_string(1000 + p));
        linked.insert(npu);
        linked.insert(p);
      }
    }
    for (auto& d : out) {
      if (linked.count(d.index) == 0) continue;
      int root = std::stoi(uf.Find(std::to_string(1000 + d.index))) - 1000;
      d.topology.interconnect_domain = "hccs-" + std::to_string(root);
    }
  } else {
    for (auto& d : out) {
      const std::string& m = d.flavor.model();
      int size = 0;
      if (m.rfind("Ascend910B", 0) == 0 || m.rfind("Ascend910_93", 0) == 0) {
        size = 8;
      } else if (m.rfind("Ascend910", 0) == 0) {
        size = 4;
      }
      if (size > 0) d.topology.interconnect_domain = "hccs-" + std::to_string(d.index / size * size);
    }
  }
  return out;
}

}  // namespace abacus::agent

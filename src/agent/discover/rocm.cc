#include "agent/discover/rocm.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "agent/discover/text.h"

namespace abacus::agent {

namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Joins the words of `product` with '-', dropping `drop` (upper case) and characters a flavor
// model cannot hold.
std::string JoinModelWords(std::string_view product, const std::set<std::string>& drop) {
  std::string out;
  for (auto w : SplitWords(product)) {
    if (drop.count(Upper(w)) != 0) continue;
    std::string clean;
    for (char c : w) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') clean += c;
    }
    if (clean.empty()) continue;
    if (!out.empty()) out += '-';
    out += clean;
  }
  return out;
}

// Bytes from a tool value: "68702699520" → value; "N/A", "" → -1; anything else → false.
bool ParseBytes(std::string_view value, int64_t& out) {
  value = TrimText(value);
  if (value.empty() || EqualsIgnoreCase(value, "N/A") || EqualsIgnoreCase(value, "NA")) {
    out = -1;
    return true;
  }
  long long v = 0;
  if (!ParseUint(value, v)) return false;
  out = v;
  return true;
}

std::string RuntimeVersion(const std::string& root) {
  auto text = ReadFileToString(root + "/.info/version");
  if (!text.ok()) return "";
  std::string v(TrimText(*text));
  // "6.1.0-82" → "6.1.0"
  size_t dash = v.find('-');
  return dash == std::string::npos ? v : v.substr(0, dash);
}

std::vector<Device> ToDevices(const std::vector<SmiCard>& cards, const std::string& vendor,
                              std::string (*normalize)(std::string_view), const std::string& driver,
                              const std::string& runtime_name, const std::string& runtime_version,
                              const HostInfo& host) {
  std::vector<Device> out;
  for (const auto& c : cards) {
    Device d;
    d.index = c.index;
    auto flavor = Flavor::Parse("gpu/" + vendor + "/" + normalize(c.product));
    d.flavor = flavor.ok() ? *flavor : *Flavor::Parse("gpu/" + vendor + "/unknown");
    d.memory_bytes = c.memory_bytes > 0 ? c.memory_bytes : 0;
    d.health = c.memory_bytes > 0 ? DeviceHealth::kHealthy : DeviceHealth::kUnhealthy;
    d.driver_version = driver;
    if (!runtime_version.empty()) d.runtime_versions[runtime_name] = runtime_version;
    if (!c.unique_id.empty() && !EqualsIgnoreCase(c.unique_id, "N/A")) {
      d.uuid = Upper(vendor.substr(0, 3)) + "-" + c.unique_id;
    } else if (!c.bus_id.empty()) {
      d.uuid = Upper(vendor.substr(0, 3)) + "-" + CanonicalPciBusId(c.bus_id);
    } else {
      d.uuid = Upper(vendor.substr(0, 3)) + "-card" + std::to_string(c.index);
    }
    if (!c.bus_id.empty()) d.topology.numa_node = host.NumaNodeOfPci(c.bus_id);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

std::string NormalizeAmdModel(std::string_view product) {
  std::string m = JoinModelWords(product, {"AMD", "ATI", "INSTINCT", "RADEON", "OAM", "PCIE"});
  return m.empty() ? "unknown" : m;
}

std::string NormalizeHygonModel(std::string_view product) {
  std::string m = JoinModelWords(product, {"HYGON", "DCU"});
  return m.empty() ? "DCU-unknown" : "DCU-" + m;
}

Result<std::vector<SmiCard>> ParseRocmSmiJson(std::string_view text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() names the line and column ("… at line 3, column 7: …").
    return InvalidArgument(std::string("rocm-smi: ") + e.what());
  }
  if (!doc.is_object()) return InvalidArgument("rocm-smi: line 1: expected a JSON object of cards");
  std::vector<SmiCard> cards;
  for (const auto& [key, card] : doc.items()) {
    if (key.rfind("card", 0) != 0) continue;  // "system" and friends
    long long index = 0;
    if (!ParseUint(std::string_view(key).substr(4), index)) {
      return InvalidArgument("rocm-smi: unexpected key '" + key + "'");
    }
    if (!card.is_object()) return InvalidArgument("rocm-smi: " + key + ": expected an object");
    SmiCard c;
    c.index = static_cast<int>(index);
    auto str = [&](const char* name) -> std::string {
      auto it = card.find(name);
      if (it == card.end()) return "";
      return it->is_string() ? it->get<std::string>() : it->dump();
    };
    for (const char* name : {"Device Name", "Card Series", "Card series", "Card model", "Card Model"}) {
      c.product = str(name);
      if (!c.product.empty()) break;
    }
    c.unique_id = str("Unique ID");
    c.bus_id = str("PCI Bus");
    std::string total = str("VRAM Total Memory (B)");
    if (!ParseBytes(total, c.memory_bytes)) {
      return InvalidArgument("rocm-smi: " + key + ": VRAM Total Memory (B) is not a number: '" + total + "'");
    }
    std::string used = str("VRAM Total Used Memory (B)");
    int64_t u = 0;
    if (ParseBytes(used, u) && u > 0) c.memory_used_bytes = u;
    cards.push_back(std::move(c));
  }
  std::sort(cards.begin(), cards.end(), [](const SmiCard& a, const SmiCard& b) { return a.index < b.index; });
  return cards;
}

Result<std::vector<SmiCard>> ParseHySmi(std::string_view text) {
  static const std::regex kLine(R"(^\s*(?:DCU|GPU|HCU)\[(\d+)\]\s*:\s*([^:]+?)\s*:\s*(.*?)\s*$)");
  std::map<int, SmiCard> cards;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line(lines[i]);
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) continue;
    int index = std::stoi(m[1]);
    std::string key = m[2];
    std::string value = m[3];
    SmiCard& c = cards[index];
    c.index = index;
    auto bad = [&](const std::string& why) {
      return InvalidArgument("hy-smi: line " + std::to_string(i + 1) + ": " + why);
    };
    if (EqualsIgnoreCase(key, "Card Series") || EqualsIgnoreCase(key, "Device Name")) {
      c.product = value;
    } else if ((EqualsIgnoreCase(key, "Card Model")) && c.product.empty()) {
      c.product = value;
    } else if (EqualsIgnoreCase(key, "vram Total Memory (B)")) {
      if (!ParseBytes(value, c.memory_bytes)) return bad("VRAM total is not a number: '" + value + "'");
    } else if (EqualsIgnoreCase(key, "vram Total Used Memory (B)")) {
      int64_t u = 0;
      if (!ParseBytes(value, u)) return bad("VRAM used is not a number: '" + value + "'");
      c.memory_used_bytes = u > 0 ? u : 0;
    } else if (EqualsIgnoreCase(key, "PCI Bus")) {
      c.bus_id = value;
    } else if (EqualsIgnoreCase(key, "Unique ID")) {
      c.unique_id = value;
    }
  }
  std::vector<SmiCard> out;
  for (auto& [index, c] : cards) out.push_back(std::move(c));
  return out;
}

Result<std::vector<Device>> RocmDeviceSource::Discover(const HostInfo& host, const std::vector<Device>&) {
  auto run = runner_->Run({"rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showbus",
                           "--showuniqueid", "--showdriverversion", "--json"});
  if (!run.ok()) {
    if (run.status().code() == StatusCode::kNotFound) return std::vector<Device>{};
    return run.status().WithContext("rocm-smi");
  }
  if (!run->ok()) return Unavailable("rocm-smi exited with " + std::to_string(run->exit_code));
  ABACUS_ASSIGN_OR_RETURN(auto cards, ParseRocmSmiJson(run->out));
  std::string driver;
  try {
    auto doc = nlohmann::json::parse(run->out);
    if (doc.contains("system") && doc["system"].contains("Driver version")) {
      driver = doc["system"]["Driver version"].get<std::string>();
    }
  } catch (const nlohmann::json::exception&) {
  }
  return ToDevices(cards, "amd", &NormalizeAmdModel, driver, "rocm", RuntimeVersion(root_), host);
}

Result<std::vector<Device>> HygonDeviceSource::Discover(const HostInfo& host, const std::vector<Device>&) {
  auto run = runner_->Run({"hy-smi", "--showproductname", "--showmeminfo", "vram", "--showbus", "--showuniqueid"});
  if (!run.ok()) {
    if (run.status().code() == StatusCode::kNotFound) return std::vector<Device>{};
    return run.status().WithContext("hy-smi");
  }
  if (!run->ok()) return Unavailable("hy-smi exited with " + std::to_string(run->exit_code));
  ABACUS_ASSIGN_OR_RETURN(auto cards, ParseHySmi(run->out));
  std::string driver;
  if (auto v = ReadFileToString("/sys/module/hydcu/version"); v.ok()) driver = std::string(TrimText(*v));
  return ToDevices(cards, "hygon", &NormalizeHygonModel, driver, "dtk", RuntimeVersion(root_), host);
}

}  // namespace abacus::agent

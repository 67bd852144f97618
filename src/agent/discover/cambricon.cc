#include "agent/discover/cambricon.h"

#include <cctype>
#include <cstdio>

#include "agent/discover/text.h"

namespace abacus::agent {

namespace {

// "24576 MiB" → bytes; false when not a size.
bool ParseSize(std::string_view v, int64_t& out) {
  auto words = SplitWords(v);
  long long n = 0;
  if (words.empty() || !ParseUint(words[0], n)) return false;
  std::string_view unit = words.size() > 1 ? words[1] : "B";
  int64_t mult = 1;
  if (EqualsIgnoreCase(unit, "KiB") || EqualsIgnoreCase(unit, "KB")) mult = int64_t{1} << 10;
  else if (EqualsIgnoreCase(unit, "MiB") || EqualsIgnoreCase(unit, "MB")) mult = int64_t{1} << 20;
  else if (EqualsIgnoreCase(unit, "GiB") || EqualsIgnoreCase(unit, "GB")) mult = int64_t{1} << 30;
  else if (!EqualsIgnoreCase(unit, "B")) return false;
  out = n * mult;
  return true;
}

unsigned HexOr(std::string_view v, unsigned fallback) {
  v = TrimText(v);
  if (v.rfind("0x", 0) == 0 || v.rfind("0X", 0) == 0) v.remove_prefix(2);
  unsigned out = 0;
  if (v.empty()) return fallback;
  for (char c : v) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return fallback;
    out = out * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
  }
  return out;
}

}  // namespace

Result<std::vector<CnmonCard>> ParseCnmonInfo(std::string_view text) {
  // 1) "Card N" opens a card. 2) Unindented "Key : Value" lines are card fields; an unindented
  //    line without a value opens a section ("Physical Memory Usage", "PCIe Info", "ECC"),
  //    whose indented lines are read in its context.
  std::vector<CnmonCard> cards;
  std::string section;
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  bool have_bus = false;
  auto finish_bus = [&] {
    if (!cards.empty() && have_bus) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
      cards.back().bus_id = buf;
    }
    domain = bus = dev = fn = 0;
    have_bus = false;
  };
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    int line_no = static_cast<int>(i) + 1;
    std::string_view raw = lines[i];
    std::string_view line = TrimText(raw);
    if (line.empty()) continue;
    bool indented = std::isspace(static_cast<unsigned char>(raw.front())) != 0;
    auto bad = [&](const std::string& why) {
      return InvalidArgument("cnmon info: line " + std::to_string(line_no) + ": " + why);
    };
    if (!indented && line.rfind("Card", 0) == 0 && line.find(':') == std::string_view::npos) {
      finish_bus();
      long long n = 0;
      auto words = SplitWords(line);
      if (words.size() != 2 || !ParseUint(words[1], n)) return bad("expected 'Card N', found '" + std::string(line) + "'");
      CnmonCard card;
      card.index = static_cast<int>(n);
      cards.push_back(std::move(card));
      section.clear();
      continue;
    }
    if (cards.empty()) continue;  // banner before the first card
    CnmonCard& c = cards.back();
    size_t colon = line.find(':');
    std::string key(TrimText(line.substr(0, colon)));
    std::string value(colon == std::string_view::npos ? "" : TrimText(line.substr(colon + 1)));
    if (!indented) {
      if (colon == std::string_view::npos || value.empty()) {
        section = key;
        continue;
      }
      section.clear();
      if (key == "Product Name") c.product = value;
      else if (key == "UUID") c.uuid = value;
      else if (key == "Driver") c.driver = value;
      else if (key == "Health" || key == "Status") c.healthy_flag = EqualsIgnoreCase(value, "OK") || EqualsIgnoreCase(value, "Healthy") || EqualsIgnoreCase(value, "Normal");
      continue;
    }
    // Indented: a field of the current section.
    if (section.find("Physical Memory") != std::string::npos) {
      int64_t bytes = 0;
      if (key == "Total" || key == "Used") {
        if (!ParseSize(value, bytes)) return bad("memory size '" + value + "' is not 'N MiB'");
        (key == "Total" ? c.memory_bytes : c.memory_used_bytes) = bytes;
      }
    } else if (section.find("PCIe") != std::string::npos) {
      if (key == "Domain ID") domain = HexOr(value, 0), have_bus = true;
      else if (key == "Bus num") bus = HexOr(value, 0), have_bus = true;
      else if (key == "Device") dev = HexOr(value, 0);
      else if (key == "Function") fn = HexOr(value, 0);
    } else if (section.find("ECC") != std::string::npos) {
      long long n = 0;
      if ((key.find("Multi") != std::string::npos || key.find("Uncorrect") != std::string::npos) && ParseUint(value, n)) {
        c.uncorrected_ecc += n;
      }
    }
  }
  finish_bus();
  for (const auto& c : cards) {
    if (c.product.empty()) return InvalidArgument("cnmon info: Card " + std::to_string(c.index) + " has no Product Name");
  }
  return cards;
}

Result<std::vector<Device>> CambriconDeviceSource::Discover(const HostInfo& host, const std::vector<Device>&) {
  auto run = runner_->Run({"cnmon", "info"});
  if (!run.ok()) {
    if (run.status().code() == StatusCode::kNotFound) return std::vector<Device>{};
    return run.status().WithContext("cnmon info");
  }
  if (!run->ok()) return Unavailable("cnmon info exited with " + std::to_string(run->exit_code));
  ABACUS_ASSIGN_OR_RETURN(auto cards, ParseCnmonInfo(run->out));
  std::string neuware;
  if (auto v = ReadFileToString(root_ + "/version"); v.ok()) neuware = std::string(TrimText(*v));
  std::vector<Device> out;
  for (const auto& c : cards) {
    Device d;
    d.index = c.index;
    std::string model;
    for (char ch : c.product) {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-') model += ch;
    }
    auto flavor = Flavor::Parse("npu/cambricon/" + (model.empty() ? std::string("unknown") : model));
    d.flavor = flavor.ok() ? *flavor : *Flavor::Parse("npu/cambricon/unknown");
    d.uuid = c.uuid.empty() ? "MLU-card" + std::to_string(c.index) : c.uuid;
    d.memory_bytes = c.memory_bytes;
    d.health = (c.healthy_flag && c.uncorrected_ecc == 0 && c.memory_bytes > 0) ? DeviceHealth::kHealthy
                                                                                : DeviceHealth::kUnhealthy;
    d.driver_version = c.driver.size() > 1 && c.driver[0] == 'v' ? c.driver.substr(1) : c.driver;
    if (!neuware.empty()) d.runtime_versions["neuware"] = neuware;
    if (!c.bus_id.empty()) d.topology.numa_node = host.NumaNodeOfPci(c.bus_id);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace abacus::agent

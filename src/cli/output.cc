#include "cli/output.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "common/clock.h"
#include "common/text_table.h"
#include "model/extended_resource.h"
#include "model/resources.h"
#include "tenancy/yaml_json.h"

namespace abacus::cli {

void PrintTable(std::ostream& out, const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows) {
  out << RenderTextTable(headers, rows);
}

void PrintDocument(std::ostream& out, const nlohmann::json& j, const std::string& format) {
  if (format == "yaml") {
    std::string y = EmitYaml(nlohmann::ordered_json::parse(j.dump()));
    out << y;
    if (y.empty() || y.back() != '\n') out << "\n";
  } else {
    out << j.dump(2) << "\n";
  }
}

std::string HumanAge(int64_t micros) {
  if (micros == 0) return "-";
  int64_t now = ToMicros(SystemClock::Get().Now());
  int64_t s = std::max<int64_t>(0, (now - micros) / 1'000'000);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm", static_cast<long long>(s / 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd%02lldh", static_cast<long long>(s / 86400), static_cast<long long>(s / 3600 % 24));
  }
  return buf;
}

std::string HumanAgo(int64_t micros) {
  if (micros == 0) return "-";
  int64_t now = ToMicros(SystemClock::Get().Now());
  if (now - micros < 1'000'000) return "just now";
  std::string age = HumanAge(micros);
  // Keep the leading unit only: "5h02m" → "5h".
  size_t cut = age.find_first_not_of("0123456789");
  return age.substr(0, cut + 1) + " ago";
}

std::string Devices(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(milli) / 1000.0);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  return s;
}

std::string Cores(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string Bytes(int64_t bytes) { return FormatBytes(bytes); }

std::string ExtendedUsedOfAll(const nlohmann::json& node) {
  const nlohmann::json all = node.value("extended", nlohmann::json::object());
  const nlohmann::json used = node.value("allocatedExtended", nlohmann::json::object());
  std::string out;
  for (const auto& [name, amount] : all.items()) {
    if (!amount.is_number_integer()) continue;
    auto r = ExtendedResource::Parse(name);
    auto fmt = [&](int64_t v) { return r.ok() ? r->FormatAmount(v) : std::to_string(v); };
    const int64_t held = used.contains(name) && used[name].is_number_integer() ? used[name].get<int64_t>() : 0;
    out += (out.empty() ? "" : ", ") + name + " " + fmt(held) + "/" + fmt(amount.get<int64_t>());
  }
  return out.empty() ? "-" : out;
}

}  // namespace abacus::cli

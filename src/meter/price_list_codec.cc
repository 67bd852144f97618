// PriceList ⇄ YAML/JSON (see price_list_codec.h).
#include "meter/price_list_codec.h"

#include "workload/documents.h"

#include "common/ids.h"
#include "meter/time_bucket.h"
#include "meter/units.h"
#include "model/flavor.h"
#include "tenancy/yaml_json.h"

namespace abacus::meter {
namespace {

using P = Presence;

std::optional<int64_t> Money(MapReader& r, std::string_view key) {
  return r.Parsed<int64_t>(key, P::kRequired, ParseMoney);
}

std::optional<Time> EffectiveFrom(MapReader& r) {
  return r.Parsed<Time>("effectiveFrom", P::kOptional, ParseTimestamp);
}

// Reads `key` as one {rate_key, effectiveFrom} mapping or a list of them.
std::vector<UnitPrice> DecodeUnitPrices(MapReader& spec, std::string_view key,
                                        std::string_view rate_key) {
  std::vector<UnitPrice> out;
  auto node = spec.Value(key);
  if (!node) return out;
  std::vector<std::pair<SpecNode, std::string>> items;
  if (node->IsSequence()) {
    for (size_t i = 0; i < node->size(); ++i) {
      items.emplace_back((*node)[i], spec.Path(key) + "[" + std::to_string(i) + "]");
    }
  } else {
    items.emplace_back(*node, spec.Path(key));
  }
  for (auto& [item, path] : items) {
    int before = spec.ctx().errors();
    MapReader e(spec.ctx(), item, path, {rate_key, "effectiveFrom"});
    if (!e.valid()) continue;
    UnitPrice p;
    if (auto v = Money(e, rate_key)) p.per_hour_micros = *v;
    if (auto v = EffectiveFrom(e)) p.effective_from = *v;
    if (spec.ctx().errors() != before) continue;
    for (const auto& seen : out) {
      if (seen.effective_from == p.effective_from) {
        e.Error("effectiveFrom", "two prices take effect at " + FormatTime(p.effective_from));
      }
    }
    out.push_back(p);
  }
  return out;
}

std::vector<DevicePrice> DecodeDevicePrices(MapReader& spec) {
  std::vector<DevicePrice> out;
  std::vector<size_t> positions;  // list index of each entry of `out`
  auto list = spec.List("prices");
  if (!list) return out;
  for (size_t i = 0; i < list->size(); ++i) {
    std::string path = spec.Path("prices") + "[" + std::to_string(i) + "]";
    int before = spec.ctx().errors();
    MapReader e(spec.ctx(), (*list)[i], path, {"flavor", "perHour", "effectiveFrom"});
    if (!e.valid()) continue;
    DevicePrice p;
    if (auto f = e.String("flavor", P::kRequired)) {
      if (*f == "cpu") {
        e.Error("flavor", "'cpu' is priced per core under spec.cpu, not here");
      } else if (auto pat = FlavorPattern::Parse(*f); !pat.ok()) {
        e.Error("flavor", pat.status().message());
      }
      p.flavor = *f;
    }
    if (auto v = Money(e, "perHour")) p.per_hour_micros = *v;
    if (auto v = EffectiveFrom(e)) p.effective_from = *v;
    if (spec.ctx().errors() != before) continue;  // only clean entries are compared and kept
    for (size_t j = 0; j < out.size(); ++j) {
      if (out[j].flavor == p.flavor && out[j].effective_from == p.effective_from) {
        e.Error("flavor", "duplicate price for '" + p.flavor + "' from " +
                              FormatTime(p.effective_from) + " (first at " + spec.Path("prices") +
                              "[" + std::to_string(positions[j]) + "])");
      }
    }
    out.push_back(std::move(p));
    positions.push_back(i);
  }
  return out;
}

nlohmann::ordered_json EncodeUnitPrices(const std::vector<UnitPrice>& prices, const char* rate_key) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& p : prices) {
    nlohmann::ordered_json e;
    e[rate_key] = FormatMoney(p.per_hour_micros);
    if (ToMicros(p.effective_from) != 0) e["effectiveFrom"] = FormatTime(p.effective_from);
    list.push_back(std::move(e));
  }
  return list;
}

}  // namespace

std::optional<PriceList> DecodePriceList(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "metadata", "spec", "description"});
  PriceList pl;
  if (auto v = r.Name("name")) pl.name = *v;
  if (auto meta = r.Map("metadata", {"name"})) {
    if (auto v = meta->Name("name", P::kRequired)) {
      if (!pl.name.empty()) r.Error("metadata", "give the name once: name or metadata.name");
      pl.name = *v;
    }
  }
  if (pl.name.empty() && r.valid() && !r.Has("metadata") && !r.Has("name")) {
    ctx.Error(r.line(), "name", "required field is missing");
  }
  if (auto v = r.String("description")) pl.description = *v;
  if (auto spec = r.Map("spec", {"currency", "prices", "cpu", "memory"}, P::kRequired)) {
    if (auto v = spec->String("currency")) {
      if (v->empty() || v->size() > 8) spec->Error("currency", "expected a currency code such as USD");
      pl.currency = *v;
    }
    pl.devices = DecodeDevicePrices(*spec);
    pl.cpu = DecodeUnitPrices(*spec, "cpu", "perCoreHour");
    pl.memory = DecodeUnitPrices(*spec, "memory", "perGiBHour");
  }
  if (ctx.errors() != before) return std::nullopt;
  return pl;
}

std::optional<PriceList> DecodePriceListJson(const nlohmann::json& doc, SpecContext& ctx) {
  return DecodePriceList(SpecNode(doc), ctx);
}

nlohmann::ordered_json EncodePriceList(const PriceList& prices) {
  nlohmann::ordered_json j;
  j["kind"] = kPriceListKind;
  j["name"] = prices.name;
  if (!prices.description.empty()) j["description"] = prices.description;
  nlohmann::ordered_json spec;
  spec["currency"] = prices.currency;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& p : prices.devices) {
    nlohmann::ordered_json e;
    e["flavor"] = p.flavor;
    e["perHour"] = FormatMoney(p.per_hour_micros);
    if (ToMicros(p.effective_from) != 0) e["effectiveFrom"] = FormatTime(p.effective_from);
    list.push_back(std::move(e));
  }
  spec["prices"] = std::move(list);
  if (!prices.cpu.empty()) spec["cpu"] = EncodeUnitPrices(prices.cpu, "perCoreHour");
  if (!prices.memory.empty()) spec["memory"] = EncodeUnitPrices(prices.memory, "perGiBHour");
  j["spec"] = std::move(spec);
  return j;
}

void RegisterPriceListKind() {
  RegisterExtensionKind("PriceList", [](const SpecNode& doc, SpecContext& ctx) -> std::optional<nlohmann::json> {
    auto p = DecodePriceList(doc, ctx);
    if (!p) return std::nullopt;
    return nlohmann::json(EncodePriceList(*p));
  });
}

}  // namespace abacus::meter

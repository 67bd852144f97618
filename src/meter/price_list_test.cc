#include <gtest/gtest.h>

#include "meter/meter_test_util.h"
#include "meter/price_list.h"
#include "meter/price_list_codec.h"
#include "model/flavor.h"
#include "tenancy/yaml_json.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers

std::optional<PriceList> Decode(const std::string& text, Diagnostics* diags) {
  SpecContext ctx("prices.yaml", diags);
  return DecodePriceList(YAML::Load(text), ctx);
}

constexpr char kYaml[] = R"(kind: PriceList
name: default
spec:
  currency: USD
  prices:
    - {flavor: gpu/nvidia/A100-80G, perHour: "2.00", effectiveFrom: 2026-01-01T00:00:00Z}
    - {flavor: gpu/nvidia/A100-80G, perHour: 3, effectiveFrom: "2026-03-01T12:00:00Z"}
    - {flavor: "gpu/*", perHour: "1"}
  cpu: {perCoreHour: "0.04"}
  memory:
    - {perGiBHour: "0.01"}
)";

TEST(PriceListCodecTest, DecodesTheScenarioPrices) {
  Diagnostics diags;
  auto p = Decode(kYaml, &diags);
  ASSERT_TRUE(p) << diags.ToString();
  EXPECT_EQ(*p, ScenarioPrices());
}

TEST(PriceListCodecTest, RoundTripsThroughJsonAndYaml) {
  Diagnostics diags;
  PriceList p = ScenarioPrices();
  p.description = "list prices";
  SpecContext ctx("", &diags);
  auto from_json = DecodePriceListJson(nlohmann::json::parse(EncodePriceList(p).dump()), ctx);
  ASSERT_TRUE(from_json) << diags.ToString();
  EXPECT_EQ(*from_json, p);
  auto from_yaml = Decode(EmitYaml(EncodePriceList(p)), &diags);
  ASSERT_TRUE(from_yaml) << diags.ToString();
  EXPECT_EQ(*from_yaml, p);
}

TEST(PriceListCodecTest, AcceptsMetadataName) {
  Diagnostics diags;
  auto p = Decode("kind: PriceList\nmetadata: {name: spot}\nspec: {currency: EUR}\n", &diags);
  ASSERT_TRUE(p) << diags.ToString();
  EXPECT_EQ(p->name, "spot");
  EXPECT_EQ(p->currency, "EUR");
}

TEST(PriceListCodecTest, ReportsEveryProblemWithFileLineAndField) {
  Diagnostics diags;
  auto p = Decode(R"(kind: PriceList
spec:
  prices:
    - {flavor: "gpu/nvidia/A100-80G", perHour: "-1"}
    - {flavor: "tpu/x", perHour: "2.5"}
    - {flavor: cpu, perHour: "0.1234567"}
    - {flavor: "gpu/nvidia/A100-80G", perHour: "2", effectiveFrom: yesterday}
    - {flavor: "gpu/*", perHour: "1", effectiveFrom: 2026-01-01}
    - {flavor: "gpu/*", perHour: "2", effectiveFrom: 2026-01-01T00:00:00Z}
  cpu: {perCoreHour: "0.04", extra: 1}
)", &diags);
  EXPECT_FALSE(p);
  std::vector<std::string> lines;
  for (const auto& d : diags.items()) lines.push_back(d.ToString());
  std::vector<std::string> expected = {
      "prices.yaml:1: name: required field is missing",
      "prices.yaml:4: spec.prices[0].perHour: invalid price '-1': expected a non-negative decimal number",
      "prices.yaml:5: spec.prices[1].flavor: " + FlavorPattern::Parse("tpu/x").status().message(),
      "prices.yaml:6: spec.prices[2].flavor: 'cpu' is priced per core under spec.cpu, not here",
      "prices.yaml:6: spec.prices[2].perHour: invalid price '0.1234567': at most 6 decimals",
      "prices.yaml:7: spec.prices[3].effectiveFrom: invalid time 'yesterday': expected RFC 3339 "
      "(2026-03-15T08:00:00Z) or a date (2026-03-15)",
      "prices.yaml:9: spec.prices[5].flavor: duplicate price for 'gpu/*' from "
      "2026-01-01T00:00:00.000Z (first at spec.prices[4])",
      "prices.yaml:10: spec.cpu.extra: unknown field 'extra'; allowed: perCoreHour, effectiveFrom",
  };
  EXPECT_EQ(lines, expected);
}

TEST(PricerTest, ExactFlavorBeatsPatternAndLaterPriceBeatsEarlier) {
  PriceList p = ScenarioPrices();
  p.devices.push_back({"gpu/nvidia/*", 1'500'000, T(2, 0)});
  RateSteps a100 = DeviceRateSteps(p, kA100);
  ASSERT_EQ(a100.size(), 3u);
  EXPECT_EQ(a100[0], (std::pair<Time, std::optional<int64_t>>{Time{}, 1'000'000}));  // only gpu/*
  EXPECT_EQ(a100[1].second, 2'000'000);
  EXPECT_EQ(a100[2], (std::pair<Time, std::optional<int64_t>>{T(1, 12), 3'000'000}));
  RateSteps t4 = DeviceRateSteps(p, kT4);
  ASSERT_EQ(t4.size(), 2u);
  EXPECT_EQ(t4[1], (std::pair<Time, std::optional<int64_t>>{T(2, 0), 1'500'000}));
  EXPECT_TRUE(DeviceRateSteps(p, "npu/huawei/Ascend910B").empty());
}

TEST(PricerTest, SplitsAtAPriceChangeAndBillsSharesByMilli) {
  PriceList prices = ScenarioPrices();
  Pricer pricer(&prices);
  // 4 × A100 from 08:00 to 16:00: 4h at 2.00 and 4h at 3.00 per device.
  Cost c = pricer.Price(TrainA(T(1, 8)), T(1, 8), T(1, 16));
  EXPECT_EQ(c.device, 80'000'000);
  EXPECT_EQ(c.cpu, 2'560'000);     // 8 cores × 8h × 0.04
  EXPECT_EQ(c.memory, 5'120'000);  // 64 GiB × 8h × 0.01
  // 500 milli of an A100, 10:00–14:00: half of 2 × 2.00 + 2 × 3.00.
  EXPECT_EQ(pricer.DeviceCost(kA100, 500, T(1, 10), T(1, 14)), 5'000'000);
  EXPECT_EQ(pricer.DeviceCost("gpu/amd/MI300", 1000, T(1, 10), T(1, 11)), 1'000'000);
  EXPECT_EQ(Pricer(nullptr).Price(TrainA(T(1, 8)), T(1, 8), T(1, 16)).total(), 0);
}

TEST(PricerTest, BeforeAnyPriceAFlavorIsUnpriced) {
  PriceList p;
  p.devices = {{kA100, 2'000'000, T(1, 12)}};
  Pricer pricer(&p);
  EXPECT_EQ(pricer.DeviceCost(kA100, 1000, T(1, 10), T(1, 14)), 4'000'000);  // only 12:00–14:00
  EXPECT_FALSE(pricer.HasDevicePrice(kT4));
}

}  // namespace
}  // namespace abacus::meter

// PriceList: what an hour of each flavor, a core and a GiB costs, with changes over time; and
// Pricer, which prices a usage interval over a period, splitting it where a price changes.
//
// Which device price applies to flavor F at time T: among entries whose flavor (exact or
// pattern) matches F and whose effectiveFrom <= T, the most specific pattern wins (an exact
// flavor beats any pattern; among patterns, more literal characters win), then the latest
// effectiveFrom. Before any matching entry takes effect, F is unpriced (costs 0).
// A share is billed by its milli-devices: 500 milli of a 2.00/h device cost 1.00/h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "meter/usage.h"

namespace abacus::meter {

inline constexpr std::string_view kPriceListKind = "PriceList";

// One device price: per whole device per hour, from `effective_from` on.
struct DevicePrice {
  std::string flavor;  // an exact flavor ("gpu/nvidia/A100-80G") or a pattern ("gpu/*")
  int64_t per_hour_micros = 0;
  Time effective_from{};  // the epoch when the document gives none
  bool operator==(const DevicePrice&) const = default;
};

// One CPU (per core-hour) or memory (per GiB-hour) price, from `effective_from` on.
struct UnitPrice {
  int64_t per_hour_micros = 0;
  Time effective_from{};
  bool operator==(const UnitPrice&) const = default;
};

struct PriceList {
  std::string name;
  std::string currency = "USD";
  std::vector<DevicePrice> devices;
  std::vector<UnitPrice> cpu;     // per core-hour
  std::vector<UnitPrice> memory;  // per GiB-hour
  std::string description;
  bool operator==(const PriceList&) const = default;
};

// What holding an interval's resources cost over a period, in micro-units of the currency;
// each piece at one price is rounded to the nearest micro-unit.
struct Cost {
  int64_t device = 0;
  int64_t cpu = 0;
  int64_t memory = 0;
  int64_t total() const { return device + cpu + memory; }
  Cost& operator+=(const Cost& o) {
    device += o.device;
    cpu += o.cpu;
    memory += o.memory;
    return *this;
  }
};

// A piecewise-constant price: steps[i] applies from its time until the next step's time;
// nullopt: no price.
using RateSteps = std::vector<std::pair<Time, std::optional<int64_t>>>;

// Prices intervals against one price list (or none: everything costs 0). Caches per flavor;
// not safe to share between threads.
class Pricer {
 public:
  // `prices` may be null and must outlive the pricer.
  explicit Pricer(const PriceList* prices);

  // Returns what `iv` cost over [a, b) (a >= b: nothing).
  Cost Price(const UsageInterval& iv, Time a, Time b);
  // Returns the device cost of `device_milli` of `flavor` over [a, b).
  int64_t DeviceCost(const std::string& flavor, int64_t device_milli, Time a, Time b);
  // Returns true when `flavor` has a device price at some time.
  bool HasDevicePrice(const std::string& flavor);
  // Returns the price list's currency ("" without one).
  std::string currency() const { return prices_ ? prices_->currency : ""; }

 private:
  const RateSteps& DeviceSteps(const std::string& flavor);

  const PriceList* prices_;
  RateSteps cpu_;
  RateSteps memory_;
  std::unordered_map<std::string, RateSteps> device_;
};

// Returns the price steps of `flavor` under `prices` (see the rule above).
RateSteps DeviceRateSteps(const PriceList& prices, const std::string& flavor);

}  // namespace abacus::meter

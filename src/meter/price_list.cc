#include "meter/price_list.h"

#include <algorithm>

#include "meter/units.h"
#include "model/flavor.h"

namespace abacus::meter {
namespace {

// Exact flavors outrank every pattern; patterns rank by their literal characters.
int Specificity(const std::string& pattern, const std::string& flavor) {
  if (pattern == flavor) return 1 << 20;
  return static_cast<int>(std::count_if(pattern.begin(), pattern.end(), [](char c) { return c != '*'; }));
}

bool Matches(const std::string& pattern, const std::optional<Flavor>& flavor) {
  if (!flavor) return false;
  auto p = FlavorPattern::Parse(pattern);
  return p.ok() && p->Matches(*flavor);
}

RateSteps UnitSteps(const std::vector<UnitPrice>& prices) {
  std::vector<UnitPrice> sorted = prices;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const UnitPrice& a, const UnitPrice& b) { return a.effective_from < b.effective_from; });
  RateSteps steps;
  for (const auto& p : sorted) {
    if (!steps.empty() && steps.back().first == p.effective_from) {
      steps.back().second = p.per_hour_micros;
    } else {
      steps.emplace_back(p.effective_from, p.per_hour_micros);
    }
  }
  return steps;
}

// Sums rate × amount × time over the steps overlapping [a, b); `unit` is the amount of one
// priced unit (1000 milli, or bytes per GiB).
int64_t Integrate(const RateSteps& steps, int64_t amount, int64_t unit, Time a, Time b) {
  if (amount == 0 || a >= b || steps.empty()) return 0;
  const ResourceTime den = static_cast<ResourceTime>(unit) * kMicrosPerHour;
  int64_t total = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Time from = std::max(a, steps[i].first);
    Time to = i + 1 < steps.size() ? std::min(b, steps[i + 1].first) : b;
    if (from >= to || !steps[i].second) continue;
    ResourceTime num = static_cast<ResourceTime>(*steps[i].second) * amount * (to - from).count();
    total += static_cast<int64_t>(RoundDiv(num, den));
  }
  return total;
}

}  // namespace

RateSteps DeviceRateSteps(const PriceList& prices, const std::string& flavor) {
  std::optional<Flavor> parsed;
  if (auto f = Flavor::Parse(flavor); f.ok()) parsed = *f;
  std::vector<const DevicePrice*> matching;
  for (const auto& p : prices.devices) {
    if (p.flavor == flavor || Matches(p.flavor, parsed)) matching.push_back(&p);
  }
  std::vector<Time> changes;
  for (const auto* p : matching) changes.push_back(p->effective_from);
  std::sort(changes.begin(), changes.end());
  changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
  RateSteps steps;
  for (Time t : changes) {
    const DevicePrice* best = nullptr;
    for (const auto* p : matching) {
      if (p->effective_from > t) continue;
      if (best == nullptr) {
        best = p;
        continue;
      }
      int ps = Specificity(p->flavor, flavor), bs = Specificity(best->flavor, flavor);
      if (ps > bs || (ps == bs && p->effective_from > best->effective_from)) best = p;
    }
    std::optional<int64_t> rate;
    if (best) rate = best->per_hour_micros;
    if (steps.empty() || steps.back().second != rate) steps.emplace_back(t, rate);
  }
  return steps;
}

Pricer::Pricer(const PriceList* prices) : prices_(prices) {
  if (prices_) {
    cpu_ = UnitSteps(prices_->cpu);
    memory_ = UnitSteps(prices_->memory);
  }
}

const RateSteps& Pricer::DeviceSteps(const std::string& flavor) {
  auto it = device_.find(flavor);
  if (it == device_.end()) {
    it = device_.emplace(flavor, prices_ ? DeviceRateSteps(*prices_, flavor) : RateSteps{}).first;
  }
  return it->second;
}

int64_t Pricer::DeviceCost(const std::string& flavor, int64_t device_milli, Time a, Time b) {
  if (device_milli == 0 || a >= b) return 0;
  return Integrate(DeviceSteps(flavor), device_milli, 1000, a, b);
}

bool Pricer::HasDevicePrice(const std::string& flavor) {
  const RateSteps& steps = DeviceSteps(flavor);
  return std::any_of(steps.begin(), steps.end(), [](const auto& s) { return s.second.has_value(); });
}

Cost Pricer::Price(const UsageInterval& iv, Time a, Time b) {
  Cost c;
  if (a >= b) return c;
  c.device = DeviceCost(iv.flavor, iv.device_milli, a, b);
  c.cpu = Integrate(cpu_, iv.cpu_milli, 1000, a, b);
  c.memory = Integrate(memory_, iv.memory_bytes, kBytesPerGiB, a, b);
  return c;
}

}  // namespace abacus::meter

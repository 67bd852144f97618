#include "tenancy/queue.h"

namespace abacus {

Result<QuotaResource> QuotaResource::Parse(std::string_view text) {
  if (text == "cpu") return Cpu();
  if (text == "memory") return Memory();
  if (text.find('*') != std::string_view::npos) {
    return InvalidArgument("invalid quota resource '" + std::string(text) +
                           "': quotas name one exact flavor, not a pattern");
  }
  auto f = Flavor::Parse(text);
  if (!f.ok()) {
    return InvalidArgument("invalid quota resource '" + std::string(text) +
                           "': expected cpu, memory or an accelerator flavor such as "
                           "gpu/nvidia/A100-80G");
  }
  return Devices(std::move(f).value());
}

std::string QuotaResource::Name() const {
  switch (kind) {
    case Kind::kCpu: return "cpu";
    case Kind::kMemory: return "memory";
    case Kind::kDevices: return flavor.name();
  }
  return "cpu";
}

int64_t LedgerAmount(const QuotaResource& r, const Quantity& q) {
  return r.kind == QuotaResource::Kind::kMemory ? q.CeilUnits() : q.milli();
}

std::string_view QueueingStrategyName(QueueingStrategy s) {
  return s == QueueingStrategy::kStrictFifo ? "StrictFIFO" : "BestEffortFIFO";
}

Result<QueueingStrategy> ParseQueueingStrategy(std::string_view text) {
  if (text == "StrictFIFO") return QueueingStrategy::kStrictFifo;
  if (text == "BestEffortFIFO") return QueueingStrategy::kBestEffortFifo;
  return InvalidArgument("unknown queueing strategy '" + std::string(text) +
                         "' (expected StrictFIFO or BestEffortFIFO)");
}

std::string_view ReclaimWithinNominalName(ReclaimWithinNominal r) {
  return r == ReclaimWithinNominal::kLowerPriority ? "LowerPriority" : "Any";
}

Result<ReclaimWithinNominal> ParseReclaimWithinNominal(std::string_view text) {
  if (text == "Any") return ReclaimWithinNominal::kAny;
  if (text == "LowerPriority") return ReclaimWithinNominal::kLowerPriority;
  return InvalidArgument("unknown reclaimWithinNominal '" + std::string(text) + "' (expected Any or LowerPriority)");
}

const Quota* Queue::FindQuota(const QuotaResource& r) const {
  for (const auto& q : quotas) {
    if (q.resource == r) return &q;
  }
  return nullptr;
}

}  // namespace abacus

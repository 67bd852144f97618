#include "tenancy/queue.h"

#include <algorithm>

#include "model/extended_resource.h"

namespace abacus {

Result<QuotaResource> QuotaResource::Parse(std::string_view text) {
  if (text == "cpu") return Cpu();
  if (text == "memory") return Memory();
  if (text.find('*') != std::string_view::npos) {
    return InvalidArgument("invalid quota resource '" + std::string(text) +
                           "': quotas name one exact flavor, not a pattern");
  }
  if (std::count(text.begin(), text.end(), '/') < 2) {
    auto x = ExtendedResource::Parse(text);
    if (!x.ok()) {
      return InvalidArgument("invalid quota resource '" + std::string(text) +
                             "': expected cpu, memory, an accelerator flavor such as gpu/nvidia/A100-80G "
                             "or an extended resource such as rdma/hca (" + x.status().message() + ")");
    }
    return Extended(x->name());
  }
  auto f = Flavor::Parse(text);
  if (!f.ok()) {
    return InvalidArgument("invalid quota resource '" + std::string(text) +
                           "': expected cpu, memory, an accelerator flavor such as "
                           "gpu/nvidia/A100-80G or an extended resource such as rdma/hca");
  }
  return Devices(std::move(f).value());
}

std::string QuotaResource::Name() const {
  switch (kind) {
    case Kind::kCpu: return "cpu";
    case Kind::kMemory: return "memory";
    case Kind::kDevices: return flavor.name();
    case Kind::kExtended: return extended;
  }
  return "cpu";
}

int64_t LedgerAmount(const QuotaResource& r, const Quantity& q) {
  const bool units = r.kind == QuotaResource::Kind::kMemory || r.kind == QuotaResource::Kind::kExtended;
  return units ? q.CeilUnits() : q.milli();
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

// YAML/JSON codecs of the tenancy kinds: Tenant, Project, Cohort, Queue, PriorityClass, Flavor
// (FlavorConfig) and Pool (PoolConfig). Decoders read one document and report every problem to
// the context; they return nullopt when the document had any. Encoders return the canonical
// JSON form (kind first); YAML output is EmitYaml(Encode…(x)). See docs/specs.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "tenancy/pool.h"
#include "tenancy/priority_class.h"
#include "tenancy/queue.h"
#include "tenancy/reservation.h"
#include "tenancy/tenant.h"
#include "tenancy/yaml_reader.h"

namespace abacus {

inline constexpr std::string_view kTenantKind = "Tenant";
inline constexpr std::string_view kProjectKind = "Project";
inline constexpr std::string_view kCohortKind = "Cohort";
inline constexpr std::string_view kQueueKind = "Queue";
inline constexpr std::string_view kPriorityClassKind = "PriorityClass";
inline constexpr std::string_view kFlavorKind = "Flavor";
inline constexpr std::string_view kPoolKind = "Pool";
inline constexpr std::string_view kClusterKind = "Cluster";
inline constexpr std::string_view kReservationKind = "Reservation";

std::optional<Tenant> DecodeTenant(const SpecNode& doc, SpecContext& ctx);
std::optional<Project> DecodeProject(const SpecNode& doc, SpecContext& ctx);
std::optional<Cohort> DecodeCohort(const SpecNode& doc, SpecContext& ctx);
std::optional<Queue> DecodeQueue(const SpecNode& doc, SpecContext& ctx);
std::optional<PriorityClass> DecodePriorityClass(const SpecNode& doc, SpecContext& ctx);
std::optional<FlavorConfig> DecodeFlavorConfig(const SpecNode& doc, SpecContext& ctx);
std::optional<PoolConfig> DecodePoolConfig(const SpecNode& doc, SpecContext& ctx);
std::optional<ClusterConfig> DecodeClusterConfig(const SpecNode& doc, SpecContext& ctx);
std::optional<ReservationConfig> DecodeReservation(const SpecNode& doc, SpecContext& ctx);

// Reads the list of quota entries under `key` of `r`:
//   - {resource: gpu/nvidia/A100-80G, nominal: 16, borrowingLimit: 8, lendingLimit: 4}
// Reports bad entries, duplicates and lendingLimit > nominal.
std::optional<std::vector<Quota>> DecodeQuotas(MapReader& r, std::string_view key);

nlohmann::ordered_json EncodeTenant(const Tenant& t);
nlohmann::ordered_json EncodeProject(const Project& p);
nlohmann::ordered_json EncodeCohort(const Cohort& c);
nlohmann::ordered_json EncodeQueue(const Queue& q);
nlohmann::ordered_json EncodePriorityClass(const PriorityClass& pc);
nlohmann::ordered_json EncodeFlavorConfig(const FlavorConfig& f);
nlohmann::ordered_json EncodePoolConfig(const PoolConfig& p);
nlohmann::ordered_json EncodeClusterConfig(const ClusterConfig& c);
nlohmann::ordered_json EncodeReservation(const ReservationConfig& r);
nlohmann::ordered_json EncodeQuotas(const std::vector<Quota>& quotas);

// Returns the text of an exact thousandths amount as a Quantity would write it ("1", "1500m").
std::string MilliText(int64_t milli);
// Reads a list of valid names under `key` (pools, tenants).
std::optional<std::vector<std::string>> DecodeNameList(MapReader& r, std::string_view key);

}  // namespace abacus

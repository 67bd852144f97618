#include "meter/grouping.h"

#include <algorithm>
#include <array>

namespace abacus::meter {
namespace {

constexpr std::array<std::pair<GroupKey, std::string_view>, 13> kKeys = {{
    {GroupKey::kTenant, "tenant"},
    {GroupKey::kProject, "project"},
    {GroupKey::kQueue, "queue"},
    {GroupKey::kFlavor, "flavor"},
    {GroupKey::kModel, "model"},
    {GroupKey::kCluster, "cluster"},
    {GroupKey::kPool, "pool"},
    {GroupKey::kKind, "kind"},
    {GroupKey::kNode, "node"},
    {GroupKey::kPriorityClass, "priorityClass"},
    {GroupKey::kWorkload, "workload"},
    {GroupKey::kReason, "reason"},
    {GroupKey::kUser, "user"},
}};

}  // namespace

std::string_view GroupKeyName(GroupKey key) {
  for (const auto& [k, name] : kKeys) {
    if (k == key) return name;
  }
  return "";
}

Result<Grouping> ParseGrouping(std::string_view text) {
  Grouping g;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view word = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() : comma + 1;
    if (word.empty()) continue;
    TimeBucket bucket = word == "hour"    ? TimeBucket::kHour
                        : word == "day"   ? TimeBucket::kDay
                        : word == "week"  ? TimeBucket::kWeek
                        : word == "month" ? TimeBucket::kMonth
                                          : TimeBucket::kNone;
    if (bucket != TimeBucket::kNone) {
      if (g.bucket != TimeBucket::kNone) {
        return InvalidArgument("--by: at most one of hour, day, week, month");
      }
      g.bucket = bucket;
      continue;
    }
    auto it = std::find_if(kKeys.begin(), kKeys.end(), [&](const auto& e) { return e.second == word; });
    if (it == kKeys.end()) {
      std::string names;
      for (const auto& [k, name] : kKeys) names += std::string(name) + ", ";
      return InvalidArgument("--by: unknown field '" + std::string(word) + "'; use " + names +
                             "hour, day, week or month");
    }
    if (std::find(g.keys.begin(), g.keys.end(), it->first) != g.keys.end()) {
      return InvalidArgument("--by: '" + std::string(word) + "' given twice");
    }
    g.keys.push_back(it->first);
  }
  return g;
}

Status CheckGrouping(const Grouping& by, std::span<const GroupKey> allowed, bool allow_bucket,
                     std::string_view report) {
  std::string names;
  for (GroupKey k : allowed) names += (names.empty() ? "" : ", ") + std::string(GroupKeyName(k));
  if (allow_bucket) names += ", hour, day, week, month";
  for (GroupKey k : by.keys) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      return InvalidArgument("the " + std::string(report) + " report cannot group by '" +
                             std::string(GroupKeyName(k)) + "'; it groups by " + names);
    }
  }
  if (!allow_bucket && by.bucket != TimeBucket::kNone) {
    return InvalidArgument("the " + std::string(report) + " report cannot group by time; it groups by " + names);
  }
  return Status::OK();
}

std::vector<Column> GroupColumns(const Grouping& by) {
  std::vector<Column> cols;
  if (by.bucket != TimeBucket::kNone) cols.push_back({"period", false});
  for (GroupKey k : by.keys) cols.push_back({std::string(GroupKeyName(k)), false});
  return cols;
}

std::string_view Field(const UsageInterval& iv, GroupKey key) {
  switch (key) {
    case GroupKey::kTenant: return iv.tenant;
    case GroupKey::kProject: return iv.project;
    case GroupKey::kQueue: return iv.queue;
    case GroupKey::kFlavor: return iv.flavor;
    case GroupKey::kModel: return iv.model;
    case GroupKey::kCluster: return iv.cluster;
    case GroupKey::kPool: return iv.pool;
    case GroupKey::kKind: return iv.kind;
    case GroupKey::kNode: return iv.node;
    case GroupKey::kPriorityClass: return iv.priority_class;
    case GroupKey::kWorkload: return iv.workload_label.empty() ? iv.workload_id : iv.workload_label;
    case GroupKey::kReason: return EndReasonName(iv.end_reason);
    case GroupKey::kUser: return iv.user;
  }
  return "";
}

std::string_view Field(const WorkloadSummary& w, GroupKey key) {
  switch (key) {
    case GroupKey::kTenant: return w.tenant;
    case GroupKey::kProject: return w.project;
    case GroupKey::kQueue: return w.queue;
    case GroupKey::kFlavor: return w.flavor;
    case GroupKey::kModel: return w.model;
    case GroupKey::kKind: return w.kind;
    case GroupKey::kPriorityClass: return w.priority_class;
    case GroupKey::kWorkload: return w.label.empty() ? w.id : w.label;
    case GroupKey::kUser: return w.user;
    case GroupKey::kReason: return w.failure_reason;
    default: return "";
  }
}

std::string_view Field(const ShortageInterval& s, GroupKey key) {
  switch (key) {
    case GroupKey::kTenant: return s.tenant;
    case GroupKey::kQueue: return s.queue;
    case GroupKey::kFlavor: return s.flavor;
    case GroupKey::kWorkload: return s.service_name.empty() ? s.service_id : s.service_name;
    default: return "";
  }
}

}  // namespace abacus::meter

// Grouping: the `--by` of a report — fields such as tenant or flavor, and at most one time
// bucket (hour, day, week, month) — and how each input record answers for a field.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "meter/report_inputs.h"
#include "meter/table.h"
#include "meter/time_bucket.h"
#include "meter/usage.h"

namespace abacus::meter {

enum class GroupKey {
  kTenant,
  kProject,
  kQueue,
  kFlavor,
  kModel,
  kCluster,
  kPool,
  kKind,
  kNode,
  kPriorityClass,
  kWorkload,
  kReason,
  kUser,
};

struct Grouping {
  std::vector<GroupKey> keys;
  TimeBucket bucket = TimeBucket::kNone;
};

// Returns the column name of `key`: "tenant", ..., "priorityClass", "workload", "reason", "user".
std::string_view GroupKeyName(GroupKey key);
// Parses "tenant,flavor,day": names of GroupKeyName plus hour|day|week|month (at most one); empty
// text is no grouping. InvalidArgument naming an unknown, repeated or second time field.
Result<Grouping> ParseGrouping(std::string_view text);
// Returns InvalidArgument when `by` uses a key not in `allowed` (or a bucket when
// `allow_bucket` is false), naming `report` and what it allows.
Status CheckGrouping(const Grouping& by, std::span<const GroupKey> allowed, bool allow_bucket,
                     std::string_view report);
// Returns the columns of a grouping: "period" first when bucketed, then the keys.
std::vector<Column> GroupColumns(const Grouping& by);

// The value of `key` for each kind of record ("" for keys the record does not carry).
std::string_view Field(const UsageInterval& iv, GroupKey key);
std::string_view Field(const WorkloadSummary& w, GroupKey key);
std::string_view Field(const ShortageInterval& s, GroupKey key);

// Returns the group cells of `record` (no period).
template <typename Record>
std::vector<std::string> GroupCells(const Record& record, const Grouping& by) {
  std::vector<std::string> cells;
  cells.reserve(by.keys.size() + 1);
  for (GroupKey k : by.keys) cells.emplace_back(Field(record, k));
  return cells;
}

}  // namespace abacus::meter

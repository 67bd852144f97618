#include "sim/openb_trace.h"

#include "common/file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <limits>
#include <unordered_map>

namespace abacus::sim {
namespace {

constexpr std::array<std::string_view, 5> kNodeColumns = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
constexpr std::array<std::string_view, 11> kPodColumns = {
    "name",     "cpu_milli", "memory_mib", "num_gpu",       "gpu_milli",     "gpu_spec",
    "qos",      "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
constexpr size_t kResourceColumns = 5;  // the multigpuNN layout: the first five of kPodColumns
constexpr std::array<std::string_view, 5> kPhases = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};

// Reads a whole file into memory in one go.
Result<std::string> ReadWholeFile(const std::string& path) { return ReadFile(path, "trace file"); }

// Walks the lines of a text: strips "\r" and a leading UTF-8 byte order mark, counts from 1.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  }
  // Returns false at the end; else sets *line and *number.
  bool Next(std::string_view* line, int* number) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view l = text_.substr(pos_, end - pos_);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    pos_ = end + 1;
    *line = l;
    *number = ++line_;
    return true;
  }
  size_t CountLines() const { return static_cast<size_t>(std::count(text_.begin(), text_.end(), '\n')); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 0;
};

// Splits an unquoted CSV line at commas.
void SplitFields(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      fields->push_back(line.substr(start));
      return;
    }
    fields->push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

bool IsModelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}
bool IsModelName(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsModelChar); }

// Collects the problem of the row being parsed.
struct RowError {
  std::string column;
  std::string message;
};

// Parses a non-negative integer no larger than `max` from the whole field.
bool ParseCount(std::string_view field, std::string_view column, int64_t max, int64_t* out,
                std::optional<RowError>* error) {
  if (field.empty()) {
    *error = RowError{std::string(column), "missing value (expected a non-negative integer)"};
    return false;
  }
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec == std::errc::result_out_of_range) {
    *error = RowError{std::string(column), "integer '" + std::string(field) + "' is out of range"};
    return false;
  }
  if (ec != std::errc() || end != field.data() + field.size()) {
    *error = RowError{std::string(column), "expected an integer, found '" + std::string(field) + "'"};
    return false;
  }
  if (value < 0) {
    *error = RowError{std::string(column), "must not be negative, found " + std::string(field)};
    return false;
  }
  if (value > max) {
    *error = RowError{std::string(column), "value " + std::string(field) + " exceeds " + std::to_string(max)};
    return false;
  }
  *out = value;
  return true;
}

bool ParseOptionalTime(std::string_view field, std::string_view column, std::optional<int64_t>* out,
                       std::optional<RowError>* error) {
  if (field.empty()) {
    out->reset();
    return true;
  }
  int64_t value = 0;
  if (!ParseCount(field, column, std::numeric_limits<int64_t>::max(), &value, error)) return false;
  *out = value;
  return true;
}

std::string JoinColumns(const std::string_view* begin, const std::string_view* end) {
  std::string out;
  for (auto it = begin; it != end; ++it) {
    if (!out.empty()) out += ',';
    out += *it;
  }
  return out;
}

// Shared driver: header check, then one call of `parse_row` per data line; `parse_row` returns
// the row's error, if any.
template <typename Table, typename ParseRow>
Status ParseRows(std::string_view file, const TraceReadOptions& options,
                 size_t expected_columns, Table* table, LineCursor* cursor, ParseRow parse_row) {
  std::vector<std::string_view> fields;
  std::string_view line;
  int number = 0;
  table->rows.reserve(cursor->CountLines());
  while (cursor->Next(&line, &number)) {
    if (line.empty()) continue;  // blank lines (a trailing one is common) carry no row
    std::optional<RowError> error;
    if (line.find('"') != std::string_view::npos) {
      error = RowError{"", "quoted fields are not supported in openb files"};
    } else {
      SplitFields(line, &fields);
      if (fields.size() != expected_columns) {
        error = RowError{"", "expected " + std::to_string(expected_columns) + " columns, found " +
                                 std::to_string(fields.size())};
      } else {
        parse_row(fields, number, &error);
      }
    }
    if (!error) continue;
    Diagnostic d{std::string(file), number, std::move(error->column), std::move(error->message)};
    if (!options.skip_bad_rows) return InvalidArgument(d.ToString());
    ++table->skipped_rows;
    if (table->diagnostics.size() < options.max_diagnostics) table->diagnostics.push_back(std::move(d));
  }
  return Status::OK();
}

// Tracks names already seen so that a duplicate row is reported with the first one's line.
class NameIndex {
 public:
  // Returns the line of an earlier row with `name`, or 0 after recording it.
  int Claim(std::string_view name, int line) {
    auto [it, inserted] = lines_.emplace(name, line);
    return inserted ? 0 : it->second;
  }

 private:
  std::unordered_map<std::string_view, int> lines_;
};

}  // namespace

std::string_view TraceQosName(TraceQos qos) {
  switch (qos) {
    case TraceQos::kLS: return "LS";
    case TraceQos::kGuaranteed: return "Guaranteed";
    case TraceQos::kBurstable: return "Burstable";
    case TraceQos::kBE: return "BE";
  }
  return "LS";
}

std::optional<int64_t> TracePod::duration() const {
  if (!creation_time || !deletion_time) return std::nullopt;
  return *deletion_time - *creation_time;
}

Result<TraceTable<TraceNode>> ParseOpenbNodes(std::string_view text, std::string_view file,
                                              const TraceReadOptions& options) {
  LineCursor cursor(text);
  std::string_view header;
  int number = 0;
  if (!cursor.Next(&header, &number)) {
    return InvalidArgument(Diagnostic{std::string(file), 1, "", "empty file: expected a header row"}.ToString());
  }
  std::vector<std::string_view> names;
  SplitFields(header, &names);
  if (!std::equal(names.begin(), names.end(), kNodeColumns.begin(), kNodeColumns.end())) {
    return InvalidArgument(Diagnostic{std::string(file), number, "",
                                      "unexpected header '" + std::string(header) + "' (expected '" +
                                          JoinColumns(kNodeColumns.data(), kNodeColumns.data() + kNodeColumns.size()) +
                                          "')"}
                               .ToString());
  }
  TraceTable<TraceNode> table;
  NameIndex seen;
  auto parse_row = [&](const std::vector<std::string_view>& f, int line, std::optional<RowError>* error) {
    TraceNode node;
    if (f[0].empty()) {
      *error = RowError{"sn", "missing node name"};
      return;
    }
    int64_t gpus = 0;
    if (!ParseCount(f[1], "cpu_milli", std::numeric_limits<int64_t>::max(), &node.cpu_milli, error) ||
        !ParseCount(f[2], "memory_mib", std::numeric_limits<int64_t>::max(), &node.memory_mib, error) ||
        !ParseCount(f[3], "gpu", std::numeric_limits<int32_t>::max(), &gpus, error)) {
      return;
    }
    node.gpus = static_cast<int32_t>(gpus);
    if (gpus > 0 && !IsModelName(f[4])) {
      *error = RowError{"model", f[4].empty() ? "missing GPU model on a node with GPUs"
                                              : "invalid GPU model '" + std::string(f[4]) + "'"};
      return;
    }
    if (gpus == 0 && !f[4].empty()) {
      *error = RowError{"model", "GPU model '" + std::string(f[4]) + "' on a node without GPUs"};
      return;
    }
    if (int first = seen.Claim(f[0], line); first != 0) {
      *error = RowError{"sn", "duplicate node '" + std::string(f[0]) + "' (first on line " + std::to_string(first) + ")"};
      return;
    }
    node.name = std::string(f[0]);
    node.model = std::string(f[4]);
    table.rows.push_back(std::move(node));
  };
  ABACUS_RETURN_IF_ERROR(ParseRows(file, options, kNodeColumns.size(), &table, &cursor, parse_row));
  return table;
}

Result<TracePodTable> ParseOpenbPods(std::string_view text, std::string_view file, const TraceReadOptions& options) {
  LineCursor cursor(text);
  std::string_view header;
  int number = 0;
  if (!cursor.Next(&header, &number)) {
    return InvalidArgument(Diagnostic{std::string(file), 1, "", "empty file: expected a header row"}.ToString());
  }
  std::vector<std::string_view> names;
  SplitFields(header, &names);
  TracePodTable table;
  if (std::equal(names.begin(), names.end(), kPodColumns.begin(), kPodColumns.end())) {
    table.layout = PodLayout::kFull;
  } else if (std::equal(names.begin(), names.end(), kPodColumns.begin(), kPodColumns.begin() + kResourceColumns)) {
    table.layout = PodLayout::kResource;
  } else {
    return InvalidArgument(
        Diagnostic{std::string(file), number, "",
                   "unexpected header '" + std::string(header) + "' (expected '" +
                       JoinColumns(kPodColumns.data(), kPodColumns.data() + kPodColumns.size()) + "' or its first " +
                       std::to_string(kResourceColumns) + " columns)"}
            .ToString());
  }
  const bool full = table.layout == PodLayout::kFull;
  NameIndex seen;
  auto parse_row = [&](const std::vector<std::string_view>& f, int line, std::optional<RowError>* error) {
    TracePod pod;
    if (f[0].empty()) {
      *error = RowError{"name", "missing pod name"};
      return;
    }
    int64_t num_gpu = 0;
    int64_t gpu_milli = 0;
    if (!ParseCount(f[1], "cpu_milli", std::numeric_limits<int64_t>::max(), &pod.cpu_milli, error) ||
        !ParseCount(f[2], "memory_mib", std::numeric_limits<int64_t>::max(), &pod.memory_mib, error) ||
        !ParseCount(f[3], "num_gpu", std::numeric_limits<int32_t>::max(), &num_gpu, error) ||
        !ParseCount(f[4], "gpu_milli", 1000, &gpu_milli, error)) {
      return;
    }
    if (num_gpu == 0 && gpu_milli != 0) {
      *error = RowError{"gpu_milli", "must be 0 when num_gpu is 0, found " + std::string(f[4])};
      return;
    }
    if (num_gpu > 0 && gpu_milli == 0) {
      *error = RowError{"gpu_milli", "must be 1..1000 when num_gpu is " + std::string(f[3]) + ", found 0"};
      return;
    }
    if (num_gpu > 1 && gpu_milli < 1000) {
      *error = RowError{"gpu_milli", "a GPU share (" + std::string(f[4]) + " < 1000) needs num_gpu = 1, found " +
                                         std::string(f[3])};
      return;
    }
    pod.num_gpu = static_cast<int32_t>(num_gpu);
    pod.gpu_milli = static_cast<int32_t>(gpu_milli);
    if (full) {
      // gpu_spec: "|"-separated models; a repeated model is kept once.
      std::string_view spec = f[5];
      while (!spec.empty()) {
        const size_t bar = spec.find('|');
        const std::string_view model = spec.substr(0, bar);
        if (!IsModelName(model)) {
          *error = RowError{"gpu_spec", "invalid GPU model '" + std::string(model) + "' in '" + std::string(f[5]) + "'"};
          return;
        }
        if (std::find(pod.gpu_spec.begin(), pod.gpu_spec.end(), model) == pod.gpu_spec.end()) {
          pod.gpu_spec.emplace_back(model);
        }
        if (bar == std::string_view::npos) break;
        spec.remove_prefix(bar + 1);
        if (spec.empty()) {
          *error = RowError{"gpu_spec", "empty GPU model at the end of '" + std::string(f[5]) + "'"};
          return;
        }
      }
      if (f[6] == "LS") {
        pod.qos = TraceQos::kLS;
      } else if (f[6] == "Guaranteed") {
        pod.qos = TraceQos::kGuaranteed;
      } else if (f[6] == "Burstable") {
        pod.qos = TraceQos::kBurstable;
      } else if (f[6] == "BE") {
        pod.qos = TraceQos::kBE;
      } else {
        *error = RowError{"qos", "unknown QoS '" + std::string(f[6]) + "' (expected LS, Guaranteed, Burstable or BE)"};
        return;
      }
      if (std::find(kPhases.begin(), kPhases.end(), f[7]) == kPhases.end()) {
        *error = RowError{"pod_phase", "unknown phase '" + std::string(f[7]) +
                                           "' (expected Pending, Running, Succeeded, Failed or Unknown)"};
        return;
      }
      pod.phase = std::string(f[7]);
      if (!ParseOptionalTime(f[8], "creation_time", &pod.creation_time, error) ||
          !ParseOptionalTime(f[9], "deletion_time", &pod.deletion_time, error) ||
          !ParseOptionalTime(f[10], "scheduled_time", &pod.scheduled_time, error)) {
        return;
      }
      if (pod.creation_time && pod.deletion_time && *pod.deletion_time < *pod.creation_time) {
        *error = RowError{"deletion_time", "deletion_time " + std::string(f[9]) + " is before creation_time " +
                                               std::string(f[8])};
        return;
      }
    }
    if (int first = seen.Claim(f[0], line); first != 0) {
      *error = RowError{"name", "duplicate pod '" + std::string(f[0]) + "' (first on line " + std::to_string(first) + ")"};
      return;
    }
    pod.name = std::string(f[0]);
    table.rows.push_back(std::move(pod));
  };
  ABACUS_RETURN_IF_ERROR(ParseRows(file, options, full ? kPodColumns.size() : kResourceColumns, &table, &cursor,
                                   parse_row));
  return table;
}

Result<TraceTable<TraceNode>> ReadOpenbNodes(const std::string& path, const TraceReadOptions& options) {
  ABACUS_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(path));
  return ParseOpenbNodes(data, path, options);
}

Result<TracePodTable> ReadOpenbPods(const std::string& path, const TraceReadOptions& options) {
  ABACUS_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(path));
  return ParseOpenbPods(data, path, options);
}

Result<Flavor> OpenbModelFlavor(std::string_view model) {
  static constexpr std::array<std::string_view, 5> kNvidia = {"T4", "P100", "V100M16", "V100M32", "A10"};
  static constexpr std::array<std::string_view, 3> kAlibaba = {"G1", "G2", "G3"};
  if (std::find(kNvidia.begin(), kNvidia.end(), model) != kNvidia.end()) {
    return Flavor::Parse("gpu/nvidia/" + std::string(model));
  }
  if (std::find(kAlibaba.begin(), kAlibaba.end(), model) != kAlibaba.end()) {
    return Flavor::Parse("gpu/alibaba/" + std::string(model));
  }
  return InvalidArgument("unknown openb GPU model '" + std::string(model) +
                         "' (expected T4, P100, V100M16, V100M32, A10, G1, G2 or G3)");
}

std::string_view OpenbPriorityClass(TraceQos qos) {
  switch (qos) {
    case TraceQos::kLS: return "production";
    case TraceQos::kGuaranteed: return "high";
    case TraceQos::kBurstable: return "training";
    case TraceQos::kBE: return "best-effort";
  }
  return "production";
}

}  // namespace abacus::sim

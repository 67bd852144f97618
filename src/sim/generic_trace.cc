#include "sim/generic_trace.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>
#include <unordered_map>

#include "common/file.h"
#include "common/diagnostic.h"
#include "model/extended_request.h"
#include "model/extended_resource.h"
#include "workload/placement_check.h"
#include "workload/workload.h"

namespace abacus::sim {
namespace {

// ---- Records: the same fields whichever form they came from. ----

// One field of a node or workload as written: a scalar, or a list of items (labels as "k=v",
// devices as specs). `path` is how diagnostics name it ("gpu_count" in CSV, "nodes[2].cpu" in YAML).
struct Field {
  std::string path;
  int line = 0;
  std::string text;
  std::vector<std::pair<std::string, int>> items;  // item text and its line
};

// A node or workload before validation: canonical key → field.
struct Record {
  int line = 0;
  std::string prefix;              // "nodes[2]" in YAML, empty in CSV
  std::map<std::string, Field> fields;
  std::vector<std::string> broken;  // keys present but unreadable (already reported)
  const Field* Find(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? nullptr : &it->second;
  }
};

constexpr std::array<std::string_view, 8> kNodeKeys = {"name", "cluster", "pool",    "labels",
                                                        "cpu",  "memory",  "devices", "extended"};
constexpr std::array<std::string_view, 19> kWorkloadKeys = {
    "name",   "kind",     "tenant",   "queue",       "priorityClass", "submit", "duration", "replicas",
    "cpu",    "memory",   "accelerator", "count",    "share",         "deviceMemory", "gang", "maxPerNode",
    "spread", "antiAffinity", "extended"};
// List-valued keys: CSV splits them at ';'.
bool IsListKey(std::string_view key) {
  return key == "labels" || key == "devices" || key == "spread" || key == "antiAffinity" || key == "extended";
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}
bool IsName(std::string_view s) { return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), IsNameChar); }
bool IsLabelKey(std::string_view s) {
  auto ok = [](char c) { return IsNameChar(c) || c == '/'; };
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), ok);
}
bool IsLabelValue(std::string_view s) { return s.size() <= 63 && std::all_of(s.begin(), s.end(), IsNameChar); }
bool IsPriorityClassName(std::string_view s) {
  auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  if (text.front() == '+') text.remove_prefix(1);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Validates one record's fields into a value; reports problems into `diags`.
class RecordReader {
 public:
  RecordReader(const Record& record, std::string file, Diagnostics* diags)
      : record_(record), file_(std::move(file)), diags_(diags) {}

  bool ok() const { return errors_ == 0; }
  void Error(const Field& f, std::string message) { Error(f.path, f.line, std::move(message)); }
  void Error(const std::string& path, int line, std::string message) {
    ++errors_;
    diags_->Add(file_, line, path, std::move(message));
  }
  // Reports a missing required field against the record's own line.
  void Missing(std::string_view key, std::string_view what) {
    if (std::find(record_.broken.begin(), record_.broken.end(), key) != record_.broken.end()) return;
    const std::string path = record_.prefix.empty() ? std::string(key) : record_.prefix + "." + std::string(key);
    Error(path, record_.line, "required " + std::string(what) + " is missing");
  }

  const Field* Scalar(const std::string& key) const {
    const Field* f = record_.Find(key);
    return f != nullptr && !f->text.empty() ? f : nullptr;
  }

  // A name-like string, `fallback` when absent.
  std::string Name(const std::string& key, std::string_view fallback, bool required) {
    const Field* f = Scalar(key);
    if (f == nullptr) {
      if (required) Missing(key, "name");
      return std::string(fallback);
    }
    if (!IsName(f->text)) Error(*f, "invalid name '" + f->text + "': use letters, digits, '.', '_' and '-'");
    return f->text;
  }

  // An integer in [min, max], `fallback` when absent.
  std::optional<int64_t> Integer(const std::string& key, int64_t min, int64_t max, std::optional<int64_t> fallback,
                                 bool required, std::string_view unit) {
    const Field* f = Scalar(key);
    if (f == nullptr) {
      if (required) Missing(key, unit);
      return fallback;
    }
    int64_t v = 0;
    if (!ParseInt(f->text, &v)) {
      Error(*f, "expected a whole number of " + std::string(unit) + ", found '" + f->text + "'");
      return fallback;
    }
    if (v < min || v > max) {
      Error(*f, std::to_string(v) + " is out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")");
      return fallback;
    }
    return v;
  }

  // A quantity; `whole` requires a whole number of units (bytes), `positive` a value above zero.
  std::optional<Quantity> Amount(const std::string& key, bool required, bool whole, bool positive) {
    const Field* f = Scalar(key);
    if (f == nullptr) {
      if (required) Missing(key, "quantity");
      return std::nullopt;
    }
    auto q = Quantity::Parse(f->text);
    if (!q.ok()) {
      Error(*f, q.status().message());
      return std::nullopt;
    }
    if (q->milli() < 0 || (positive && q->milli() == 0)) {
      Error(*f, "'" + f->text + "' must be " + (positive ? "positive" : "zero or more"));
      return std::nullopt;
    }
    if (whole && !q->IsWhole()) {
      Error(*f, "'" + f->text + "' is not a whole number of bytes");
      return std::nullopt;
    }
    return *q;
  }

  std::optional<bool> Bool(const std::string& key) {
    const Field* f = Scalar(key);
    if (f == nullptr) return std::nullopt;
    if (f->text == "true") return true;
    if (f->text == "false") return false;
    Error(*f, "expected true or false, found '" + f->text + "'");
    return std::nullopt;
  }

  const Record& record() const { return record_; }

 private:
  const Record& record_;
  std::string file_;
  Diagnostics* diags_;
  int errors_ = 0;
};

std::optional<GenericTraceNode> BuildNode(const Record& record, const std::string& file, Diagnostics* diags) {
  RecordReader r(record, file, diags);
  GenericTraceNode node;
  node.line = record.line;
  node.name = r.Name("name", "", /*required=*/true);
  node.cluster = r.Name("cluster", "default", false);
  node.pool = r.Name("pool", "default", false);
  if (const Field* labels = record.Find("labels")) {
    for (const auto& [item, line] : labels->items) {
      const size_t eq = item.find('=');
      const std::string key(Trim(std::string_view(item).substr(0, eq)));
      const std::string value(eq == std::string::npos ? "" : Trim(std::string_view(item).substr(eq + 1)));
      if (eq == std::string::npos || !IsLabelKey(key)) {
        r.Error(labels->path, line, "invalid label '" + item + "': expected KEY=VALUE");
      } else if (!IsLabelValue(value)) {
        r.Error(labels->path, line, "invalid value '" + value + "' of label '" + key + "'");
      } else if (!node.labels.emplace(key, value).second) {
        r.Error(labels->path, line, "label '" + key + "' given twice");
      }
    }
  }
  if (auto cpu = r.Amount("cpu", /*required=*/true, /*whole=*/false, /*positive=*/true)) node.cpu = *cpu;
  if (auto mem = r.Amount("memory", true, /*whole=*/true, true)) node.memory = *mem;
  if (const Field* devices = record.Find("devices")) {
    for (const auto& [item, line] : devices->items) {
      auto d = ParseDeviceSpec(item);
      if (!d.ok()) {
        r.Error(devices->path, line, d.status().message());
        continue;
      }
      const bool repeated = std::any_of(node.devices.begin(), node.devices.end(),
                                        [&](const GenericDevices& g) { return g.flavor == d->flavor; });
      if (repeated) {
        r.Error(devices->path, line, "flavor " + d->flavor.name() + " listed twice; give one COUNT");
        continue;
      }
      node.devices.push_back(*std::move(d));
    }
  }
  if (const Field* ext = record.Find("extended")) {
    for (const auto& [item, line] : ext->items) {
      auto parsed = ParseExtendedList(item);  // the rule for declared capacity (abacus agent --resources)
      if (!parsed.ok()) {
        r.Error(ext->path, line, parsed.status().message());
        continue;
      }
      for (const auto& [name, amount] : *parsed) {
        if (!node.extended.emplace(name, amount).second) r.Error(ext->path, line, "resource '" + name + "' given twice");
      }
    }
  }
  if (!r.ok()) return std::nullopt;
  return node;
}

// Reads spread ("KEY[:MAXSKEW]" items) and antiAffinity (workload names) into `w`.
void ReadPlacement(const Record& record, RecordReader* r, GenericTraceWorkload* w) {
  if (const Field* spread = record.Find("spread")) {
    for (const auto& [item, line] : spread->items) {
      const size_t colon = item.rfind(':');
      SpreadConstraint c;
      c.topology_key = std::string(Trim(std::string_view(item).substr(0, colon)));
      if (std::string problem = SpreadKeyProblem(c.topology_key, w->spread); !problem.empty()) {
        r->Error(spread->path, line, problem);  // the spec's rule
        continue;
      }
      if (!IsLabelKey(c.topology_key)) {
        r->Error(spread->path, line, "invalid topology key '" + c.topology_key + "': expected a node label key or node");
        continue;
      }
      if (colon != std::string::npos) {
        const std::string skew(Trim(std::string_view(item).substr(colon + 1)));
        int64_t v = 0;
        if (!ParseInt(skew, &v) || v < 1 || v > kMaxPlacementLimit) {
          r->Error(spread->path, line,
                   "maxSkew of '" + c.topology_key + "' must be a whole number 1.." + std::to_string(kMaxPlacementLimit) +
                       ", found '" + skew + "'");
          continue;
        }
        c.max_skew = static_cast<int32_t>(v);
      }
      w->spread.push_back(std::move(c));
    }
  }
  if (const Field* anti = record.Find("antiAffinity")) {
    for (const auto& [item, line] : anti->items) {
      if (!IsName(item)) {
        r->Error(anti->path, line, "invalid workload name '" + item + "': use letters, digits, '.', '_' and '-'");
      } else if (std::find(w->anti_affinity.begin(), w->anti_affinity.end(), item) != w->anti_affinity.end()) {
        r->Error(anti->path, line, "'" + item + "' listed twice");
      } else {
        w->anti_affinity.push_back(item);
      }
    }
  }
}

std::optional<GenericWorkloadKind> ParseKind(std::string_view text) {
  for (auto k : {GenericWorkloadKind::kTrainingJob, GenericWorkloadKind::kInferenceService,
                 GenericWorkloadKind::kExperiment, GenericWorkloadKind::kEvaluation, GenericWorkloadKind::kBatchJob}) {
    if (GenericWorkloadKindName(k) == text) return k;
  }
  return std::nullopt;
}

std::optional<GenericTraceWorkload> BuildWorkload(const Record& record, const std::string& file, Diagnostics* diags) {
  RecordReader r(record, file, diags);
  GenericTraceWorkload w;
  w.line = record.line;
  w.name = r.Name("name", "", /*required=*/true);
  if (const Field* kind = r.Scalar("kind")) {
    if (auto k = ParseKind(kind->text)) {
      w.kind = *k;
    } else {
      r.Error(*kind, "unknown kind '" + kind->text +
                         "' (expected TrainingJob, InferenceService, Experiment, Evaluation or BatchJob)");
    }
  } else {
    r.Missing("kind", "workload kind");
  }
  w.tenant = r.Name("tenant", "default", false);
  w.queue = r.Name("queue", "default", false);
  if (const Field* pc = r.Scalar("priorityClass")) {
    if (IsPriorityClassName(pc->text)) {
      w.priority_class = pc->text;
    } else {
      r.Error(*pc, "invalid priority class '" + pc->text + "': use lowercase letters, digits and '-'");
    }
  }
  constexpr int64_t kMaxSeconds = int64_t{1} << 40;  // ~35,000 years: anything above is a typo
  w.submit_s = r.Integer("submit", 0, kMaxSeconds, 0, /*required=*/true, "seconds").value_or(0);
  w.duration_s = r.Integer("duration", 0, kMaxSeconds, std::nullopt, false, "seconds");
  w.replicas = static_cast<int32_t>(r.Integer("replicas", 1, 1'000'000, 1, false, "replicas").value_or(1));
  if (auto cpu = r.Amount("cpu", false, /*whole=*/false, /*positive=*/false)) w.cpu = *cpu;
  if (auto mem = r.Amount("memory", false, /*whole=*/true, false)) w.memory = *mem;

  const Field* accel = r.Scalar("accelerator");
  if (accel != nullptr) {
    auto pattern = FlavorPattern::Parse(accel->text);
    if (!pattern.ok()) {
      r.Error(*accel, pattern.status().message());
    } else if (pattern->Matches(Flavor::Cpu())) {
      r.Error(*accel, "'" + accel->text + "' selects the cpu flavor; use a gpu or npu pattern such as gpu/*");
    } else {
      w.accelerator = *std::move(pattern);
    }
    w.accelerator_count = static_cast<int32_t>(r.Integer("count", 1, 1024, 1, false, "devices").value_or(1));
    w.share_milli = static_cast<int32_t>(r.Integer("share", 1, 1000, 1000, false, "milli-devices").value_or(1000));
    if (w.share_milli < 1000 && w.accelerator_count != 1) {
      const Field* share = r.Scalar("share");
      r.Error(*share, "a share (" + share->text + " < 1000 milli-device) needs count 1, found " +
                          std::to_string(w.accelerator_count));
    }
    w.device_memory = r.Amount("deviceMemory", false, /*whole=*/true, /*positive=*/true);
  } else {
    for (const char* key : {"count", "share", "deviceMemory"}) {
      if (const Field* f = r.Scalar(key)) r.Error(*f, "given without an accelerator flavor pattern");
    }
  }
  w.gang = r.Bool("gang").value_or(w.kind == GenericWorkloadKind::kTrainingJob);
  w.max_per_node =
      static_cast<int32_t>(r.Integer("maxPerNode", 0, kMaxPlacementLimit, 0, false, "replicas per node").value_or(0));
  ReadPlacement(record, &r, &w);
  if (const Field* ext = record.Find("extended")) {
    for (const auto& [item, line] : ext->items) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos) {
        r.Error(ext->path, line, "'" + item + "' is not NAME=AMOUNT (e.g. rdma/hca=1)");
        continue;
      }
      auto x = ExtendedResource::Parse(Trim(std::string_view(item).substr(0, eq)));
      if (!x.ok()) {
        r.Error(ext->path, line, x.status().message());
        continue;
      }
      auto amount = ParseExtendedRequest(*x, Trim(std::string_view(item).substr(eq + 1)));  // the spec's rule
      if (!amount.ok()) {
        r.Error(ext->path, line, amount.status().message());
      } else if (!w.extended.emplace(x->name(), *amount).second) {
        r.Error(ext->path, line, "resource '" + x->name() + "' given twice");
      }
    }
  }
  if (!r.ok()) return std::nullopt;
  return w;
}

// Builds every record, then checks names for duplicates and patterns against the nodes.
Result<GenericTrace> Assemble(const std::vector<Record>& nodes, const std::string& nodes_file,
                              const std::vector<Record>& workloads, const std::string& workloads_file,
                              Diagnostics* diags) {
  GenericTrace trace;
  std::unordered_map<std::string, int> node_lines;
  for (const Record& rec : nodes) {
    auto node = BuildNode(rec, nodes_file, diags);
    if (!node) continue;
    auto [it, inserted] = node_lines.emplace(node->name, node->line);
    if (!inserted) {
      diags->Add(nodes_file, node->line, "name",
                 "duplicate node '" + node->name + "' (first on line " + std::to_string(it->second) + ")");
      continue;
    }
    trace.nodes.push_back(*std::move(node));
  }
  std::set<std::string> label_keys = {"node"};
  std::set<std::string> declared;  // extended resources some node has
  for (const GenericTraceNode& n : trace.nodes) {
    for (const auto& [key, value] : n.labels) label_keys.insert(key);
    for (const auto& [name, amount] : n.extended) declared.insert(name);
  }
  std::unordered_map<std::string, int> workload_lines;
  for (const Record& rec : workloads) {
    auto w = BuildWorkload(rec, workloads_file, diags);
    if (!w) continue;
    auto [it, inserted] = workload_lines.emplace(w->name, w->line);
    if (!inserted) {
      diags->Add(workloads_file, w->line, "name",
                 "duplicate workload '" + w->name + "' (first on line " + std::to_string(it->second) + ")");
      continue;
    }
    if (w->accelerator) {
      const bool matched = std::any_of(trace.nodes.begin(), trace.nodes.end(), [&](const GenericTraceNode& n) {
        return std::any_of(n.devices.begin(), n.devices.end(),
                           [&](const GenericDevices& d) { return w->accelerator->Matches(d.flavor); });
      });
      if (!matched && !trace.nodes.empty()) {
        const Field* f = rec.Find("accelerator");
        diags->Add(workloads_file, f->line, f->path,
                   "'" + w->accelerator->text() + "' matches no device of any node in the trace");
        continue;
      }
    }
    // A trace is the whole world: a rule or request that nothing in it can meet is a typo.
    bool unmet = false;
    for (const SpreadConstraint& c : w->spread) {
      if (label_keys.count(c.topology_key) > 0 || trace.nodes.empty()) continue;
      const Field* f = rec.Find("spread");
      diags->Add(workloads_file, f->line, f->path, "no node in the trace has label '" + c.topology_key + "'");
      unmet = true;
    }
    for (const auto& [name, amount] : w->extended) {
      if (declared.count(name) > 0 || trace.nodes.empty()) continue;
      const Field* f = rec.Find("extended");
      diags->Add(workloads_file, f->line, f->path, "no node in the trace declares '" + name + "'");
      unmet = true;
    }
    if (unmet) continue;
    trace.workloads.push_back(*std::move(w));
  }
  for (const Record& rec : workloads) {
    const Field* anti = rec.Find("antiAffinity");
    if (anti == nullptr) continue;
    for (const auto& [other, line] : anti->items) {
      if (!IsName(other) || workload_lines.count(other) > 0) continue;
      diags->Add(workloads_file, line, anti->path, "'" + other + "' names no workload in the trace");
    }
  }
  if (!diags->empty()) {
    // Report in file order whatever stage found the problem.
    std::vector<Diagnostic> items = diags->items();
    auto rank = [&](const Diagnostic& d) { return std::make_pair(d.file == nodes_file ? 0 : 1, d.line); };
    std::stable_sort(items.begin(), items.end(),
                     [&](const Diagnostic& a, const Diagnostic& b) { return rank(a) < rank(b); });
    Diagnostics sorted;
    for (Diagnostic& d : items) sorted.Add(std::move(d));
    return sorted.ToStatus();
  }
  return trace;
}

// ---- YAML form. ----

int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::string ScalarText(const YAML::Node& n) { return n.IsNull() ? std::string() : n.Scalar(); }

// What a list- or map-valued field should look like, for diagnostics.
std::string ExpectedShape(std::string_view key) {
  if (key == "labels") return "expected a map of label values";
  if (key == "devices") return "expected a list of device specs";
  if (key == "extended") return "expected a map of resource amounts (rdma/hca: 1)";
  if (key == "spread") return "expected a list of {topologyKey, maxSkew}";
  return "expected a list of workload names";
}

// One item of a list-valued field as CSV writes it: a device spec, a workload name ({service: x}
// as in specs, or plain), a spread rule {topologyKey, maxSkew} as "KEY[:MAXSKEW]".
std::optional<std::string> YamlListItem(const std::string& key, const YAML::Node& item, const std::string& path,
                                        Diagnostics* diags, const std::string& file) {
  if (item.IsScalar()) {
    if (key != "spread") return item.Scalar();
    diags->Add(file, LineOf(item), path, "expected {topologyKey, maxSkew}");
    return std::nullopt;
  }
  const bool spread = key == "spread";
  if (!item.IsMap() || key == "devices") {
    diags->Add(file, LineOf(item), path,
               key == "devices" ? "expected a device spec KIND:VENDOR:MODEL:COUNT[:MEMORY]"
                                : (spread ? "expected {topologyKey, maxSkew}" : "expected a workload name"));
    return std::nullopt;
  }
  std::string topology_key, skew, service;
  bool ok = true;
  for (const auto& kv : item) {
    const std::string sub = kv.first.Scalar();
    const bool known = spread ? (sub == "topologyKey" || sub == "maxSkew") : sub == "service";
    if (!known) {
      diags->Add(file, LineOf(kv.first), path + "." + sub,
                 spread ? "unknown field (expected topologyKey or maxSkew)" : "unknown field (expected service)");
      ok = false;
      continue;
    }
    if (!kv.second.IsScalar()) {
      diags->Add(file, LineOf(kv.first), path + "." + sub, "expected a scalar");
      ok = false;
      continue;
    }
    (sub == "topologyKey" ? topology_key : sub == "maxSkew" ? skew : service) = kv.second.Scalar();
  }
  if (!ok) return std::nullopt;
  if (!spread) return service;
  return skew.empty() ? topology_key : topology_key + ":" + skew;
}

// Reads one list entry (a map) of `section` into a record, mapping YAML keys to canonical ones.
Record ReadYamlRecord(const YAML::Node& entry, const std::string& prefix, bool is_node, Diagnostics* diags,
                      const std::string& file) {
  Record rec;
  rec.line = LineOf(entry);
  rec.prefix = prefix;
  if (!entry.IsMap()) {
    diags->Add(file, rec.line, prefix, "expected a map of fields");
    return rec;
  }
  for (const auto& kv : entry) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    const std::string path = prefix + "." + key;
    const int line = LineOf(value) > 0 ? LineOf(value) : LineOf(kv.first);
    const bool map_items = key == "extended" || (is_node && key == "labels");
    const bool list_items = (is_node && key == "devices") || (!is_node && (key == "spread" || key == "antiAffinity"));
    if (map_items || list_items) {
      Field f{path, line, "", {}};
      if (map_items && value.IsMap()) {
        for (const auto& entry_kv : value) {
          if (!entry_kv.second.IsScalar() && !entry_kv.second.IsNull()) {
            diags->Add(file, LineOf(entry_kv.second), path + "." + entry_kv.first.Scalar(), "expected a scalar value");
            continue;
          }
          f.items.emplace_back(entry_kv.first.Scalar() + "=" + ScalarText(entry_kv.second), LineOf(entry_kv.first));
        }
      } else if (list_items && value.IsSequence()) {
        for (size_t i = 0; i < value.size(); ++i) {
          const std::string item_path = path + "[" + std::to_string(i) + "]";
          if (auto text = YamlListItem(key, value[i], item_path, diags, file)) f.items.emplace_back(*text, LineOf(value[i]));
        }
      } else if (!value.IsNull()) {
        diags->Add(file, line, path, ExpectedShape(key));
        continue;
      }
      rec.fields.emplace(key, std::move(f));
      continue;
    }
    if (!is_node && key == "accelerators") {
      if (!value.IsMap()) {
        diags->Add(file, line, path, "expected a map with flavor, count, share and memory");
        continue;
      }
      for (const auto& a : value) {
        const std::string sub = a.first.Scalar();
        static const std::map<std::string, std::string> kAccelKeys = {
            {"flavor", "accelerator"}, {"count", "count"}, {"share", "share"}, {"memory", "deviceMemory"}};
        auto it = kAccelKeys.find(sub);
        if (it == kAccelKeys.end()) {
          diags->Add(file, LineOf(a.first), path + "." + sub, "unknown field (expected flavor, count, share or memory)");
          continue;
        }
        if (!a.second.IsScalar() && !a.second.IsNull()) {
          diags->Add(file, LineOf(a.second), path + "." + sub, "expected a scalar");
          continue;
        }
        rec.fields[it->second] = Field{path + "." + sub, LineOf(a.second), ScalarText(a.second), {}};
      }
      continue;
    }
    const auto& keys = is_node ? std::vector<std::string_view>(kNodeKeys.begin(), kNodeKeys.end())
                               : std::vector<std::string_view>(kWorkloadKeys.begin(), kWorkloadKeys.end());
    const bool known = std::find(keys.begin(), keys.end(), key) != keys.end() &&
                       (is_node || (key != "accelerator" && key != "count" && key != "share" && key != "deviceMemory"));
    if (!known) {
      diags->Add(file, LineOf(kv.first), path, "unknown field");
      continue;
    }
    if (!value.IsScalar() && !value.IsNull()) {
      diags->Add(file, line, path, "expected a scalar");
      rec.broken.push_back(key);
      continue;
    }
    rec.fields[key] = Field{path, line, ScalarText(value), {}};
  }
  return rec;
}

// ---- CSV form. ----

// Splits one CSV line; fields may be double-quoted with "" for a quote. Returns false with
// `error` set on an unterminated quote or text after a closing quote.
bool SplitCsv(std::string_view line, std::vector<std::string>* fields, std::string* error) {
  fields->clear();
  size_t i = 0;
  while (true) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) {
          *error = "unterminated quoted field";
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') {
        *error = "unexpected text after a closing quote";
        return false;
      }
    } else {
      const size_t comma = line.find(',', i);
      const size_t end = comma == std::string_view::npos ? line.size() : comma;
      field = std::string(Trim(line.substr(i, end - i)));
      i = end;
    }
    fields->push_back(std::move(field));
    if (i >= line.size()) return true;
    ++i;  // the comma
    if (i == line.size()) {
      fields->emplace_back();
      return true;
    }
  }
}

// Reads a CSV table whose header names the columns (any order, known keys only).
std::vector<Record> ReadCsvTable(std::string_view text, const std::string& file, bool is_node, Diagnostics* diags) {
  std::vector<Record> records;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::string> header;
  std::vector<std::string> fields;
  std::string error;
  int number = 0;
  size_t pos = 0;
  bool have_header = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty() || Trim(line).front() == '#') continue;
    if (!SplitCsv(line, &fields, &error)) {
      diags->Add(file, number, "", error);
      if (!have_header) return records;
      continue;
    }
    if (!have_header) {
      have_header = true;
      header = fields;
      const auto keys = is_node ? std::vector<std::string_view>(kNodeKeys.begin(), kNodeKeys.end())
                                : std::vector<std::string_view>(kWorkloadKeys.begin(), kWorkloadKeys.end());
      bool bad = false;
      for (size_t i = 0; i < header.size(); ++i) {
        if (std::find(keys.begin(), keys.end(), header[i]) == keys.end()) {
          diags->Add(file, number, header[i], "unknown column");
          bad = true;
        } else if (std::find(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(i), header[i]) !=
                   header.begin() + static_cast<std::ptrdiff_t>(i)) {
          diags->Add(file, number, header[i], "column given twice");
          bad = true;
        }
      }
      if (bad) return records;
      continue;
    }
    if (fields.size() != header.size()) {
      diags->Add(file, number, "",
                 "expected " + std::to_string(header.size()) + " columns, found " + std::to_string(fields.size()));
      continue;
    }
    Record rec;
    rec.line = number;
    for (size_t i = 0; i < header.size(); ++i) {
      Field f{header[i], number, "", {}};
      if (IsListKey(header[i])) {
        std::string_view rest = fields[i];
        while (!Trim(rest).empty()) {
          const size_t cut = rest.find_first_of(";,");
          const std::string_view item = Trim(rest.substr(0, cut));
          if (!item.empty()) f.items.emplace_back(std::string(item), number);
          if (cut == std::string_view::npos) break;
          rest.remove_prefix(cut + 1);
        }
      } else {
        f.text = fields[i];
      }
      rec.fields.emplace(header[i], std::move(f));
    }
    records.push_back(std::move(rec));
  }
  if (!have_header) diags->Add(file, number > 0 ? number : 1, "", "empty file: expected a header row");
  return records;
}

Result<std::string> ReadWholeFile(const std::string& path) { return ReadFile(path, "trace file"); }

}  // namespace

std::string_view GenericWorkloadKindName(GenericWorkloadKind kind) {
  switch (kind) {
    case GenericWorkloadKind::kTrainingJob: return "TrainingJob";
    case GenericWorkloadKind::kInferenceService: return "InferenceService";
    case GenericWorkloadKind::kExperiment: return "Experiment";
    case GenericWorkloadKind::kEvaluation: return "Evaluation";
    case GenericWorkloadKind::kBatchJob: return "BatchJob";
  }
  return "BatchJob";
}

Result<GenericDevices> ParseDeviceSpec(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    parts.push_back(Trim(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start)));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  const std::string spec(text);
  if (parts.size() < 4 || parts.size() > 5) {
    return InvalidArgument("invalid device spec '" + spec + "': expected KIND:VENDOR:MODEL:COUNT[:MEMORY]");
  }
  if (parts[0] != "gpu" && parts[0] != "npu") {
    return InvalidArgument("invalid device spec '" + spec + "': kind must be gpu or npu, found '" +
                           std::string(parts[0]) + "'");
  }
  auto flavor = Flavor::Parse(std::string(parts[0]) + "/" + std::string(parts[1]) + "/" + std::string(parts[2]));
  if (!flavor.ok()) return flavor.status().WithContext("invalid device spec '" + spec + "'");
  GenericDevices d;
  d.flavor = *std::move(flavor);
  int64_t count = 0;
  if (!ParseInt(parts[3], &count) || count < 1 || count > 1024) {
    return InvalidArgument("invalid device spec '" + spec + "': COUNT must be 1..1024, found '" +
                           std::string(parts[3]) + "'");
  }
  d.count = static_cast<int32_t>(count);
  if (parts.size() == 5) {
    auto mem = Quantity::Parse(parts[4]);
    if (!mem.ok()) return mem.status().WithContext("invalid device spec '" + spec + "': MEMORY");
    if (mem->milli() <= 0 || !mem->IsWhole()) {
      return InvalidArgument("invalid device spec '" + spec + "': MEMORY must be a positive number of bytes");
    }
    d.memory = *mem;
  }
  return d;
}

Result<GenericTrace> ParseGenericTraceYaml(std::string_view text, std::string_view file) {
  const std::string name(file);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(Diagnostic{name, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", e.msg}.ToString());
  }
  Diagnostics diags;
  if (!root.IsMap()) {
    diags.Add(name, root.IsDefined() ? LineOf(root) : 1, "", "expected a map with 'nodes' and 'workloads'");
    return diags.ToStatus();
  }
  std::vector<Record> nodes;
  std::vector<Record> workloads;
  bool saw_nodes = false;
  bool saw_workloads = false;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const bool is_node = key == "nodes";
    if (!is_node && key != "workloads") {
      diags.Add(name, LineOf(kv.first), key, "unknown field (expected nodes and workloads)");
      continue;
    }
    (is_node ? saw_nodes : saw_workloads) = true;
    if (kv.second.IsNull()) continue;
    if (!kv.second.IsSequence()) {
      diags.Add(name, LineOf(kv.second), key, "expected a list");
      continue;
    }
    for (size_t i = 0; i < kv.second.size(); ++i) {
      Record rec = ReadYamlRecord(kv.second[i], key + "[" + std::to_string(i) + "]", is_node, &diags, name);
      (is_node ? nodes : workloads).push_back(std::move(rec));
    }
  }
  if (!saw_nodes) diags.Add(name, 1, "nodes", "required list is missing");
  if (!saw_workloads) diags.Add(name, 1, "workloads", "required list is missing");
  return Assemble(nodes, name, workloads, name, &diags);
}

Result<GenericTrace> ParseGenericTraceCsv(std::string_view nodes_csv, std::string_view nodes_file,
                                          std::string_view workloads_csv, std::string_view workloads_file) {
  Diagnostics diags;
  const std::string nf(nodes_file);
  const std::string wf(workloads_file);
  std::vector<Record> nodes = ReadCsvTable(nodes_csv, nf, /*is_node=*/true, &diags);
  std::vector<Record> workloads = ReadCsvTable(workloads_csv, wf, /*is_node=*/false, &diags);
  return Assemble(nodes, nf, workloads, wf, &diags);
}

Result<GenericTrace> LoadGenericTrace(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::string nodes_path = path + "/nodes.csv";
    const std::string workloads_path = path + "/workloads.csv";
    ABACUS_ASSIGN_OR_RETURN(std::string nodes, ReadWholeFile(nodes_path));
    ABACUS_ASSIGN_OR_RETURN(std::string workloads, ReadWholeFile(workloads_path));
    return ParseGenericTraceCsv(nodes, nodes_path, workloads, workloads_path);
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".yaml" && ext != ".yml") {
    return InvalidArgument("trace '" + path + "': expected a .yaml/.yml file or a folder with nodes.csv and workloads.csv");
  }
  ABACUS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  return ParseGenericTraceYaml(text, path);
}

}  // namespace abacus::sim

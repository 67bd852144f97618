#include "server/workload_update.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "workload/documents.h"

namespace abacus::server {

using nlohmann::json;

namespace {

// `elements`: arrays of equal length are compared element by element ("quotas[0].nominal").
void Diff(const json& a, const json& b, const std::string& path, json& out, bool elements = false) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      Diff(a.contains(k) ? a[k] : json(), b.contains(k) ? b[k] : json(), path.empty() ? k : path + "." + k, out,
           elements);
    }
    return;
  }
  if (elements && a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) Diff(a[i], b[i], path + "[" + std::to_string(i) + "]", out, elements);
    return;
  }
  if (a != b) out.push_back({{"path", path}, {"from", a}, {"to", b}});
}

// The canonical document of `w` as plain JSON.
json Canonical(const Workload& w) { return json::parse(EncodeSpecObject(SpecObject(w)).dump()); }

bool SameTemplate(const RevisionRecord& a, const RevisionRecord& b) {
  return a.image == b.image && a.command == b.command && a.env == b.env;
}

std::string Shown(const json& v) {
  if (v.is_null()) return "(none)";
  if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
  return v.dump();
}

// OK when `diff` changes only paths mutable for `kind`; else InvalidArgument naming them, and
// them in `*immutable`.
Status ImmutableChanged(const json& diff, WorkloadKind kind, std::vector<std::string>* immutable) {
  std::vector<std::string> fixed = ImmutablePaths(diff, kind);
  if (fixed.empty()) return Status::OK();
  if (immutable != nullptr) *immutable = fixed;
  std::string list;
  for (const auto& f : fixed) list += (list.empty() ? "" : ", ") + f;
  return InvalidArgument("immutable field(s) changed: " + list +
                         " (mutable: labels, spec.image, spec.command, spec.env" +
                         (kind == WorkloadKind::kInferenceService
                              ? std::string(", spec.replicas, spec.minReplicas, spec.maxReplicas, spec.autoscaling, "
                                            "spec.rollout, spec.probes, spec.drainSeconds")
                              : std::string()) +
                         "; submit a new workload for the rest)");
}

}  // namespace

Status CheckMutable(const Workload& current, const Workload& proposed, std::vector<std::string>* immutable) {
  return ImmutableChanged(DocumentDiff(Canonical(current), Canonical(proposed)), current.kind(), immutable);
}

json FieldDiff(const json& before, const json& after) {
  json out = json::array();
  Diff(before, after, "", out, true);
  return out;
}

json DocumentDiff(const json& before, const json& after) {
  json out = json::array();
  Diff(before, after, "", out);
  return out;
}

std::vector<std::string> ImmutablePaths(const json& diff, WorkloadKind kind) {
  static constexpr std::array<std::string_view, 4> kAny = {"labels", "spec.image", "spec.command", "spec.env"};
  static constexpr std::array<std::string_view, 7> kService = {"spec.replicas",    "spec.minReplicas",
                                                               "spec.maxReplicas", "spec.autoscaling",
                                                               "spec.rollout",     "spec.probes",
                                                               "spec.drainSeconds"};
  auto under = [](const std::string& path, std::string_view prefix) {
    return path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                              path[prefix.size()] == '.');
  };
  std::vector<std::string> out;
  for (const auto& d : diff) {
    std::string path = d.value("path", "");
    bool ok = std::any_of(kAny.begin(), kAny.end(), [&](std::string_view p) { return under(path, p); });
    if (kind == WorkloadKind::kInferenceService) {
      ok = ok || std::any_of(kService.begin(), kService.end(), [&](std::string_view p) { return under(path, p); });
    }
    if (!ok) out.push_back(path);
  }
  return out;
}

std::string SpecVersion(const Workload& w) {
  if (const InferenceSpec* inf = w.inference(); inf != nullptr && inf->rollout) return inf->rollout->version;
  auto it = w.labels.find("version");
  return it == w.labels.end() ? "" : it->second;
}

RevisionRecord TemplateOf(const Workload& w, int32_t revision) {
  RevisionRecord r;
  r.revision = revision;
  r.version = SpecVersion(w);
  r.image = w.spec.image;
  r.command = w.spec.command;
  r.env = w.spec.env;
  r.diff = json::array();
  return r;
}

const RevisionRecord* RevisionForVersion(const WorkloadRecord& r, const std::string& version) {
  for (auto it = r.revisions.rbegin(); it != r.revisions.rend(); ++it) {
    if (it->version == version) return &*it;
  }
  return nullptr;
}

const RevisionRecord* TemplateForTask(const WorkloadRecord& r, const PlacementRecord& p) {
  if (r.revisions.empty() || r.spec.kind() != WorkloadKind::kInferenceService) return nullptr;
  return RevisionForVersion(r, p.version);
}

Result<UpdatePlan> PlanUpdate(const WorkloadRecord& current, Workload proposed, const std::string& by, Time now,
                              std::vector<std::string>* immutable) {
  UpdatePlan plan;
  plan.revisions = current.revisions;
  if (plan.revisions.empty()) {
    plan.revisions.push_back(TemplateOf(current.spec, 1));  // the submission
    plan.revisions.back().at = current.submitted;
  }
  const int32_t next_revision = plan.revisions.back().revision + 1;
  // 1) A service's template belongs to a version: a new template without a new version gets
  //    "r<N>"; a new version without rollout settings rolls out with the defaults.
  if (InferenceSpec* inf = std::get_if<InferenceSpec>(&proposed.details);
      inf != nullptr && current.spec.kind() == WorkloadKind::kInferenceService) {
    RevisionRecord was = TemplateOf(current.spec, 0), now_t = TemplateOf(proposed, 0);
    std::string version = SpecVersion(proposed);
    if (!SameTemplate(was, now_t) && version == SpecVersion(current.spec)) version = "r" + std::to_string(next_revision);
    if (version != SpecVersion(current.spec) || inf->rollout) {
      if (!inf->rollout) inf->rollout = Rollout{};
      inf->rollout->version = version;
    }
  }
  // 2) The diff, and what may not change.
  plan.diff = DocumentDiff(Canonical(current.spec), Canonical(proposed));
  ABACUS_RETURN_IF_ERROR(ImmutableChanged(plan.diff, current.spec.kind(), immutable));
  plan.next = std::move(proposed);
  if (plan.diff.empty()) return plan;  // nothing to do: revision 0
  // 3) A new revision when the template or the version changed.
  RevisionRecord t = TemplateOf(plan.next, next_revision);
  const RevisionRecord& last = plan.revisions.back();
  if (!SameTemplate(t, last) || t.version != last.version) {
    t.at = now;
    t.by = by;
    t.diff = plan.diff;
    plan.revisions.push_back(std::move(t));
  }
  plan.revision = plan.revisions.back().revision;
  return plan;
}

Result<Workload> RollbackTarget(const WorkloadRecord& r, int32_t revision) {
  if (r.revisions.size() < 2) {
    return FailedPrecondition("workload " + r.id + " has no earlier revision to roll back to");
  }
  const RevisionRecord* target = nullptr;
  if (revision == 0) {
    target = &r.revisions[r.revisions.size() - 2];
  } else {
    for (const auto& v : r.revisions) {
      if (v.revision == revision) target = &v;
    }
  }
  if (target == nullptr) return NotFound("workload " + r.id + " has no revision " + std::to_string(revision));
  Workload w = r.spec;
  w.spec.image = target->image;
  w.spec.command = target->command;
  w.spec.env = target->env;
  if (InferenceSpec* inf = std::get_if<InferenceSpec>(&w.details)) {
    if (!inf->rollout) inf->rollout = Rollout{};
    inf->rollout->version = target->version;
  } else if (!target->version.empty()) {
    w.labels["version"] = target->version;
  }
  return w;
}

std::string DiffLine(const json& diff) {
  std::string out;
  for (const auto& d : diff) {
    out += (out.empty() ? "" : "; ") + d.value("path", "") + " " + Shown(d.value("from", json())) + " → " +
           Shown(d.value("to", json()));
  }
  return out.empty() ? "no change" : out;
}

}  // namespace abacus::server

// YAML → Workload: the fields every kind shares and the task groups (see workload_codec.h).
#include <algorithm>

#include "common/nesting.h"
#include "model/extended_request.h"
#include "model/extended_resource.h"
#include "model/quantity_limit.h"
#include "tenancy/quantity_field.h"
#include "tenancy/tenant.h"
#include "tenancy/yaml_json.h"
#include "workload/kind_decode.h"
#include "workload/placement_check.h"
#include "workload/secret_refs.h"
#include "workload/utf8.h"
#include "workload/workload_codec.h"

namespace abacus {
namespace {

using P = Presence;

// resources.extended: {rdma/hca: 1, ephemeral-storage: 100Gi}; each name valid, each amount whole
// and positive.
std::map<std::string, int64_t> DecodeExtended(MapReader& resources) {
  std::map<std::string, int64_t> out;
  auto m = resources.StringMap("extended");
  if (!m) return out;
  for (const auto& [name, text] : *m) {
    auto x = ExtendedResource::Parse(name);
    if (!x.ok()) {
      resources.Error("extended", x.status().message());
      continue;
    }
    auto amount = ParseExtendedRequest(*x, text);  // the one rule for a requested amount (traces use it too)
    if (!amount.ok()) {
      resources.Error("extended", amount.status().message());
    } else {
      out[name] = *amount;
    }
  }
  return out;
}

std::optional<AcceleratorRequest> DecodeAccelerators(MapReader& resources) {
  auto r = resources.Map("accelerators", {"flavor", "count", "share", "memory"});
  if (!r) return std::nullopt;
  AcceleratorRequest a;
  if (auto f = r->Parsed<FlavorPattern>("flavor", P::kRequired, FlavorPattern::Parse)) {
    if (f->text() == "cpu") {
      r->Error("flavor", "'cpu' is not an accelerator; leave accelerators out for CPU-only tasks");
    }
    a.flavor = *f;
  }
  if (auto c = r->Int("count", P::kOptional, 1, 1024)) a.count = static_cast<int32_t>(*c);
  if (auto s = r->Int("share", P::kOptional, 1, 1000)) {
    a.share = static_cast<int32_t>(*s);
    if (a.count > 1) {
      r->Error("share", "share is allowed only with count 1 (count is " + std::to_string(a.count) + ")");
    }
  }
  a.memory = BoundedQty(*r, "memory", QuantityUnit::kMemory, P::kOptional, /*positive=*/true);
  return a;
}

std::optional<Toleration> DecodeToleration(SpecContext& ctx, const SpecNode& node,
                                           const std::string& path) {
  MapReader r(ctx, node, path, {"key", "operator", "value", "effect"});
  if (!r.valid()) return std::nullopt;
  Toleration t;
  if (auto k = r.String("key")) t.key = *k;
  if (auto op = r.String("operator")) {
    if (*op == "Exists") {
      t.op = Toleration::Op::kExists;
    } else if (*op != "Equal") {
      r.Error("operator", "expected Equal or Exists, got '" + *op + "'");
    }
  }
  if (auto v = r.String("value")) t.value = *v;
  if (auto e = r.Parsed<TaintEffect>("effect", P::kOptional, ParseTaintEffect)) t.effect = *e;
  if (t.op == Toleration::Op::kExists && r.Has("value")) {
    r.Error("value", "a toleration with operator Exists takes no value");
  }
  if (t.op == Toleration::Op::kEqual && t.key.empty()) {
    r.ctx().Error(r.line(), r.Path("key"), "required field is missing (operator Equal needs a key)");
  }
  return t;
}

// Reads a task group's `placement:` (docs/specs.md): maxPerNode, spread, antiAffinity.
PlacementSpec DecodePlacement(MapReader& p) {
  PlacementSpec out;
  if (auto v = p.Int("maxPerNode", P::kOptional, 1, kMaxPlacementLimit)) out.max_per_node = static_cast<int32_t>(*v);
  if (auto list = p.List("spread")) {
    if (list->size() == 0) p.Error("spread", "expected at least one {topologyKey, maxSkew}, got an empty list");
    for (size_t i = 0; i < list->size(); ++i) {
      MapReader s(p.ctx(), (*list)[i], p.Path("spread") + "[" + std::to_string(i) + "]", {"topologyKey", "maxSkew"});
      if (!s.valid()) continue;
      SpreadConstraint c;
      if (auto k = s.String("topologyKey", P::kRequired)) {
        if (std::string problem = SpreadKeyProblem(*k, out.spread); !problem.empty()) s.Error("topologyKey", problem);
        c.topology_key = *k;
      }
      if (auto m = s.Int("maxSkew", P::kOptional, 1, kMaxPlacementLimit)) c.max_skew = static_cast<int32_t>(*m);
      out.spread.push_back(std::move(c));
    }
  }
  if (auto list = p.List("antiAffinity")) {
    for (size_t i = 0; i < list->size(); ++i) {
      MapReader a(p.ctx(), (*list)[i], p.Path("antiAffinity") + "[" + std::to_string(i) + "]", {"service"});
      if (!a.valid()) continue;
      if (auto v = a.Name("service", P::kRequired)) out.anti_affinity.push_back(*v);
    }
  }
  return out;
}

std::optional<TaskGroup> DecodeTaskGroup(SpecContext& ctx, const SpecNode& node,
                                         const std::string& path) {
  MapReader r(ctx, node, path,
              {"name", "replicas", "resources", "topology", "nodeSelector", "tolerations", "runtime", "placement"});
  if (!r.valid()) return std::nullopt;
  TaskGroup g;
  if (auto v = r.Name("name", P::kRequired)) g.name = *v;
  if (auto v = r.Int("replicas", P::kOptional, 1, 100'000)) g.replicas = static_cast<int32_t>(*v);
  if (auto res = r.Map("resources", {"cpu", "memory", "accelerators", "extended"}, P::kRequired)) {
    if (auto q = BoundedQty(*res, "cpu", QuantityUnit::kCpu, P::kRequired, /*positive=*/true)) g.resources.cpu = *q;
    if (auto q = BoundedQty(*res, "memory", QuantityUnit::kMemory, P::kRequired, /*positive=*/true)) {
      g.resources.memory = *q;
    }
    g.resources.accelerators = DecodeAccelerators(*res);
    g.resources.extended = DecodeExtended(*res);
  }
  if (auto t = r.Parsed<TopologyPolicy>("topology", P::kOptional, ParseTopologyPolicy)) {
    g.topology = *t;
    if (*t != TopologyPolicy::kNone && !g.resources.accelerators) {
      r.Error("topology", "topology " + std::string(TopologyPolicyName(*t)) + " needs accelerators");
    }
  }
  if (auto m = r.StringMap("nodeSelector")) g.node_selector = *m;
  if (auto list = r.List("tolerations")) {
    for (size_t i = 0; i < list->size(); ++i) {
      auto t = DecodeToleration(ctx, (*list)[i], r.Path("tolerations") + "[" + std::to_string(i) + "]");
      if (t) g.tolerations.push_back(*t);
    }
  }
  if (auto p = r.Map("placement", {"maxPerNode", "spread", "antiAffinity"})) g.placement = DecodePlacement(*p);
  if (auto list = r.StringList("runtime")) {
    for (size_t i = 0; i < list->size(); ++i) {
      auto c = VersionConstraint::Parse((*list)[i]);
      if (!c.ok()) {
        ctx.Error(r.LineOf("runtime"), r.Path("runtime") + "[" + std::to_string(i) + "]",
                  c.status().message());
        continue;
      }
      g.runtime.push_back(*c);
    }
  }
  return g;
}

std::optional<DataMount> DecodeMount(SpecContext& ctx, const SpecNode& node,
                                     const std::string& path) {
  MapReader r(ctx, node, path, {"path", "mountPath", "readOnly"});
  if (!r.valid()) return std::nullopt;
  DataMount m;
  if (auto v = r.String("path", P::kRequired)) {
    if (Status st = CheckMountPath(*v); !st.ok()) r.Error("path", st.message());
    m.path = *v;
  }
  if (auto v = r.String("mountPath")) {
    if (Status st = CheckMountPath(*v); !st.ok()) r.Error("mountPath", st.message());
    m.mount_path = *v;
  }
  m.read_only = r.Bool("readOnly").value_or(true);
  return m;
}

void DecodeCommonSpec(MapReader& spec, WorkloadKind kind, WorkloadSpec& s) {
  if (auto v = spec.String("image")) s.image = *v;
  s.read_only_root = spec.Bool("readOnlyRootFilesystem").value_or(false);
  if (s.read_only_root && s.image.empty() && spec.valid()) {
    spec.Error("readOnlyRootFilesystem", "needs an image (a plain process has no root filesystem of its own)");
  }
  if (auto v = spec.StringList("command")) {
    if (v->empty()) spec.Error("command", "must not be empty");
    s.command = *v;
  } else if (!spec.Has("command") && !spec.Has("image") && spec.valid()) {
    spec.ctx().Error(spec.line(), spec.Path("command"),
                     "required field is missing (without an image the command is what runs)");
  }
  internal::DecodeEnvAndSecrets(spec, s);
  if (auto list = spec.List("taskGroups", P::kRequired)) {
    if (list->size() == 0) spec.Error("taskGroups", "needs at least one task group");
    for (size_t i = 0; i < list->size(); ++i) {
      std::string path = spec.Path("taskGroups") + "[" + std::to_string(i) + "]";
      auto g = DecodeTaskGroup(spec.ctx(), (*list)[i], path);
      if (!g) continue;
      for (size_t j = 0; j < s.task_groups.size(); ++j) {
        if (!g->name.empty() && s.task_groups[j].name == g->name) {
          const SpecNode item = (*list)[i];
          int line = item["name"].Line();
          spec.ctx().Error(line, path + ".name",
                           "duplicate task group name '" + g->name + "' (first at " +
                               spec.Path("taskGroups") + "[" + std::to_string(j) + "])");
          break;
        }
      }
      s.task_groups.push_back(std::move(*g));
    }
  }
  s.gang = spec.Bool("gang").value_or(DefaultGangFor(kind));
  s.max_queue_wait = spec.Dur("maxQueueWait");
  if (s.max_queue_wait && s.max_queue_wait->count() == 0) spec.Error("maxQueueWait", "must be positive");
  if (auto list = spec.List("mounts")) {
    for (size_t i = 0; i < list->size(); ++i) {
      auto m = DecodeMount(spec.ctx(), (*list)[i], spec.Path("mounts") + "[" + std::to_string(i) + "]");
      if (m) s.mounts.push_back(std::move(*m));
    }
  }
}

}  // namespace

std::optional<Workload> DecodeWorkload(const SpecNode& doc, SpecContext& ctx) {
  int before = ctx.errors();
  MapReader r(ctx, doc, "", {"kind", "name", "project", "queue", "priorityClass", "labels", "spec"});
  if (!r.valid()) return std::nullopt;
  auto kind = r.Parsed<WorkloadKind>("kind", P::kRequired, ParseWorkloadKind);
  if (!kind) return std::nullopt;
  Workload w;
  if (auto v = r.Name("name", P::kRequired)) w.name = *v;
  if (auto v = r.String("project", P::kRequired)) {
    if (auto p = ParseProjectRef(*v); !p.ok()) r.Error("project", p.status().message());
    w.project = *v;
  }
  if (auto v = r.Name("queue", P::kRequired)) w.queue = *v;
  w.priority_class = r.Name("priorityClass").value_or(std::string(DefaultPriorityClassFor(*kind)));
  if (auto v = r.StringMap("labels")) w.labels = *v;
  w.admission = AdmissionFromLabels(w.labels);  // the one place the labels are read back

  std::vector<std::string_view> keys = internal::CommonSpecKeys();
  const auto& extra = internal::KindSpecKeys(*kind);
  keys.insert(keys.end(), extra.begin(), extra.end());
  if (auto spec = r.Map("spec", keys, P::kRequired)) {
    DecodeCommonSpec(*spec, *kind, w.spec);
    w.details = internal::DecodeKindSpec(*kind, *spec, w.spec);
  }
  if (ctx.errors() != before) return std::nullopt;
  return w;
}

Result<Workload> WorkloadFromJson(const nlohmann::json& j) {
  Diagnostics diags;
  SpecContext ctx("", &diags);
  auto w = DecodeWorkload(SpecNode(j), ctx);
  if (!w) return diags.ToStatus();
  return *w;
}

Result<Workload> WorkloadFromYaml(std::string_view text, const std::string& filename) {
  Diagnostics diags;
  if (auto bad = FindInvalidUtf8(text)) {
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + *bad, '\n'));
    diags.Add(filename, line, "", "text is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
    return diags.ToStatus();
  }
  if (int line = FindYamlNestingOverflow(text)) {
    diags.Add(filename, line, "", NestingMessage());
    return diags.ToStatus();
  }
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    diags.Add(filename, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    return diags.ToStatus();
  }
  SpecContext ctx(filename, &diags);
  auto w = DecodeWorkload(doc, ctx);
  if (!w) return diags.ToStatus();
  return *w;
}

}  // namespace abacus

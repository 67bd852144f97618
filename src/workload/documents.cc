#include "workload/documents.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "common/mutex.h"
#include "common/nesting.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/utf8.h"
#include "workload/workload_codec.h"
#include "workload/yaml_guard.h"

namespace abacus {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

const std::vector<std::string_view>& KnownKinds() {
  static const std::vector<std::string_view> kKinds = {
      "TrainingJob", "InferenceService", "Experiment",  "Evaluation", "BatchJob", "Tenant",
      "Project",     "Cohort",           "Queue",       "PriorityClass", "Flavor", "Pool", "Cluster", "Reservation",
      "AdmissionPolicy", "User"};
  return kKinds;
}

// The built-in kinds, then the kinds registered by RegisterExtensionKind (Secret, PriceList…),
// comma separated: what an unknown or missing kind's message lists.
std::string KnownKindNames();

template <typename T>
std::optional<SpecObject> Wrap(std::optional<T> v) {
  if (!v) return std::nullopt;
  return SpecObject(std::move(*v));
}

// Decodes one document by its kind; nullopt when it had problems (reported to ctx).
std::optional<SpecObject> DecodeObject(const SpecNode& doc, SpecContext& ctx) {
  if (!doc.IsMap()) {
    ctx.Error(doc.Line(), "", "expected a mapping with a kind, got " + SpecContext::Describe(doc));
    return std::nullopt;
  }
  const SpecNode kind_node = doc["kind"];
  if (!kind_node.IsDefined() || kind_node.IsNull()) {
    ctx.Error(doc.Line(), "kind",
              "required field is missing; known kinds: " + KnownKindNames());
    return std::nullopt;
  }
  if (!kind_node.IsScalar()) {
    ctx.Error(kind_node.Line(), "kind", "expected a string, got " + SpecContext::Describe(kind_node));
    return std::nullopt;
  }
  const std::string kind = kind_node.Scalar();
  if (ParseWorkloadKind(kind).ok()) return Wrap(DecodeWorkload(doc, ctx));
  if (kind == kTenantKind) return Wrap(DecodeTenant(doc, ctx));
  if (kind == kProjectKind) return Wrap(DecodeProject(doc, ctx));
  if (kind == kCohortKind) return Wrap(DecodeCohort(doc, ctx));
  if (kind == kQueueKind) return Wrap(DecodeQueue(doc, ctx));
  if (kind == kPriorityClassKind) return Wrap(DecodePriorityClass(doc, ctx));
  if (kind == kFlavorKind) return Wrap(DecodeFlavorConfig(doc, ctx));
  if (kind == kPoolKind) return Wrap(DecodePoolConfig(doc, ctx));
  if (kind == kClusterKind) return Wrap(DecodeClusterConfig(doc, ctx));
  if (kind == kReservationKind) return Wrap(DecodeReservation(doc, ctx));
  if (IsGovernanceKind(kind)) {
    ctx.Error(kind_node.Line(), "kind",
              "kind " + kind + " is a governance object: read it with ParseDocuments or GovernanceObjectFromJson");
    return std::nullopt;
  }
  const auto& reserved = ReservedKinds();
  if (std::find(reserved.begin(), reserved.end(), kind) != reserved.end()) {
    ctx.Error(kind_node.Line(), "kind", "kind " + kind + " is not supported yet");
  } else {
    ctx.Error(kind_node.Line(), "kind",
              "unknown kind '" + kind + "'; known kinds: " + KnownKindNames());
  }
  return std::nullopt;
}

}  // namespace

namespace {

Mutex& ExtensionMutex() {
  static Mutex mu;
  return mu;
}
std::map<std::string, ExtensionDecoder>& Extensions() {
  static std::map<std::string, ExtensionDecoder> kinds;
  return kinds;
}

std::string KnownKindNames() {
  std::vector<std::string_view> names = KnownKinds();
  MutexLock lock(ExtensionMutex());
  for (const auto& [kind, decode] : Extensions()) {
    if (std::find(names.begin(), names.end(), kind) == names.end()) names.push_back(kind);
  }
  return JoinNames(names);
}

}  // namespace

void RegisterExtensionKind(const std::string& kind, ExtensionDecoder decode) {
  MutexLock lock(ExtensionMutex());
  Extensions()[kind] = std::move(decode);
}

ExtensionDecoder FindExtensionKind(const std::string& kind) {
  MutexLock lock(ExtensionMutex());
  auto it = Extensions().find(kind);
  return it == Extensions().end() ? nullptr : it->second;
}

const std::vector<std::string_view>& ReservedKinds() {
  static const std::vector<std::string_view> kKinds = {"PriceList", "Node"};
  return kKinds;
}

std::string_view Document::kind() const {
  return std::visit(Overloaded{[](const Workload& w) { return WorkloadKindName(w.kind()); },
                               [](const Tenant&) { return kTenantKind; },
                               [](const Project&) { return kProjectKind; },
                               [](const Cohort&) { return kCohortKind; },
                               [](const Queue&) { return kQueueKind; },
                               [](const PriorityClass&) { return kPriorityClassKind; },
                               [](const FlavorConfig&) { return kFlavorKind; },
                               [](const PoolConfig&) { return kPoolKind; },
                               [](const ClusterConfig&) { return kClusterKind; },
                               [](const ReservationConfig&) { return kReservationKind; }},
                    object);
}

std::string Document::name() const {
  return std::visit(Overloaded{[](const Project& p) { return p.FullName(); },
                               [](const FlavorConfig& f) { return f.flavor.name(); },
                               [](const auto& o) { return o.name; }},
                    object);
}

namespace {

// Reads the YAML documents of `text` into `out`; with `array_of_documents`, a top-level list's
// items are the documents (a JSON body's array).
void ReadDocuments(std::string_view text, const std::string& filename, bool array_of_documents,
                   ParsedDocuments& out) {
  if (auto bad = FindInvalidUtf8(text)) {
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + *bad, '\n'));
    out.diagnostics.Add(filename, line, "", "text is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
    return;
  }
  if (int line = FindYamlNestingOverflow(text)) {
    out.diagnostics.Add(filename, line, "", NestingMessage());
    return;
  }
  if (auto line = FindYamlLoadAllLoop(text)) {
    out.diagnostics.Add(filename, *line, "", "YAML syntax error: unexpected ',' outside a flow collection");
    return;
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    out.diagnostics.Add(filename, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    return;
  }
  if (array_of_documents && docs.size() == 1 && docs[0].IsSequence()) {
    std::vector<YAML::Node> items(docs[0].begin(), docs[0].end());
    docs = std::move(items);
  }
  for (const auto& doc : docs) {
    if (doc.IsNull()) continue;
    Document d;
    d.source.file = filename;
    d.source.line = SpecNode(doc).Line();
    SpecContext ctx(filename, &out.diagnostics, &d.source.fields);
    if (IsGovernanceDocument(doc)) {
      if (auto g = DecodeGovernanceObject(doc, ctx)) out.governance.push_back({std::move(*g), std::move(d.source)});
      continue;
    }
    if (doc.IsMap() && doc["kind"] && doc["kind"].IsScalar()) {
      if (ExtensionDecoder decode = FindExtensionKind(doc["kind"].Scalar())) {
        if (auto j = decode(doc, ctx)) {
          out.extensions.push_back({doc["kind"].Scalar(), j->value("name", ""), std::move(*j), std::move(d.source)});
        }
        continue;
      }
    }
    auto object = DecodeObject(doc, ctx);
    if (!object) continue;
    d.object = std::move(*object);
    out.documents.push_back(std::move(d));
  }
}

}  // namespace

ParsedDocuments ParseDocuments(std::string_view text, const std::string& filename) {
  ParsedDocuments out;
  ReadDocuments(text, filename, false, out);
  return out;
}

ParsedDocuments ParseJsonDocumentsWithLines(std::string_view text, const std::string& filename) {
  ParsedDocuments out;
  ReadDocuments(text, filename, true, out);
  return out;
}


Result<SpecObject> SpecObjectFromJson(const nlohmann::json& j) {
  Diagnostics diags;
  SpecContext ctx("", &diags);
  auto object = DecodeObject(SpecNode(j), ctx);
  if (!object) return diags.ToStatus();
  return std::move(*object);
}

nlohmann::ordered_json EncodeSpecObject(const SpecObject& object) {
  return std::visit(Overloaded{[](const Workload& w) { return EncodeWorkload(w); },
                               [](const Tenant& t) { return EncodeTenant(t); },
                               [](const Project& p) { return EncodeProject(p); },
                               [](const Cohort& c) { return EncodeCohort(c); },
                               [](const Queue& q) { return EncodeQueue(q); },
                               [](const PriorityClass& pc) { return EncodePriorityClass(pc); },
                               [](const FlavorConfig& f) { return EncodeFlavorConfig(f); },
                               [](const PoolConfig& p) { return EncodePoolConfig(p); },
                               [](const ClusterConfig& c) { return EncodeClusterConfig(c); },
                               [](const ReservationConfig& r) { return EncodeReservation(r); }},
                    object);
}

nlohmann::json ToJson(const SpecObject& object) { return ToPlainJson(EncodeSpecObject(object)); }

std::string ToYaml(const std::vector<SpecObject>& objects) {
  std::string out;
  for (const auto& o : objects) {
    if (!out.empty()) out += "---\n";
    out += EmitYaml(EncodeSpecObject(o));
  }
  return out;
}

void AddToTenancyConfig(const std::vector<Document>& docs, TenancyConfig& config,
                        Diagnostics& diags) {
  for (const auto& d : docs) {
    Status s = std::visit(
        Overloaded{[&](const Workload&) { return Status::OK(); },
                   [&](const Tenant& t) { return config.AddTenant(t, d.source); },
                   [&](const Project& p) { return config.AddProject(p, d.source); },
                   [&](const Cohort& c) { return config.AddCohort(c, d.source); },
                   [&](const Queue& q) { return config.AddQueue(q, d.source); },
                   [&](const PriorityClass& pc) { return config.AddPriorityClass(pc, d.source); },
                   [&](const FlavorConfig& f) { return config.AddFlavor(f, d.source); },
                   [&](const PoolConfig& p) { return config.AddPool(p, d.source); },
                   [&](const ClusterConfig& c) { return config.AddCluster(c, d.source); },
                   [&](const ReservationConfig& r) { return config.AddReservation(r, d.source); }},
        d.object);
    if (!s.ok()) diags.Add(d.source.file, d.source.LineOf("name"), "name", s.message());
  }
}

void CheckDocuments(const std::vector<Document>& docs, Diagnostics& diags) {
  TenancyConfig config;
  AddToTenancyConfig(docs, config, diags);
  config.CheckReferences(diags);
  std::map<std::string, const Document*> workloads;  // "project/name" → first definition
  for (const auto& d : docs) {
    const Workload* w = d.workload();
    if (w == nullptr) continue;
    auto [it, inserted] = workloads.emplace(w->project + "/" + w->name, &d);
    if (!inserted) {
      diags.Add(d.source.file, d.source.LineOf("name"), "name",
                "duplicate workload '" + w->name + "' in project " + w->project +
                    " (first defined at " + it->second->source.ToString() + ")");
    }
    CheckWorkloadReferences(*w, d.source, config, diags);
  }
}

}  // namespace abacus

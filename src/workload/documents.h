// Multi-document spec files: every kind a user may write (the five workload kinds and the
// tenancy kinds), read from one YAML text with every problem reported at once, and the
// cross-document reference checks that `abacus validate` runs.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/diagnostic.h"
#include "tenancy/yaml_reader.h"
#include "tenancy/pool.h"
#include "tenancy/priority_class.h"
#include "tenancy/queue.h"
#include "tenancy/tenancy_config.h"
#include "tenancy/tenant.h"
#include "workload/governance_spec.h"
#include "workload/workload.h"

namespace abacus {

using SpecObject =
    std::variant<Workload, Tenant, Project, Cohort, Queue, PriorityClass, FlavorConfig, PoolConfig, ClusterConfig,
                 ReservationConfig>;

// One decoded document and where it came from.
struct Document {
  SpecObject object;
  SourceLocation source;  // file, line of the document's first key, lines of its fields

  // Returns the document kind ("TrainingJob", "Queue", "Flavor", …).
  std::string_view kind() const;
  // Returns its name (a Project's full "tenant/project", a Flavor's flavor name).
  std::string name() const;
  // Returns the workload, or nullptr for a tenancy kind.
  const Workload* workload() const { return std::get_if<Workload>(&object); }
};

// A document of a kind another module decodes (PriceList: src/meter/), in canonical JSON.
struct ExtensionDocument {
  std::string kind;
  std::string name;
  nlohmann::json object;
  SourceLocation source;
};

// Decodes one document of an extension kind: reports problems to `ctx` and returns the canonical
// JSON (with "kind" and "name"), or nullopt.
using ExtensionDecoder = std::function<std::optional<nlohmann::json>(const SpecNode&, SpecContext&)>;
// Makes ParseDocuments hand documents of `kind` to `decode` (into ParsedDocuments::extensions)
// instead of calling the kind unsupported. Thread-safe; a later registration replaces one.
void RegisterExtensionKind(const std::string& kind, ExtensionDecoder decode);
// Returns the decoder of `kind`, or nullptr.
ExtensionDecoder FindExtensionKind(const std::string& kind);

struct ParsedDocuments {
  std::vector<Document> documents;  // only documents without problems
  std::vector<ExtensionDocument> extensions;  // extension kinds without problems
  // AdmissionPolicy and User documents without problems (governance_codec.h); they are not
  // SpecObjects, so SpecObjectFromJson rejects them: use GovernanceObjectFromJson.
  std::vector<GovernanceDocument> governance;
  Diagnostics diagnostics;
};

// Kinds reserved for later releases: reported as "kind X is not supported yet".
const std::vector<std::string_view>& ReservedKinds();

// Reads every document of `text` ("---"-separated; empty documents are skipped). `filename`
// prefixes diagnostics. A YAML syntax error stops reading at that point.
ParsedDocuments ParseDocuments(std::string_view text, const std::string& filename);
// The same for a JSON body (one object, or an array of them; JSON is YAML's flow style), read
// with positions: what a body that did not decode is told, `FILE:LINE: field: …`, as YAML is.
ParsedDocuments ParseJsonDocumentsWithLines(std::string_view text, const std::string& filename);

// Decodes one object from JSON (its "kind" picks the type); InvalidArgument listing every
// problem as "field: message" lines.
Result<SpecObject> SpecObjectFromJson(const nlohmann::json& j);
// Returns the canonical JSON of any kind.
nlohmann::json ToJson(const SpecObject& object);
nlohmann::ordered_json EncodeSpecObject(const SpecObject& object);
// Returns the documents as multi-document YAML ("---" between them).
std::string ToYaml(const std::vector<SpecObject>& objects);

// Adds the tenancy documents to `config`, reporting duplicates.
void AddToTenancyConfig(const std::vector<Document>& docs, TenancyConfig& config,
                        Diagnostics& diags);

// Checks a workload's references against `config` and reports problems at its fields:
//   priorityClass must exist (defaults always do); queue and project must exist when `config`
//   has any queues / projects; the queue must belong to the project's tenant; the queue must
//   hold a quota for cpu, memory and an accelerator flavor matching each task group's
//   pattern; a borrowedOnly class needs a queue in a cohort; a reservation pool must exist when
//   pools are known; a temporary quota's flavor must exist when flavors are known.
// `visible` (empty: every object) says which tenant-owned queues and projects the submitter may
// see (govern::SeenBy): a reference to one it may not see is reported exactly like a reference
// to a missing one ("unknown queue 'q'"), never naming its tenant or its quotas.
using ReferenceVisible = std::function<bool(std::string_view kind, const std::string& name, const std::string& tenant)>;
void CheckWorkloadReferences(const Workload& w, const SourceLocation& loc, const TenancyConfig& config,
                             Diagnostics& diags, const ReferenceVisible& visible = {});

// All cross-document checks over `docs` (which may come from several files): builds a
// TenancyConfig, checks its references, then every workload's.
void CheckDocuments(const std::vector<Document>& docs, Diagnostics& diags);

}  // namespace abacus

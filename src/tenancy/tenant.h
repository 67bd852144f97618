// Tenant and Project: who owns work. A project's full name is "tenant/project" ("nlp/llm").
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "model/quantity.h"
#include "tenancy/queue.h"

namespace abacus {

// Temporary quota a tenant's experiments get without an admin: requests of `resource` up to
// `amount` are approved at once; larger ones wait for a tenant admin.
struct AutoApproveLimit {
  QuotaResource resource;
  Quantity amount;
  bool operator==(const AutoApproveLimit&) const = default;
};

struct Tenant {
  std::string name;
  std::string display_name;
  std::vector<std::string> pools;  // pools its work may use; empty = any pool
  std::map<std::string, std::string> labels;
  std::vector<AutoApproveLimit> temporary_quota_auto_approve;  // YAML temporaryQuotaAutoApprove
  bool operator==(const Tenant&) const = default;
};

struct Project {
  std::string tenant;
  std::string name;  // unique within the tenant
  std::string description;
  std::map<std::string, std::string> labels;

  // Returns "tenant/name".
  std::string FullName() const { return tenant + "/" + name; }
  bool operator==(const Project&) const = default;
};

// Splits a project reference "tenant/project" into its two names, each a valid name;
// InvalidArgument otherwise.
Result<std::pair<std::string, std::string>> ParseProjectRef(std::string_view text);

}  // namespace abacus

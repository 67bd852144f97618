// Test-only helpers shared by the server's unit tests and the integration tests: the small
// organisation most of them start from.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace abacus::server::testing_org {

// Returns YAML for tenant `tenant`, project `tenant`/`project` and queue `queue` of the tenant with
// `quotas` as {resource, nominal} pairs, in order.
inline std::string TeamOrg(const std::string& tenant, const std::string& project, const std::string& queue,
                           const std::vector<std::pair<std::string, std::string>>& quotas) {
  std::string out = "kind: Tenant\nname: " + tenant + "\n---\nkind: Project\nname: " + project + "\ntenant: " +
                    tenant + "\n---\nkind: Queue\nname: " + queue + "\ntenant: " + tenant + "\nquotas:\n";
  for (const auto& [resource, nominal] : quotas) out += "  - {resource: " + resource + ", nominal: " + nominal + "}\n";
  return out;
}

// Returns YAML for tenant acme, project acme/ml and queue `queue` of acme with nominal cpu 64 and
// memory 512Gi, plus `a100` devices of `flavor` (gpu/nvidia/A100-80G unless named) when a100 > 0
// (listed first).
inline std::string AcmeOrg(const std::string& queue = "train", int a100 = 2,
                           const std::string& flavor = "gpu/nvidia/A100-80G") {
  std::vector<std::pair<std::string, std::string>> quotas;
  if (a100 > 0) quotas.emplace_back(flavor, std::to_string(a100));
  quotas.emplace_back("cpu", "64");
  quotas.emplace_back("memory", "512Gi");
  return TeamOrg("acme", "ml", queue, quotas);
}

}  // namespace abacus::server::testing_org

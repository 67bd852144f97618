// Test-only helpers shared by the server's unit tests and the integration tests: the small
// organisation most of them start from.
#pragma once

#include <string>

namespace abacus::server::testing_org {

// Returns YAML for tenant acme, project acme/ml and queue `queue` of acme with nominal cpu 64 and
// memory 512Gi, plus `a100` devices of `flavor` (gpu/nvidia/A100-80G unless named) when a100 > 0
// (listed first).
inline std::string AcmeOrg(const std::string& queue = "train", int a100 = 2,
                           const std::string& flavor = "gpu/nvidia/A100-80G") {
  std::string out = "kind: Tenant\nname: acme\n---\nkind: Project\nname: ml\ntenant: acme\n---\nkind: Queue\nname: " +
                    queue + "\ntenant: acme\nquotas:\n";
  if (a100 > 0) out += "  - {resource: " + flavor + ", nominal: " + std::to_string(a100) + "}\n";
  return out + "  - {resource: cpu, nominal: 64}\n  - {resource: memory, nominal: 512Gi}\n";
}

}  // namespace abacus::server::testing_org

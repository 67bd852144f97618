// The organisation the API benchmarks submit into (abacus_api_bench, abacus_cli_bench): one
// tenant, one project and one queue with room for every submission of a run.
#pragma once

namespace abacus::bench {

inline constexpr char kBenchOrg[] = R"(kind: Tenant
name: bench
---
kind: Project
name: load
tenant: bench
---
kind: Queue
name: bench-q
tenant: bench
quotas:
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 256Gi}
)";

}  // namespace abacus::bench

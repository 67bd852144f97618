// The organisation the API benchmarks submit into (`abacus bench api`, bench/cli_bench.cc): one
// tenant, one project and one queue with room for every submission of a run.
#pragma once

namespace abacus::cli {

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

}  // namespace abacus::cli

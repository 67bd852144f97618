// submit_bench: CPU time of each step a submission takes on the server's threads, without HTTP
// or the store: reading the JSON body into a workload, encoding the workload record for the
// store, and sealing the request's audit entry. Prints nanoseconds per submission for each
// step (best of 5 rounds of 20,000) and the CPU share the hypervisor took meanwhile; it never
// passes or fails. abacus_api_bench measures the whole path; this shows where its CPU goes.
//   abacus_submit_bench [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/cpu_steal.h"
#include "govern/audit.h"
#include "server/records.h"
#include "workload/documents.h"

namespace {

using namespace abacus;
using SteadyClock = std::chrono::steady_clock;

// The body abacus_api_bench sends (and `abacus submit` sends for a one-group batch job).
std::string Body(int n) {
  return R"({"kind":"BatchJob","name":"load-0-)" + std::to_string(n) +
         R"(","project":"bench/load","queue":"bench-q","spec":{"command":["true"],"taskGroups":[{"name":"main",)"
         R"("resources":{"cpu":"1","memory":"1Gi"}}],"tasks":1,"parallelism":1}})";
}

// Returns the best nanoseconds per call of `step` over `rounds` rounds of `per_round` calls.
double BestNs(int rounds, int per_round, const std::function<void(int)>& step) {
  double best = 1e18;
  for (int r = 0; r < rounds; ++r) {
    auto start = SteadyClock::now();
    for (int i = 0; i < per_round; ++i) step(i);
    double ns = std::chrono::duration<double, std::nano>(SteadyClock::now() - start).count() / per_round;
    best = std::min(best, ns);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  constexpr int kPerRound = 20'000;
  std::vector<std::string> bodies;
  for (int i = 0; i < 64; ++i) bodies.push_back(Body(i));

  auto parsed = SpecObjectFromJson(nlohmann::json::parse(bodies[0]));
  if (!parsed.ok() || !std::holds_alternative<Workload>(*parsed)) {
    std::fprintf(stderr, "the body does not decode: %s\n", parsed.status().ToString().c_str());
    return 1;
  }
  server::WorkloadRecord record;
  record.id = "wl-3m2joz7ynj";
  record.spec = std::get<Workload>(*parsed);
  record.submitted = FromMicros(1'796'305'715'685'211);

  size_t sink = 0;
  StealMeter steal;
  double parse = BestNs(rounds, kPerRound, [&](int i) {
    nlohmann::json j = nlohmann::json::parse(bodies[static_cast<size_t>(i) % bodies.size()]);
    sink += j.size();
  });
  double decode = BestNs(rounds, kPerRound, [&](int i) {
    nlohmann::json j = nlohmann::json::parse(bodies[static_cast<size_t>(i) % bodies.size()]);
    auto object = SpecObjectFromJson(j);
    sink += object.ok() ? 1 : 0;
  });
  double encode = BestNs(rounds, kPerRound, [&](int) { sink += server::ToJson(record).dump().size(); });
  ManualClock clock(FromMicros(1'796'305'715'685'211));
  govern::AuditChain chain(clock);
  const govern::AuditRecord request{.actor = "user admin",
                                    .action = "create",
                                    .object_kind = "workload",
                                    .object_name = "bench/load/load-1-559",
                                    .tenant = "bench",
                                    .before = "",
                                    .after = R"([{"id":"wl-3m2jp00pae","state":"Pending"}])",
                                    .result = "ok",
                                    .request_id = "req-786470241a3a106a"};
  double seal = BestNs(rounds, kPerRound, [&](int) {
    govern::AuditRecord r = request;
    govern::AuditEntry e = chain.Append(std::move(r));
    sink += govern::AuditEntryToJson(e).dump().size();
  });
  std::printf("%-44s %10s\n", "STEP (one submission)", "NS");
  std::printf("%-44s %10.0f\n", "parse the JSON body", parse);
  std::printf("%-44s %10.0f\n", "parse and decode it into a workload", decode);
  std::printf("%-44s %10.0f\n", "encode the workload record for the store", encode);
  std::printf("%-44s %10.0f\n", "seal the audit entry and encode it", seal);
  if (std::optional<double> stolen = steal.Percent()) {
    std::printf("(the hypervisor took %.0f%% of this machine's CPU meanwhile: steal time)\n", *stolen);
  }
  return sink == 0 ? 1 : 0;
}

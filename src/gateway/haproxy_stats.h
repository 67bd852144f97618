// Per-replica traffic as HAProxy sees it, for the autoscaler (docs/gateway.md "Autoscaling
// signals"): the runtime API's `show stat` CSV is parsed into one row per server, and two reads
// apart become requests per second (the difference of `req_tot` over the time between them) and
// the 99th percentile of the latencies HAProxy logged for each server between the reads
// (latency_log.h; HAProxy 2.6 keeps no percentiles of its own).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "gateway/latency_log.h"

namespace abacus::gateway {

// The metric names of spec.autoscaling.target (docs/specs.md), as the endpoints API names them.
inline constexpr char kGatewayRequestsPerSecond[] = "requestsPerSecond";
inline constexpr char kGatewayP99LatencyMs[] = "p99LatencyMs";

// One server row of `show stat`.
struct ServerStats {
  std::string backend;
  std::string server;
  int64_t requests = 0;         // req_tot: HTTP requests sent to it since it was added
  std::optional<int64_t> ttime_ms;  // average total time of its last 1024 requests (empty: none yet)
};

// Returns the server rows (not FRONTEND/BACKEND) of a `show stat` answer; InvalidArgument when
// its header lacks pxname, svname or req_tot.
Result<std::vector<ServerStats>> ParseShowStat(const std::string& csv);

// One read of a backend's servers, kept for the next.
struct StatsRead {
  std::chrono::steady_clock::time_point at{};
  std::map<std::string, int64_t> requests;  // server name → req_tot
};

// Returns the samples for POST /api/v1/workloads/{S}/metrics (`{"samples": [{metric, value,
// replica}]}` items) of backend `backend`: one per server that `replicas` (server name →
// replica number) names and that `before` also saw, `metric` being requestsPerSecond ((req_tot
// now − before) / seconds between the reads) or p99LatencyMs (the 99th percentile of
// `latencies`, the server's logged request times since the previous read; 0 for a server that
// answered none). Updates `before` to this read.
nlohmann::json MetricSamples(const std::string& backend, const std::vector<ServerStats>& now_rows,
                             std::chrono::steady_clock::time_point now, const std::map<std::string, int32_t>& replicas,
                             const std::string& metric, StatsRead& before,
                             const std::map<std::string, LatencyCounts>& latencies = {});

}  // namespace abacus::gateway

// True request latencies for the p99LatencyMs autoscaling signal (docs/gateway.md "Autoscaling
// signals"). HAProxy keeps no percentiles, so the gateway has HAProxy log one short line per
// request to a UDP socket on loopback that the gateway owns (`log-format "abacus-latency %b %s
// %Ta"`: backend, server, active time in ms from the first byte of the request to the last byte
// of the answer), and counts each server's latencies between two metric posts; the 99th
// percentile of those is the sample.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace abacus::gateway {

// The word that starts the gateway's log lines (after the syslog header HAProxy adds).
inline constexpr char kLatencyLogTag[] = "abacus-latency";

// Latencies in whole ms → how many requests took that long. Exact, and bounded by the number of
// distinct values (a few thousand at most), not by the number of requests.
using LatencyCounts = std::map<int64_t, int64_t>;

// One request as HAProxy logged it.
struct LatencyRecord {
  std::string backend;
  std::string server;
  int64_t ms = 0;
};

// Returns the request a datagram logs, or nothing for other lines, a request no server answered
// (`<NOSRV>`) or an unknown time (-1).
std::optional<LatencyRecord> ParseLatencyLine(std::string_view datagram);

// Returns the nearest-rank percentile `p` (0 < p ≤ 1) of `counts` in ms; 0 when empty.
double Percentile(const LatencyCounts& counts, double p);

// A UDP socket on 127.0.0.1 (an ephemeral port) that takes HAProxy's latency lines and keeps
// each (backend, server)'s counts until they are taken.
class LatencyListener {
 public:
  LatencyListener() = default;
  ~LatencyListener();
  LatencyListener(const LatencyListener&) = delete;
  LatencyListener& operator=(const LatencyListener&) = delete;

  // Binds the socket and starts the reading thread; Unavailable when it cannot bind.
  Status Start();
  // Stops the thread and closes the socket. Idempotent.
  void Stop();
  // "127.0.0.1:PORT", for HAProxy's `log` line; "" before Start.
  std::string address() const;
  // Returns the counts of `backend`'s servers since the previous call, and forgets them.
  std::map<std::string, LatencyCounts> Take(const std::string& backend);
  // Adds one request (the reading thread; tests).
  void Add(const LatencyRecord& r);
  // How many requests were counted since Start (tests, logs).
  int64_t received() const { return received_.load(); }

 private:
  void Read();

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> received_{0};
  std::thread reader_;
  Mutex mu_;
  std::map<std::string, std::map<std::string, LatencyCounts>> counts_ GUARDED_BY(mu_);  // backend → server → counts
};

}  // namespace abacus::gateway

// The options a ControlPlane opens with (control_plane.h), and the data folder it prepares:
// where it stores, how often it cycles and checks, what it tells agents, the limits it keeps.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "sched/scheduler.h"
#include "server/device_health.h"
#include "server/fencing.h"
#include "server/idempotency.h"
#include "store/lease.h"
#include "store/store.h"

namespace abacus::server {

struct ControlPlaneOptions {
  std::string data_dir = ".abacus";
  std::string store_url;                   // empty: sqlite://DATA/abacus.db
  const Clock* clock = nullptr;            // SystemClock when null
  IdGenerator* ids = nullptr;              // TimeOrderedIdGenerator when null
  Duration cycle_interval = std::chrono::seconds(1);        // timer cycle
  Duration min_cycle_gap = std::chrono::milliseconds(5);    // coalescing window
  Duration heartbeat_interval = std::chrono::seconds(5);    // told to agents at registration
  Duration node_timeout = std::chrono::seconds(30);         // silent agent node → NotReady
  // A NotReady node's tasks are placed elsewhere only after node_timeout + this grace (its agent
  // fences them meanwhile; server/fencing.h).
  FencingPolicy fencing;
  size_t bounded_cycle_per_queue = 256;  // waiting workloads per queue retried when capacity frees
  size_t max_queued_commits = 4096;        // beyond: ResourceExhausted (HTTP 429)
  // Stored output of one task per stream (DATA/logs); beyond it shipped output is dropped. 0: none.
  int64_t max_task_log_bytes = int64_t{64} << 20;
  // HA: every commit carries this lease fence (store/fenced_store.h), so that once another
  // server holds the lease this one's writes are refused. nullopt: a single server.
  std::optional<LeaseFence> fence;
  // Tests: wraps the opened store (for example to hold or fail commits); null: none.
  std::function<std::unique_ptr<Store>(std::unique_ptr<Store>)> wrap_store;
  sched::SchedulerConfig scheduler;
  // Without a fence (a single server), Open locks the data folder for the control plane's life
  // (store/data_folder_lock.h): a second server on the same folder is refused. On PostgreSQL it
  // also takes the database's writer lock: exclusive without a fence, shared with one (HA).
  bool lock_data_dir = true;
  // Audit anchors (govern/audit_anchor.h): the key (created mode 0600 when missing) and the
  // append-only file the signed heads go to. Empty: DATA/audit.key and DATA/audit.anchors.
  std::string audit_key_file;
  std::string audit_anchor_file;
  // Secrets (server/secrets.h): the key values are sealed with (created mode 0600 when missing)
  // and the keyring of older keys that still open values. Empty: DATA/secrets.key and
  // DATA/secrets.keyring.
  std::string secrets_key_file;
  std::string secrets_keyring_file;
  Duration idempotency_ttl = kIdempotencyTtl;  // how long a write's Idempotency-Key is kept
  // Device faults, probation and the health cordon (server/device_health.h).
  HealthPolicy health;
  // The audit chain is checked whole in the background this often (server/audit_watch.h); 0: never.
  Duration audit_check_every = std::chrono::minutes(30);
};

// Creates `data_dir` (mode 0700) and returns the store URL a server uses: `store_url`, or the
// SQLite file abacus.db in the data folder when it is empty.
Result<std::string> PrepareDataDir(const std::string& data_dir, const std::string& store_url);

}  // namespace abacus::server

// Agent: the node agent's loop (docs/agent.md, "The agent loop"). It discovers the node, registers
// with the join token, then runs three threads until Shutdown:
//
//   control   registration and the assignment long poll; reconciles each assignment with the
//             process runtime (start `run` tasks not started in this life, stop `stop` and
//             vanished ones); backoff with jitter while the server is unreachable; registers
//             again when the credential is rejected (401) or the node forgotten (404).
//   status    wakes on SIGCHLD, on news from the other threads, or every 5 ms: reaps ended
//             tasks, ships the rest of their logs, reads their results files (results.h), and
//             reports phase changes (at most one POST per 10 ms, the changes of that window
//             batched).
//   upkeep    heartbeats (device health and utilization, every status, task usage), new log
//             bytes every second, re-discovery on a timer (the full inventory in the next
//             heartbeat when the device list changed), clean-up of finished tasks.
//   fence     every 20 ms: when no server answered for the node timeout (counted from the
//             sending of the last answered request), stops every task with its fencing signal
//             and grace and reports it Lost once reachable again (docs/agent-protocol.md,
//             "Fencing"): the server runs that work elsewhere only after timeout + grace.
//   probes    (ProbeRunner, a few workers, started with the first probed task) the readiness
//             and liveness probes of running tasks; a change of `ready`/`live` wakes the status
//             thread like a phase change. The agent never restarts a task for a failed probe.
//
// A lifeline watcher process (lifeline.h, started by Start with the real OS) stops the tasks if
// the agent dies without Shutdown: each task's process group is passed on when it starts and
// when it is reaped; Shutdown releases the watcher once every task has ended.
//
// Timing decisions (heartbeat, log and re-discovery periods, backoff, stop grace, probe delays
// and periods) read the
// injected Clock, so tests drive them with a ManualClock; the threads themselves only sleep in
// short real-time slices. The 10 ms status window is real time (a latency bound, not a policy).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/discover/discoverer.h"
#include "agent/discover/nvml_health.h"
#include "agent/loop/agent_client.h"
#include "agent/loop/backoff.h"
#include "agent/loop/lifeline.h"
#include "agent/loop/log_shipper.h"
#include "agent/loop/port_pool.h"
#include "agent/loop/probe_runner.h"
#include "agent/loop/task_table.h"
#include "agent/loop/task_uids.h"
#include "agent/loop/waker.h"
#include "agent/runtime/cgroup.h"
#include "agent/runtime/container.h"
#include "agent/runtime/process_os.h"
#include "agent/runtime/process_runtime.h"
#include "agent/utilization.h"
#include "common/clock.h"
#include "common/folder_lock.h"
#include "common/mutex.h"
#include "common/status.h"

namespace abacus::agent {

struct AgentOptions {
  std::string server = "http://127.0.0.1:8420";
  std::string join_token;
  std::string name;  // node name (the host name by default, chosen by the caller)
  std::string cluster = "default";
  std::string pool;  // empty: the server's default pool
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  std::string work_dir;  // tasks go under WORK_DIR/tasks/<task id>/
  Duration heartbeat{};  // zero: the server's heartbeatSeconds
  Duration rediscover_every = std::chrono::seconds(60);  // zero: never
  Duration log_ship_every = std::chrono::seconds(1);
  Duration vanished_grace = std::chrono::seconds(10);
  int probe_workers = 4;  // threads attempting probes (each attempt takes up to its timeout)
  std::chrono::milliseconds long_poll{25000};
  std::chrono::milliseconds status_window{10};
  Duration backoff_initial = std::chrono::milliseconds(100);
  Duration backoff_max = std::chrono::seconds(5);
  uint64_t backoff_seed = 0;  // 0: random
  bool keep_task_dirs = false;  // false: a task's directory goes once it left the assignment
  std::string agent_version = "0.1.0";
  // Capacity to advertise instead of what discovery found (0: discovered): simulated nodes and
  // benchmarks that run many trivial tasks per core.
  int64_t cpu_milli_override = 0;
  int64_t memory_bytes_override = 0;
  // Extended resources declared for this node (--resource rdma/hca=4,license/matlab=10): each
  // replaces what discovery found under that name; 0 declares none.
  std::map<std::string, int64_t> extended;
  Duration fence_after{};  // zero: the server's nodeTimeoutSeconds
  // Fork the lifeline watcher (lifeline.h), which stops the tasks with their fencing signal and
  // grace should the agent die without shutting down (SIGKILL, a crash). Only with the real OS.
  bool lifeline = true;
  // Injected device faults (discover/fault_file.h), read at every heartbeat; empty: none.
  std::string fault_file;
  // InferenceService replicas: each task gets a free TCP port of this range as ABACUS_PORT and
  // reports "advertise_host:port" as its address (port_pool.h).
  PortRange port_range;
  std::string advertise_host = "127.0.0.1";
  // Task users (task_uids.h; docs/agent.md, "Task users"): as root, each plain-process task runs
  // under a uid of this range of its own; nullopt (--task-uids none), or an agent that is not
  // root, runs them as the agent's user, with a warning: unsafe where tenants share the node.
  std::optional<UidRange> task_uids = kDefaultTaskUids;
};

// What the agent runs on; tests swap parts for fakes.
struct AgentSeams {
  ProcessOs* os = nullptr;                         // nullptr: the real OS
  const CgroupManager* cgroups = nullptr;          // nullptr: no limits (a warning per task)
  std::unique_ptr<DeviceSampler> device_sampler;   // real devices (NVML); simulated ones are added
  // Polled at every heartbeat (discover/nvml_health.h): the devices it names report Unhealthy
  // with its reason; nullptr: none.
  std::unique_ptr<DeviceHealthWatcher> health_watcher;
};

// Counters for tests and logs.
struct AgentCounters {
  int registrations = 0;
  int register_attempts = 0;
  int connect_failures = 0;  // calls that got no answer
  int heartbeats = 0;
  int status_posts = 0;
  int tasks_started = 0;
  int orphans_killed = 0;
  int backoffs = 0;  // waits before calling the server again
  Duration last_backoff{};
  int probe_attempts = 0;
  int fences = 0;        // times the agent fenced itself
  int tasks_fenced = 0;  // tasks it stopped so
};

class Agent {
 public:
  Agent(AgentOptions options, const Clock& clock, std::unique_ptr<Discoverer> discoverer, AgentSeams seams = {});
  // Shuts down if still running.
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // 1) Kills the tasks of a previous life (WORK_DIR/tasks/*/pid) and keeps them to report as
  //    Lost. 2) Discovers the node. 3) Forks the lifeline watcher (its log: WORK_DIR/lifeline.log;
  //    a failure is only a warning). 4) Starts the threads (registration happens on the control
  //    thread, retried until it works). Fails when the work directory cannot be made or the
  //    host cannot be read.
  Status Start();

  // Stops every task with its grace (stop signal, then SIGKILL), waits for them to end, ships
  // their logs, reports them, joins the threads and releases the lifeline watcher. Idempotent.
  void Shutdown();

  // Waits (real time, at most `timeout`) until registered; false on timeout. For tests and the
  // CLI's first log line.
  bool WaitRegistered(std::chrono::milliseconds timeout);

  bool registered() const;
  AgentCounters counters() const;
  // The runtime's record of a task (tests).
  Result<TaskRecord> Task(const std::string& task_id) const {
    return runtime_ ? runtime_->Get(task_id) : Result<TaskRecord>(NotFound("agent not started"));
  }
  // The lifeline watcher's pid, or -1 when there is none (tests).
  pid_t lifeline_pid() const { return lifeline_.watcher_pid(); }
  // Makes a simulated device report `compute_percent` (tests, demos); false for an unknown one.
  bool SetSimulatedUtilization(const std::string& uuid, int compute_percent, int64_t memory_used_bytes);

 private:
  struct Registration {
    bool registered = false;
    int generation = 0;  // counts registrations; a rejection only undoes the one it was sent with
    std::string node;
    Duration heartbeat{};
    Duration node_timeout{};  // from the registration answer: fence after this long cut off
    Time next_heartbeat{};
    int64_t version = 0;  // of the last assignment applied
  };

  void ControlLoop();
  void StatusLoop();
  void UpkeepLoop();
  void FenceLoop();
  // A server answered a request sent at `sent`.
  void NoteContact(Time sent);

  bool RegisterOnce();
  void Apply(const Assignment& assignment);
  void StartTask(const AssignedTask& task);
  // Makes the work directory passable (0711) and the task uid pool, recovering the uids the
  // tasks of a previous life held, when task users are on and the agent is root; otherwise warns
  // once that tasks share the agent's user. FailedPrecondition when a task user could not reach
  // its work directory.
  Status PrepareTaskUsers(const std::string& tasks_dir);
  void StartProbes(const AssignedTask& task, const std::optional<ContainerEngine>& engine, Time started_at,
                   const std::optional<TaskUser>& user);
  void StopTask(const StopOrder& order);
  void ReapEnded();
  // Kills and removes the container of a task whose `run` client ended by a signal (the stop's
  // SIGKILL after the grace reaches the client only); logs when the engine refuses.
  void RemoveContainer(ContainerEngine engine, const std::string& task_id);
  Status SendStatuses();
  void SendHeartbeat();
  void Rediscover();
  void CleanUp();
  // Gives back the uids `task_ids` hold once their directories are gone (or, kept, back to
  // root), after killing what still runs as them (one scan of /proc for all of them).
  void ReleaseTaskUsers(const std::vector<std::string>& task_ids);
  void Deregistered(int generation, const Status& why);
  HeartbeatRequest BuildHeartbeat(int* inventory_generation);
  RegisterRequest BuildRegister();
  void RebuildSampler();

  // Sleeps until `deadline` on the clock, in real slices of at most 5 ms; false when stopping.
  bool SleepUntil(Time deadline);

  std::string TaskDir(const std::string& task_id) const;
  // The task's results directory (ABACUS_RESULTS_DIR of a process task): TaskDir/results, made
  // absolute.
  std::string ResultsDir(const std::string& task_id) const;

  AgentOptions options_;
  const Clock& clock_;
  std::unique_ptr<Discoverer> discoverer_;
  ProcessOs& os_;
  const CgroupManager* cgroups_;
  std::unique_ptr<DeviceSampler> real_sampler_;
  std::unique_ptr<DeviceHealthWatcher> health_watcher_;  // used by the upkeep thread only

  std::unique_ptr<ProcessRuntime> runtime_;
  std::unique_ptr<TaskUidPool> uids_;  // null: tasks run as the agent's user
  Lifeline lifeline_;
  AgentClient poll_client_;  // the long poll only, so Shutdown can cut it without cutting reports
  AgentClient client_;
  TaskTable table_;
  PortPool ports_;
  std::unique_ptr<LogShipper> logs_;
  Waker status_waker_;
  ProbeRunner probes_;  // after the table and the waker, which its reports use

  Mutex launch_mu_;  // a task's start (spawn, pid file, log tracking) vs. reaping
  std::map<std::string, std::string> results_files_ GUARDED_BY(launch_mu_);  // task → resultsFile
  std::map<std::string, ContainerEngine> containers_ GUARDED_BY(launch_mu_);  // image tasks → their engine
  mutable Mutex mu_;
  std::condition_variable cv_;
  Registration reg_ GUARDED_BY(mu_);
  std::string credential_;  // control thread only: the node credential last issued (node_credential.h)
  Discovery discovery_ GUARDED_BY(mu_);
  int inventory_generation_ GUARDED_BY(mu_) = 0;  // counts device-list changes
  int inventory_sent_ GUARDED_BY(mu_) = 0;  // the last one the server has
  AgentCounters counters_ GUARDED_BY(mu_);
  SimulatedDeviceSampler* simulated_ GUARDED_BY(mu_) = nullptr;  // owned by sampler_
  std::unique_ptr<UtilizationSampler> sampler_ GUARDED_BY(mu_);

  std::atomic<bool> stopping_{false};   // Shutdown began: no new tasks, the control thread ends
  std::atomic<bool> draining_{false};   // every task was ordered to stop: the status thread ends once idle
  std::atomic<bool> leaving_{false};
  uint64_t watcher_renewals_ = 0;  // fence thread only: every 25th turn (~0.5 s) renews the watcher's deadline
  std::unique_ptr<DataFolderLock> work_lock_;  // WORK_DIR/abacus.lock, held from Start on    // the server was told the agent shuts down: no more heartbeats
  std::atomic<bool> finished_{false};   // every task ended and was reported: the upkeep thread ends
  bool started_ = false;
  bool shut_down_ = false;
  std::atomic<int64_t> last_contact_us_{0};  // when the last answered request was sent (clock µs)
  bool fenced_ = false;                     // fence thread only
  std::thread control_, status_, upkeep_, fence_;
};

}  // namespace abacus::agent

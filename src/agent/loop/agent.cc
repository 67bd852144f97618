#include "agent/loop/agent.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "agent/command.h"
#include "agent/discover/diff.h"
#include "agent/discover/fault_file.h"
#include "agent/loop/node_credential.h"
#include "agent/loop/pid_file.h"
#include "agent/runtime/container.h"
#include "agent/runtime/network.h"
#include "agent/runtime/results.h"
#include "common/log.h"
#include "common/mutex.h"

namespace abacus::agent {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kSlice{5};

// Lets the utilization sampler use a sampler the agent keeps (it is rebuilt on re-discovery).
class BorrowedSampler final : public DeviceSampler {
 public:
  explicit BorrowedSampler(DeviceSampler& inner) : inner_(inner) {}
  std::vector<DeviceUtilization> Sample() override { return inner_.Sample(); }

 private:
  DeviceSampler& inner_;
};

// The server no longer takes this node's credential (401/403: unknown or replaced credential;
// 404: node forgotten): register again.
bool Rejected(const Status& s) {
  return s.code() == StatusCode::kUnauthenticated || s.code() == StatusCode::kPermissionDenied ||
         s.code() == StatusCode::kNotFound;
}

// A start failure as the server sees it: the task exited at once, like a shell would say it.
TaskStatus StartFailure(const std::string& task_id, Time now, const Status& why) {
  TaskStatus s;
  s.task_id = task_id;
  s.phase = ReportedPhase::kExited;
  s.started_at = now;
  s.finished_at = now;
  s.exit_code = why.code() == StatusCode::kNotFound ? 127 : 126;
  s.message = "cannot start: " + why.message();
  return s;
}

}  // namespace

Agent::Agent(AgentOptions options, const Clock& clock, std::unique_ptr<Discoverer> discoverer, AgentSeams seams)
    : options_(std::move(options)),
      clock_(clock),
      discoverer_(std::move(discoverer)),
      os_(seams.os != nullptr ? *seams.os : RealProcessOs::Get()),
      cgroups_(seams.cgroups),
      real_sampler_(std::move(seams.device_sampler)),
      health_watcher_(std::move(seams.health_watcher)),
      poll_client_(AgentClientOptions{options_.server, milliseconds(5000), milliseconds(10000)}),
      client_(AgentClientOptions{options_.server, milliseconds(5000), milliseconds(10000)}),
      table_(clock),
      ports_(options_.port_range),
      probes_(clock, [this](const std::string& id, const ProbeOutcome& o) {
        table_.SetProbes(id, o);
        status_waker_.Wake();
      }, options_.probe_workers) {
  logs_ = std::make_unique<LogShipper>(options_.name, [this](const LogChunk& c) { return client_.SendLog(c); });
}

Agent::~Agent() { Shutdown(); }

std::string Agent::TaskDir(const std::string& task_id) const { return options_.work_dir + "/tasks/" + task_id; }

std::string Agent::ResultsDir(const std::string& task_id) const {
  // Absolute: a process task runs in its own working directory.
  std::error_code ec;
  fs::path dir = fs::absolute(TaskDir(task_id) + "/results", ec);
  return ec ? TaskDir(task_id) + "/results" : dir.lexically_normal().string();
}

Status Agent::Start() {
  if (started_) return FailedPrecondition("agent already started");
  if (options_.name.empty()) return InvalidArgument("agent: a node name is required");
  if (options_.work_dir.empty()) return InvalidArgument("agent: a work directory is required");
  std::string tasks_dir = options_.work_dir + "/tasks";
  std::error_code ec;
  fs::create_directories(tasks_dir, ec);
  if (ec) return FailedPrecondition("agent: cannot create " + tasks_dir + ": " + ec.message());
  // 0) One agent per work dir: a second one would take the first one's live tasks for orphans of
  //    a previous life and kill them, and overwrite its node credential.
  ABACUS_ASSIGN_OR_RETURN(work_lock_, DataFolderLock::Acquire(options_.work_dir, "agent " + options_.name, "work dir",
                                                              "one agent per work dir; stop it first, or give this "
                                                              "agent a --work-dir of its own"));

  // 1) Tasks of a previous life: killed now, reported Lost at registration.
  std::vector<TaskStatus> orphans = KillOrphans(tasks_dir, os_, clock_.Now());
  for (const auto& s : orphans) table_.Update(s);
  ABACUS_RETURN_IF_ERROR(PrepareTaskUsers(tasks_dir));

  // 2) What the node has.
  auto found = discoverer_->Discover();
  if (!found.ok()) return found.status().WithContext("agent: discovery");
  for (const auto& p : found->problems) ABACUS_LOG_WARN("discovery: {}", p.message());
  std::vector<std::string> vendors;
  for (const auto& d : found->devices) {
    if (std::find(vendors.begin(), vendors.end(), d.flavor.vendor()) == vendors.end()) vendors.push_back(d.flavor.vendor());
  }
  {
    MutexLock lock(mu_);
    discovery_ = std::move(*found);
    counters_.orphans_killed = static_cast<int>(orphans.size());
  }
  RuntimeOptions ro;
  ro.root_dir = tasks_dir;
  ro.cgroups = cgroups_;
  ro.node_vendors = vendors;
  runtime_ = std::make_unique<ProcessRuntime>(ro, clock_, os_);
  RebuildSampler();

  // 3) The lifeline: should this process die without Shutdown, a watcher stops its tasks. Not
  //    with a fake OS, whose pids are not real processes.
  if (options_.lifeline && &os_ == &RealProcessOs::Get()) {
    const std::string log = options_.work_dir + "/lifeline.log";
    if (Status s = lifeline_.Start(log); s.ok()) {
      ABACUS_LOG_INFO("agent: lifeline watcher pid {} stops the tasks should this agent die (log {})",
                      lifeline_.watcher_pid(), log);
    } else {
      ABACUS_LOG_WARN("agent: {}; if this agent is killed, its tasks run on until it starts again", s.ToString());
    }
  }

  // 4) The threads.
  status_waker_.SubscribeSigchld();
  started_ = true;
  control_ = std::thread([this] { ControlLoop(); });
  status_ = std::thread([this] { StatusLoop(); });
  upkeep_ = std::thread([this] { UpkeepLoop(); });
  fence_ = std::thread([this] { FenceLoop(); });
  return Status::OK();
}

Status Agent::PrepareTaskUsers(const std::string& tasks_dir) {
  const std::string guide = "tasks on this node can read each other's secret files, environments (/proc/PID/environ) "
                            "and logs and this agent's node credential; unsafe where tenants share the node "
                            "(docs/agent.md, \"Task users\")";
  if (!options_.task_uids) {
    ABACUS_LOG_WARN("agent: task users off (--task-uids none): every plain-process task runs as this agent's user "
                    "(uid {}), so {}", ::geteuid(), guide);
    return Status::OK();
  }
  if (::geteuid() != 0) {
    ABACUS_LOG_WARN("agent: not running as root (uid {}), so plain-process tasks cannot get uids of their own and run "
                    "as this agent's user: {}; run the agent as root (each task then runs as a uid of --task-uids {}) "
                    "or let only image tasks run here", ::geteuid(), guide, FormatUidRange(*options_.task_uids));
    return Status::OK();
  }
  // Others may pass through the agent's directories to their own work directory, not list them;
  // the node credential and the logs in them are the agent's alone (mode 0600).
  ABACUS_RETURN_IF_ERROR(CheckTraversable(options_.work_dir).WithContext("agent"));
  for (const std::string& dir : {options_.work_dir, tasks_dir}) {
    if (::chmod(dir.c_str(), 0711) != 0) {
      return FailedPrecondition("agent: cannot set mode 0711 on " + dir + ": " + std::strerror(errno));
    }
  }
  uids_ = std::make_unique<TaskUidPool>(*options_.task_uids);
  // The tasks of a previous life keep their uids until their directories go (CleanUp).
  for (const auto& [task_id, uid] : RecoverTaskUids(tasks_dir, *options_.task_uids)) {
    if (Status s = uids_->Adopt(task_id, uid); !s.ok()) ABACUS_LOG_WARN("agent: {}", s.ToString());
  }
  ABACUS_LOG_INFO("agent: each plain-process task runs as a uid of its own from {} ({} held by tasks of a previous life)",
                  FormatUidRange(*options_.task_uids), uids_->held());
  return Status::OK();
}

void Agent::Shutdown() {
  if (!started_ || shut_down_) return;
  shut_down_ = true;
  // 1) No new tasks: end the long poll and the control thread.
  stopping_ = true;
  poll_client_.Cancel();
  cv_.notify_all();
  control_.join();
  fence_.join();
  lifeline_.FenceWithin(Duration::zero());  // the agent stops its tasks itself now, however long that takes
  probes_.Stop();  // stopping tasks are not probed; their `ready` turns false
  // 2) Tell the server first: it takes the node out of placement, so the tasks stopped below are
  //    not placed back here while the agent goes (their next run waits for another node, or for
  //    this one once its agent registers again). No heartbeat after it (one would say Ready).
  std::string node;
  {
    MutexLock lock(mu_);
    if (reg_.registered) node = reg_.node;
  }
  if (!node.empty()) {
    leaving_ = true;
    if (Status st = client_.ReportLeaving(node); !st.ok()) {
      ABACUS_LOG_WARN("agent: could not tell the server that {} shuts down: {}", node, st.ToString());
    }
  }
  // 3) Stop what runs, each with its own signal and grace; the status thread reaps them,
  //    ships their logs and reports them, then ends.
  for (const StopOrder& o : table_.StopAll()) StopTask(o);
  draining_ = true;
  status_waker_.Wake();
  status_.join();
  lifeline_.Release();  // every task ended: nothing for the watcher to stop
  cv_.notify_all();
  upkeep_.join();
  status_waker_.UnsubscribeSigchld();
  client_.Cancel();
}

bool Agent::WaitRegistered(milliseconds timeout) {
  MutexLock lock(mu_);
  return lock.WaitFor(cv_, timeout, [&]() REQUIRES(mu_) { return reg_.registered; });
}

bool Agent::registered() const {
  MutexLock lock(mu_);
  return reg_.registered;
}

AgentCounters Agent::counters() const {
  AgentCounters c;
  {
    MutexLock lock(mu_);
    c = counters_;
  }
  c.probe_attempts = probes_.attempts();
  return c;
}

bool Agent::SetSimulatedUtilization(const std::string& uuid, int compute_percent, int64_t memory_used_bytes) {
  MutexLock lock(mu_);
  return simulated_ != nullptr && simulated_->Set(uuid, compute_percent, memory_used_bytes);
}

bool Agent::SleepUntil(Time deadline) {
  while (!stopping_ && clock_.Now() < deadline) {
    MutexLock lock(mu_);
    lock.WaitFor(cv_, kSlice, [&] { return stopping_.load(); });
  }
  return !stopping_;
}

// ---- control thread: registration, long poll, reconciliation ----

RegisterRequest Agent::BuildRegister() {
  RegisterRequest r;
  r.name = options_.name;
  r.cluster = options_.cluster;
  r.pool = options_.pool;
  r.labels = options_.labels;
  r.taints = options_.taints;
  r.agent_version = options_.agent_version;
  {
    MutexLock lock(mu_);
    r.cpu_milli = options_.cpu_milli_override > 0 ? options_.cpu_milli_override : discovery_.host.cpu_milli;
    r.memory_bytes = options_.memory_bytes_override > 0 ? options_.memory_bytes_override : discovery_.host.memory_bytes;
    r.devices = discovery_.devices;
    r.extended = discovery_.host.extended;
  }
  for (const auto& [name, amount] : options_.extended) {
    if (amount > 0) r.extended[name] = amount; else r.extended.erase(name);
  }
  r.simulated = !r.devices.empty() &&
                std::all_of(r.devices.begin(), r.devices.end(), [](const Device& d) { return d.simulated; });
  r.tasks = table_.All();
  return r;
}

bool Agent::RegisterOnce() {
  RegisterRequest request = BuildRegister();
  {
    MutexLock lock(mu_);
    ++counters_.register_attempts;
  }
  // Registering again proves this is the node: its credential, kept across restarts.
  if (credential_.empty()) credential_ = LoadNodeCredential(options_.work_dir, options_.name);
  request.credential = credential_;
  const Time sent = clock_.Now();
  auto answer = poll_client_.Register(options_.join_token, request);
  if (!answer.ok()) {
    MutexLock lock(mu_);
    if (answer.status().code() == StatusCode::kUnavailable) ++counters_.connect_failures;
    if (counters_.register_attempts == 1 || counters_.register_attempts % 20 == 0) {
      ABACUS_LOG_WARN("agent: cannot register with {}: {}", options_.server, answer.status().ToString());
    }
    return false;
  }
  NoteContact(sent);
  poll_client_.SetNodeToken(answer->node_token);
  client_.SetNodeToken(answer->node_token);
  credential_ = answer->node_token;
  if (Status kept = StoreNodeCredential(options_.work_dir, options_.name, credential_); !kept.ok()) {
    ABACUS_LOG_WARN("agent: {}; after a restart this node registers again only once an admin resets it", kept.ToString());
  }
  table_.MarkSent(request.tasks);
  Duration heartbeat{};  // for the log line, read under the lock (the status thread changes reg_)
  {
    MutexLock lock(mu_);
    reg_.registered = true;
    ++reg_.generation;
    reg_.node = answer->node.empty() ? options_.name : answer->node;
    reg_.heartbeat = options_.heartbeat > Duration::zero() ? options_.heartbeat
                                                          : Duration(std::chrono::seconds(answer->heartbeat_seconds));
    reg_.next_heartbeat = clock_.Now() + reg_.heartbeat;
    reg_.node_timeout = std::chrono::seconds(answer->node_timeout_seconds);
    reg_.version = 0;
    inventory_sent_ = inventory_generation_;  // the registration carried the devices
    ++counters_.registrations;
    heartbeat = reg_.heartbeat;
  }
  ABACUS_LOG_INFO("agent: registered as node {} with {} ({} devices, heartbeat {})", options_.name, options_.server,
                  request.devices.size(), FormatDuration(heartbeat));
  cv_.notify_all();
  status_waker_.Wake();
  return true;
}

void Agent::Deregistered(int generation, const Status& why) {
  MutexLock lock(mu_);
  if (!reg_.registered || reg_.generation != generation) return;
  reg_.registered = false;
  ABACUS_LOG_WARN("agent: the server no longer accepts this node ({}); registering again", why.ToString());
}

void Agent::ControlLoop() {
  Backoff backoff(options_.backoff_initial, options_.backoff_max, options_.backoff_seed);
  auto wait = [&] {
    Duration d = backoff.Next();
    {
      MutexLock lock(mu_);
      counters_.last_backoff = d;
      ++counters_.backoffs;
    }
    SleepUntil(clock_.Now() + d);
  };
  while (!stopping_) {
    if (!registered() && !RegisterOnce()) {
      wait();
      continue;
    }
    int generation;
    std::string node;
    int64_t after;
    {
      MutexLock lock(mu_);
      generation = reg_.generation;
      node = reg_.node;
      after = reg_.version;
    }
    const Time sent = clock_.Now();
    auto assignment = poll_client_.Assignments(node, after, options_.long_poll);
    if (stopping_) break;
    if (assignment.ok()) NoteContact(sent);
    if (!assignment.ok()) {
      const Status& s = assignment.status();
      if (Rejected(s)) {
        Deregistered(generation, s);
        // Register again at once the first time; back off if the server keeps refusing.
        if (backoff.failures() > 0) wait(); else backoff.Next();
        continue;
      }
      {
        MutexLock lock(mu_);
        if (s.code() == StatusCode::kUnavailable) ++counters_.connect_failures;
      }
      if (backoff.failures() == 0) ABACUS_LOG_WARN("agent: assignments: {}", s.ToString());
      wait();
      continue;
    }
    backoff.Reset();
    {
      MutexLock lock(mu_);
      if (reg_.generation != generation) continue;  // registered again meanwhile: poll afresh
      reg_.version = assignment->version;
    }
    Apply(*assignment);
  }
}

void Agent::Apply(const Assignment& assignment) {
  ReconcilePlan plan = table_.Reconcile(assignment, options_.vanished_grace);
  for (const AssignedTask& t : plan.start) StartTask(t);
  for (const StopOrder& o : plan.stop) StopTask(o);
  status_waker_.Wake();
}

void Agent::StartTask(const AssignedTask& t) {
  // Secrets first: a task whose secrets did not arrive does not start without them.
  if (!t.secret_error.empty()) {
    table_.Update(StartFailure(t.task_id, clock_.Now(), FailedPrecondition("task " + t.task_id + ": " + t.secret_error)));
    return;
  }
  // A plain process runs as a uid of its own (docs/agent.md, "Task users"); an image as the engine
  // runs it.
  std::optional<TaskUser> user;
  if (uids_ && t.image.empty()) {
    auto got = uids_->Acquire(t.task_id);
    if (!got.ok()) {
      table_.Update(StartFailure(t.task_id, clock_.Now(), got.status()));
      return;
    }
    user = *got;
  }
  if (Status s = WriteSecretFiles(TaskDir(t.task_id) + "/work", t.secret_files, user); !s.ok()) {
    table_.Update(StartFailure(t.task_id, clock_.Now(), s.WithContext("task " + t.task_id)));
    return;
  }
  TaskSpec spec;
  spec.task_id = t.task_id;
  spec.command = t.command;
  spec.env = t.env;
  spec.cpu_milli = t.cpu_milli;
  spec.memory_bytes = t.memory_bytes;
  // The tenant's network class: in the environment of every task; containers also get the
  // matching --network (BuildContainerRunCommand).
  if (Status s = AddNetworkClass(t.network, spec.env); !s.ok()) {
    table_.Update(StartFailure(t.task_id, clock_.Now(), s.WithContext("task " + t.task_id)));
    return;
  }
  // A private results directory (results.h), read back when the task exits.
  const std::string results_dir = ResultsDir(t.task_id);
  if (Status s = PrepareResultsDir(results_dir); !s.ok()) {
    table_.Update(StartFailure(t.task_id, clock_.Now(), s.WithContext("task " + t.task_id)));
    return;
  }
  if (user && ::lchown(results_dir.c_str(), user->uid, user->gid) != 0) {
    table_.Update(StartFailure(t.task_id, clock_.Now(),
                               FailedPrecondition("task " + t.task_id + ": cannot give " + results_dir + " to uid " +
                                                  std::to_string(user->uid) + ": " + std::strerror(errno))));
    return;
  }
  spec.user = user;
  spec.env[kResultsDirVariable] = results_dir;
  if (!t.secret_files.empty()) spec.env["ABACUS_SECRETS_DIR"] = SecretsDir(TaskDir(t.task_id) + "/work");
  // An InferenceService replica listens on a port of the agent's range; the server routes to it.
  std::string port_env;
  if (t.kind == "InferenceService") {
    auto port = ports_.Acquire(t.task_id);
    if (!port.ok()) {
      table_.Update(StartFailure(t.task_id, clock_.Now(), port.status()));
      return;
    }
    port_env = std::to_string(*port);
    spec.env["ABACUS_PORT"] = port_env;
    table_.SetAddress(t.task_id, options_.advertise_host + ":" + port_env);
  }
  std::vector<std::string> vendors;
  {
    MutexLock lock(mu_);
    for (const AssignedDevice& ad : t.devices) {
      // The UUID names the device; index and vendor only when the server sent no UUID.
      auto it = std::find_if(discovery_.devices.begin(), discovery_.devices.end(), [&](const Device& d) {
        return ad.uuid.empty() ? d.index == ad.index && d.flavor.vendor() == ad.vendor : d.uuid == ad.uuid;
      });
      if (it == discovery_.devices.end()) {
        ports_.Release(t.task_id);
        table_.Update(StartFailure(t.task_id, clock_.Now(),
                                   NotFound("device " + (ad.uuid.empty() ? std::to_string(ad.index) : ad.uuid) +
                                            " is not on this node")));
        return;
      }
      spec.devices.push_back(DeviceGrant{*it, ad.milli, ad.memory_bytes});
    }
    for (const auto& d : discovery_.devices) vendors.push_back(d.flavor.vendor());
  }
  std::optional<ContainerEngine> engine_used;
  std::string engine_path;  // for the lifeline watcher
  if (!t.image.empty()) {
    // 1) An image runs under podman or docker, as a foreground `run` the runtime supervises.
    auto engine = FindContainerEngine();
    if (!engine.ok()) {
      ports_.Release(t.task_id);
      table_.Update(StartFailure(t.task_id, clock_.Now(),
                                 NotFound("image " + t.image + " needs podman or docker, and neither is installed")));
      return;
    }
    ContainerSpec cs;
    cs.task_id = t.task_id;
    cs.image = t.image;
    cs.command = t.command;
    cs.env = t.env;
    for (const std::string& name : t.secret_env) {  // by name only: never on the command line
      if (auto it = cs.env.find(name); it != cs.env.end()) {
        cs.secret_env[name] = std::move(it->second);
        cs.env.erase(it);
      }
    }
    cs.env[kResultsDirVariable] = kContainerResultsDir;  // the results directory, mounted there
    if (!port_env.empty()) cs.env["ABACUS_PORT"] = port_env;
    cs.devices = spec.devices;
    cs.node_vendors = vendors;
    cs.cpu_milli = t.cpu_milli;
    cs.memory_bytes = t.memory_bytes;
    cs.work_dir = TaskDir(t.task_id) + "/work";
    cs.mounts = t.mounts;
    cs.mounts.push_back(Mount{results_dir, kContainerResultsDir, false});
    cs.stop_signal = t.stop_signal;
    cs.network_class = t.network;
    cs.read_only_root = t.read_only_root;
    // Secret files are under the work dir, which the container sees at /workspace.
    if (!t.secret_files.empty()) cs.env["ABACUS_SECRETS_DIR"] = SecretsDir("/workspace");
    auto argv = BuildContainerRunCommand(*engine, cs);
    if (!argv.ok()) {
      ports_.Release(t.task_id);
      table_.Update(StartFailure(t.task_id, clock_.Now(), argv.status()));
      return;
    }
    spec.command = *argv;
    engine_used = *engine;
    if (auto path = FindExecutable(std::string(ContainerEngineName(*engine))); path.ok()) engine_path = *path;
    spec.cpu_milli = 0;  // the engine enforces them inside the container
    spec.memory_bytes = 0;
    // The task's variables reach the container through `-e`; the engine itself runs with the
    // agent's environment and the secret variables (`--env NAME` takes the value from there,
    // out of the process list), whose names it does not read (CheckSecretVariableName), so a
    // task cannot steer it (CONTAINERS_CONF, TMPDIR, PATH …).
    spec.env = ContainerEngineEnvironment(cs);
  }
  // Reaping waits until the pid file is written and the logs are followed, so a task that ends
  // at once is reported with its logs and leaves no pid file behind.
  MutexLock launch(launch_mu_);
  results_files_[t.task_id] = t.results_file;
  if (engine_used) containers_[t.task_id] = *engine_used;
  auto rec = runtime_->Start(spec);
  if (!rec.ok()) {
    results_files_.erase(t.task_id);
    containers_.erase(t.task_id);
    ports_.Release(t.task_id);
    launch.Unlock();
    ABACUS_LOG_WARN("agent: task {}: {}", t.task_id, rec.status().ToString());
    table_.Update(StartFailure(t.task_id, clock_.Now(), rec.status()));
    status_waker_.Wake();
    return;
  }
  if (Status s = WritePidFile(TaskDir(t.task_id), rec->pid); !s.ok()) ABACUS_LOG_WARN("agent: {}", s.message());
  // Should the agent die, the watcher fences this task as the fence thread would.
  lifeline_.TaskStarted(rec->pid, ProcessStartTime(rec->pid), t.fencing_signal, t.fencing_grace, engine_path,
                        engine_used ? ContainerName(t.task_id) : "");
  logs_->Track(t.task_id, rec->stdout_path, rec->stderr_path);
  StartProbes(t, engine_used, rec->started_at, user);  // its first outcome goes in the first status
  table_.Update(StatusOf(*rec));
  launch.Unlock();
  status_waker_.Wake();
  MutexLock lock(mu_);
  ++counters_.tasks_started;
}

void Agent::StartProbes(const AssignedTask& t, const std::optional<ContainerEngine>& engine, Time started_at,
                        const std::optional<TaskUser>& user) {
  const int port = ports_.PortOf(t.task_id);
  auto adapt = [&](std::optional<AssignedProbe> p) {
    // An http or tcp probe without a port checks the port the task was given (ABACUS_PORT).
    if (p && p->invalid.empty() && p->spec.kind != ProbeKind::kExec && p->spec.port == 0) {
      if (port > 0) {
        p->spec.port = port;
      } else {
        p->invalid = "the probe names no port and the task has no ABACUS_PORT (only InferenceService replicas get one)";
      }
    }
    // An exec probe of an image task runs inside its container.
    if (p && engine && p->spec.kind == ProbeKind::kExec) {
      p->spec.command = BuildContainerExecCommand(*engine, t.task_id, p->spec.command);
    }
    // That of a plain process runs as the task's user, never as the agent's root.
    if (p && !engine && p->spec.kind == ProbeKind::kExec) p->spec.user = user;
    return p;
  };
  probes_.Add(t.task_id, adapt(t.readiness), adapt(t.liveness), started_at);
}

void Agent::StopTask(const StopOrder& o) {
  probes_.Remove(o.task_id);  // a stopping task is not ready, whatever its probe says
  Status s = runtime_->Stop(o.task_id, o.signal, o.grace);
  if (!s.ok()) {
    if (s.code() != StatusCode::kNotFound) ABACUS_LOG_WARN("agent: stop {}: {}", o.task_id, s.ToString());
    return;
  }
  // An ended task is reported by ReapEnded, with its results.
  if (auto rec = runtime_->Get(o.task_id); rec.ok() && rec->phase != TaskPhase::kExited) table_.Update(StatusOf(*rec));
  status_waker_.Wake();
}

// ---- status thread: reap, ship the last logs, report ----

void Agent::ReapEnded() {
  std::vector<TaskRecord> ended;
  std::map<std::string, std::string> results_files;
  std::map<std::string, ContainerEngine> containers;
  {
    MutexLock launch(launch_mu_);
    ended = runtime_->Poll();
    for (const TaskRecord& rec : ended) {
      if (auto c = containers_.find(rec.task_id); c != containers_.end()) {
        containers[rec.task_id] = c->second;
        containers_.erase(c);
      }
      auto it = results_files_.find(rec.task_id);
      if (it == results_files_.end()) continue;
      results_files[rec.task_id] = it->second;
      results_files_.erase(it);
    }
  }
  for (const TaskRecord& rec : ended) {
    probes_.Remove(rec.task_id);
    ports_.Release(rec.task_id);
    lifeline_.TaskEnded(rec.pid);
    if (auto c = containers.find(rec.task_id); c != containers.end() && rec.exit && rec.exit->signal != 0) {
      RemoveContainer(c->second, rec.task_id);
    }
    RemovePidFile(TaskDir(rec.task_id));
    if (registered()) {
      Status shipped = logs_->Ship(rec.task_id);
      if (!shipped.ok()) ABACUS_LOG_WARN("agent: {}", shipped.ToString());
    }
    TaskStatus status = StatusOf(rec);
    TaskResults results = ReadResults(ResultsDir(rec.task_id), results_files[rec.task_id]);
    status.results = std::move(results.text);
    status.results_error = std::move(results.error);
    if (!status.results_error.empty()) ABACUS_LOG_WARN("agent: task {}: {}", rec.task_id, status.results_error);
    table_.Update(status);
    ABACUS_LOG_DEBUG("agent: task {} {}", rec.task_id, rec.exit ? rec.exit->Describe() : "ended");
  }
}

void Agent::RemoveContainer(ContainerEngine engine, const std::string& task_id) {
  const std::vector<std::string> argv = BuildContainerRemoveCommand(engine, task_id);
  auto out = RunCommand(argv, std::chrono::seconds(30), /*merge_stderr=*/true);
  if (!out.ok()) {
    ABACUS_LOG_WARN("agent: task {}: {}: {}", task_id, JoinArgv(argv), out.status().ToString());
  } else if (!out->ok()) {
    ABACUS_LOG_WARN("agent: task {}: {} failed: {}", task_id, JoinArgv(argv), out->out);
  }
}

Status Agent::SendStatuses() {
  int generation;
  std::string node;
  {
    MutexLock lock(mu_);
    generation = reg_.generation;
    node = reg_.node;
  }
  std::vector<TaskStatus> batch = table_.TakeUnsent();
  if (batch.empty()) return Status::OK();
  const Time sent = clock_.Now();
  auto answer = client_.ReportStatus(node, batch);
  if (answer.ok()) NoteContact(sent);
  {
    MutexLock lock(mu_);
    ++counters_.status_posts;
  }
  if (!answer.ok()) {
    table_.MarkUnsent(batch);
    if (Rejected(answer.status())) Deregistered(generation, answer.status());
    return answer.status();
  }
  if (!answer->empty()) ABACUS_LOG_DEBUG("agent: the server does not know {} reported task(s)", answer->size());
  return Status::OK();
}

void Agent::StatusLoop() {
  using Steady = std::chrono::steady_clock;
  Backoff backoff(options_.backoff_initial, options_.backoff_max, options_.backoff_seed + 1);
  Time retry_at{};
  Steady::time_point last_post{};
  int final_attempts = 0;
  for (;;) {
    status_waker_.Wait(kSlice);
    ReapEnded();
    bool draining = draining_ && table_.Idle();
    if (draining && (!registered() || !table_.HasUnsent() || final_attempts >= 3)) break;
    if (!registered() || !table_.HasUnsent()) continue;
    if (!draining && clock_.Now() < retry_at) continue;
    // At most one report per window: changes that come within it ride together.
    auto since = Steady::now() - last_post;
    if (since < options_.status_window) std::this_thread::sleep_for(options_.status_window - since);
    last_post = Steady::now();
    Status s = SendStatuses();
    if (s.ok()) {
      backoff.Reset();
    } else {
      if (draining) ++final_attempts;
      if (!Rejected(s)) retry_at = clock_.Now() + backoff.Next();
      if (backoff.failures() == 1) ABACUS_LOG_WARN("agent: status report: {}", s.ToString());
    }
  }
  finished_ = true;
  cv_.notify_all();
}

// ---- upkeep thread: heartbeats, logs, re-discovery, clean-up ----

void Agent::RebuildSampler() {
  std::vector<Device> simulated;
  {
    MutexLock lock(mu_);
    for (const auto& d : discovery_.devices) {
      if (d.simulated) simulated.push_back(d);
    }
  }
  std::vector<std::unique_ptr<DeviceSampler>> samplers;
  if (real_sampler_) samplers.push_back(std::make_unique<BorrowedSampler>(*real_sampler_));
  auto sim = std::make_unique<SimulatedDeviceSampler>(simulated);
  SimulatedDeviceSampler* sim_ptr = sim.get();
  samplers.push_back(std::move(sim));
  auto sampler = std::make_unique<UtilizationSampler>(clock_, std::move(samplers), TaskUsageFrom(*runtime_));
  MutexLock lock(mu_);
  simulated_ = sim_ptr;
  sampler_ = std::move(sampler);
}

HeartbeatRequest Agent::BuildHeartbeat(int* inventory_generation) {
  // Only the upkeep thread rebuilds the sampler, so it can sample outside the lock.
  UtilizationSampler* sampler;
  {
    MutexLock lock(mu_);
    sampler = sampler_.get();
  }
  UtilizationSnapshot snap = sampler->Sample();
  std::map<int32_t, std::string> faults;
  if (!options_.fault_file.empty()) {
    auto read = ReadFaultFile(options_.fault_file);
    if (read.ok()) {
      faults = std::move(*read);
    } else {
      ABACUS_LOG_WARN("agent: fault file: {}", read.status().ToString());
    }
  }
  // Watched faults (by UUID) follow the same rule as injected ones (by index).
  std::map<std::string, std::string> watched;
  if (health_watcher_) watched = health_watcher_->Poll();
  HeartbeatRequest hb;
  {
    MutexLock lock(mu_);
    hb.node = reg_.node;
    for (const Device& d : discovery_.devices) {
      DeviceBeat beat{d.index, d.uuid, d.health, "", std::nullopt, std::nullopt};
      if (auto f = faults.find(d.index); f != faults.end()) {
        beat.health = DeviceHealth::kUnhealthy;
        beat.health_reason = f->second;
      } else if (auto w = watched.find(d.uuid); w != watched.end() && !d.simulated) {
        beat.health = DeviceHealth::kUnhealthy;
        beat.health_reason = w->second;
      }
      auto it = std::find_if(snap.devices.begin(), snap.devices.end(),
                             [&](const DeviceUtilization& u) { return u.uuid == d.uuid; });
      if (it != snap.devices.end()) {
        if (it->compute_percent >= 0) beat.utilization = it->compute_percent / 100.0;
        if (it->memory_used_bytes >= 0) beat.memory_used_bytes = it->memory_used_bytes;
      }
      hb.devices.push_back(std::move(beat));
    }
    if (inventory_generation_ != inventory_sent_) hb.inventory = discovery_.devices;
    *inventory_generation = inventory_generation_;
  }
  hb.tasks = table_.All();
  for (const TaskUtilization& u : snap.tasks) {
    hb.usage.push_back({u.task_id, static_cast<double>(u.cpu_usage_usec) / 1e6, u.memory_bytes});
  }
  return hb;
}

void Agent::SendHeartbeat() {
  int generation;
  {
    MutexLock lock(mu_);
    generation = reg_.generation;
  }
  int inventory_generation = 0;
  HeartbeatRequest hb = BuildHeartbeat(&inventory_generation);
  const Time sent = clock_.Now();
  Status s = client_.Heartbeat(hb);
  if (s.ok()) NoteContact(sent);
  MutexLock lock(mu_);
  if (s.ok()) {
    ++counters_.heartbeats;
    // The inventory reached the server (a newer discovery meanwhile goes in the next one).
    inventory_sent_ = std::max(inventory_sent_, inventory_generation);
    return;
  }
  if (Rejected(s)) {
    if (reg_.registered && reg_.generation == generation) {
      reg_.registered = false;
      ABACUS_LOG_WARN("agent: heartbeat rejected ({}); registering again", s.ToString());
    }
    return;
  }
  ABACUS_LOG_WARN("agent: heartbeat: {}", s.ToString());
}

void Agent::Rediscover() {
  auto found = discoverer_->Discover();
  if (!found.ok()) {
    ABACUS_LOG_WARN("agent: re-discovery: {}", found.status().ToString());
    return;
  }
  DeviceDiff diff;
  {
    MutexLock lock(mu_);
    diff = DiffDevices(discovery_.devices, found->devices);
    discovery_.host = found->host;
    if (!diff.empty()) {
      discovery_.devices = found->devices;
      ++inventory_generation_;
    }
  }
  if (diff.empty()) return;
  for (const auto& line : diff.Describe()) ABACUS_LOG_WARN("agent: re-discovery: {}", line);
  RebuildSampler();
}

void Agent::CleanUp() {
  const std::vector<std::string> done = table_.TakeDone();
  for (const std::string& id : done) {
    (void)logs_->Ship(id);  // anything written since the last round
    logs_->Forget(id);
    (void)runtime_->Remove(id);
    if (Status s = RemoveSecretFiles(TaskDir(id) + "/work"); !s.ok()) ABACUS_LOG_WARN("agent: {}", s.ToString());
    if (!options_.keep_task_dirs) {
      std::error_code ec;
      fs::remove_all(TaskDir(id), ec);
      if (ec) ABACUS_LOG_WARN("agent: cannot remove {}: {}", TaskDir(id), ec.message());
    }
  }
  ReleaseTaskUsers(done);
}

void Agent::ReleaseTaskUsers(const std::vector<std::string>& task_ids) {
  if (!uids_) return;
  std::map<uint32_t, std::string> users;  // uid → task
  for (const std::string& task_id : task_ids) {
    std::optional<TaskUser> user = uids_->Held(task_id);
    if (!user) continue;
    users[user->uid] = task_id;
    // A kept directory goes back to root (0700), so the next task given the uid cannot enter it.
    if (options_.keep_task_dirs) {
      for (const std::string& dir : {TaskDir(task_id) + "/work", TaskDir(task_id) + "/results"}) {
        if (::lchown(dir.c_str(), 0, 0) != 0 && errno != ENOENT) {
          ABACUS_LOG_WARN("agent: cannot give {} back to root: {}", dir, std::strerror(errno));
        }
        (void)::chmod(dir.c_str(), 0700);
      }
    }
  }
  if (users.empty()) return;
  // Nothing a task left running meets the next task given its uid. Its process group is gone
  // already (Poll kills what the leader left in it), so the killer (a fork) runs only for a uid
  // a process still runs as (a daemon that left the group): one scan of /proc for the round's
  // ended tasks, not one per task.
  if (&os_ == &RealProcessOs::Get()) {
    const std::set<uint32_t> busy = UidsWithProcesses(users.begin()->first, users.rbegin()->first);
    for (const auto& [uid, task_id] : users) {
      if (busy.count(uid) == 0) continue;
      if (Status s = KillProcessesOf(uid); !s.ok()) ABACUS_LOG_WARN("agent: task {}: {}", task_id, s.ToString());
    }
  }
  for (const auto& [uid, task_id] : users) uids_->Release(task_id);
}

void Agent::UpkeepLoop() {
  Time next_logs = clock_.Now() + options_.log_ship_every;
  Time next_discovery = clock_.Now() + options_.rediscover_every;
  while (!finished_) {
    {
      MutexLock lock(mu_);
      lock.WaitFor(cv_, milliseconds(20), [&] { return finished_.load(); });
    }
    Time now = clock_.Now();
    bool heartbeat_due;
    {
      MutexLock lock(mu_);
      heartbeat_due = reg_.registered && !leaving_ && now >= reg_.next_heartbeat;
      if (heartbeat_due) reg_.next_heartbeat = now + reg_.heartbeat;  // a steady cadence, whatever the call takes
    }
    if (heartbeat_due) SendHeartbeat();
    if (now >= next_logs) {
      if (registered()) logs_->ShipAll();
      next_logs = now + options_.log_ship_every;
    }
    if (options_.rediscover_every > Duration::zero() && now >= next_discovery) {
      Rediscover();
      next_discovery = now + options_.rediscover_every;
    }
    CleanUp();
  }
}

// ---- fence thread: stop the tasks when cut off from every server ----

void Agent::NoteContact(Time sent) {
  int64_t us = ToMicros(sent);
  int64_t cur = last_contact_us_.load();
  while (us > cur && !last_contact_us_.compare_exchange_weak(cur, us)) {
  }
}

void Agent::FenceLoop() {
  while (!stopping_) {
    Duration timeout;
    {
      MutexLock lock(mu_);
      lock.WaitFor(cv_, milliseconds(20), [&] { return stopping_.load(); });
      timeout = options_.fence_after > Duration::zero() ? options_.fence_after : reg_.node_timeout;
    }
    const int64_t last = last_contact_us_.load();
    if (stopping_ || timeout <= Duration::zero() || last == 0) continue;
    // The watcher fences in this loop's stead should the agent stop or hang (SIGSTOP, a frozen
    // process: this loop would not run while its tasks would): a second after this loop would,
    // renewed every half second while this loop runs, and cleared once this loop fenced.
    if (!fenced_ && ++watcher_renewals_ % 25 == 1) {
      lifeline_.FenceWithin(FromMicros(last) + timeout + std::chrono::seconds(1) - clock_.Now());
    }
    const Duration silent = clock_.Now() - FromMicros(last);
    if (silent < timeout) {
      fenced_ = false;  // reachable again: a later cut fences what runs then
      continue;
    }
    if (fenced_) continue;
    fenced_ = true;
    lifeline_.FenceWithin(Duration::zero());  // this loop fences: the watcher need not
    watcher_renewals_ = 0;
    const std::string why = "fenced: the agent reached no server for " + FormatDuration(silent) +
                            " (node timeout " + FormatDuration(timeout) + ")";
    std::vector<StopOrder> orders = table_.FenceAll(why);
    ABACUS_LOG_WARN("agent: {}; stopping {} task(s) with their fencing signal and grace", why, orders.size());
    for (const StopOrder& o : orders) StopTask(o);
    MutexLock lock(mu_);
    ++counters_.fences;
    counters_.tasks_fenced += static_cast<int>(orders.size());
  }
}

}  // namespace abacus::agent

#include "gateway/gateway.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/log.h"
#include "common/mutex.h"
#include "common/process_state.h"
#include "gateway/haproxy_config.h"

extern char** environ;

namespace abacus::gateway {
namespace {

// Stops the HAProxy a gateway killed with -9 left serving (a frozen backend list, the address
// held): the lock file's last holder wrote "GATEWAY_PID HAPROXY_PID". Only a live process named
// haproxy is signalled (SIGKILL), and waited for (at most 5 s). True when one was signalled.
bool StopOrphanHaproxy(const std::string& holder) {
  std::istringstream in(holder);
  long gateway = 0, haproxy = 0;
  if (!(in >> gateway >> haproxy) || haproxy <= 1) return false;
  const pid_t pid = static_cast<pid_t>(haproxy);
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(comm, name) || name.rfind("haproxy", 0) != 0) return false;
  ABACUS_LOG_WARN("gateway: stopping haproxy pid {} left running by gateway pid {}", pid, gateway);
  // SIGKILL: it serves a frozen backend list, nothing of it is worth a graceful stop (and the
  // signal mask it inherited from its gateway may hold SIGTERM back).
  ::kill(pid, SIGKILL);
  // Gone once all its threads are (a zombie leader's others may still hold the listener).
  for (int i = 0; i < 250 && !ProcessExited(pid); ++i) ::usleep(20'000);
  return true;
}

using nlohmann::json;

// The last `max` bytes of `file`.
std::string Tail(const std::string& file, size_t max = 2000) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max ? s.substr(s.size() - max) : s;
}

// Binds host:port without SO_REUSEPORT: Unavailable when something listens there already.
Status CheckListenFree(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("--listen '" + listen + "': expected HOST:PORT, e.g. 127.0.0.1:8080");
  const std::string host = listen.substr(0, colon);
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
  }
  if (port < 1 || port > 65535) return InvalidArgument("--listen '" + listen + "': the port must be 1..65535");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    return InvalidArgument("--listen '" + listen + "': expected an IPv4 address and a port, e.g. 127.0.0.1:8080");
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
  int one = 1;  // sockets in TIME_WAIT on that port do not count; a listener does
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int e = errno;
  ::close(fd);
  if (rc != 0) {
    return Unavailable("cannot listen on " + listen + ": " + std::strerror(e) +
                       " (another gateway or program uses it; pick another --listen or stop it)");
  }
  return Status::OK();
}

}  // namespace

Gateway::Gateway(GatewayOptions options, EndpointsFetch fetch, MetricsPost post)
    : options_(std::move(options)), fetch_(std::move(fetch)), post_(std::move(post)) {}

Gateway::~Gateway() { Stop(); }

Status Gateway::TakeLock() {
  std::string name = options_.listen;
  for (char& ch : name) {
    if (ch == ':' || ch == '/') ch = '_';
  }
  const std::string path = options_.lock_dir + "/abacus-gateway-" + name + ".lock";
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return Unavailable("cannot open the lock file " + path + ": " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    std::string holder;
    char buf[32] = {};
    if (::pread(lock_fd_, buf, sizeof buf - 1, 0) > 0) holder = std::string(buf);
    holder = holder.substr(0, holder.find(' '));  // the gateway's pid (then its haproxy's)
    ::close(lock_fd_);
    lock_fd_ = -1;
    return AlreadyExists("another abacus gateway serves " + options_.listen +
                         (holder.empty() ? "" : " (pid " + holder + ")") + " (lock " + path +
                         "); stop it first or pick another --listen");
  }
  char previous[64] = {};
  if (::pread(lock_fd_, previous, sizeof previous - 1, 0) > 0) stopped_orphan_ = StopOrphanHaproxy(previous);
  NoteHaproxy(-1);
  return Status::OK();
}

void Gateway::NoteHaproxy(pid_t haproxy) {
  std::string text = std::to_string(::getpid());
  if (haproxy > 0) text += " " + std::to_string(haproxy);
  if (lock_fd_ >= 0 && ::ftruncate(lock_fd_, 0) == 0) (void)!::pwrite(lock_fd_, text.data(), text.size(), 0);
}

Status Gateway::WriteConfig() {
  HaproxyConfig config;
  config.listen = options_.listen;
  config.admin_socket = admin_socket_;
  config.pid_file = options_.run_dir + "/haproxy.pid";
  config.latency_log = latency_.address();
  for (const Followed& f : followed_) config.backends.push_back({f.backend, f.host, f.health_path, f.have});
  const std::string cfg = options_.run_dir + "/haproxy.cfg";
  const std::string tmp = cfg + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << RenderHaproxyConfig(config);
    if (!out) return Unavailable("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, cfg, ec);
  if (ec) return Unavailable("cannot write " + cfg + ": " + ec.message());
  return Status::OK();
}

Result<pid_t> Gateway::SpawnHaproxy(pid_t previous) {
  // HAProxy in the foreground (-db), its output appended to haproxy.log.
  const std::string log = options_.run_dir + "/haproxy.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> args = {options_.haproxy, "-db", "-f", options_.run_dir + "/haproxy.cfg"};
  if (previous > 0) {  // take the listening sockets from the running one, then soft-stop it
    args.insert(args.end(), {"-x", admin_socket_, "-sf", std::to_string(previous)});
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // HAProxy starts with no signal blocked and default actions: the gateway blocks SIGTERM, SIGINT
  // and SIGHUP for its sigtimedwait, and a child would inherit that mask.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, options_.haproxy.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return NotFound("cannot start " + options_.haproxy + ": " + std::strerror(rc) +
                    " (install the Debian package haproxy, or give --haproxy PATH)");
  }
  // Its runtime API answers with its own pid once it took over.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const std::string want = "Pid: " + std::to_string(pid) + "\n";
  while (true) {
    auto info = api_.Send("show info");
    if (info.ok() && info->find(want) != std::string::npos) return pid;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return Unavailable("haproxy exited at start: " + Tail(log));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Unavailable("haproxy's runtime API did not answer: " + Tail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status Gateway::Start() {
  if (options_.services.empty()) return InvalidArgument("no service to serve: give --service NAME (one or more)");
  ABACUS_RETURN_IF_ERROR(TakeLock());
  Status free = CheckListenFree(options_.listen);
  // A HAProxy just stopped may hold its listener a moment longer (a loaded machine): 5 s more.
  for (int i = 0; stopped_orphan_ && !free.ok() && i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    free = CheckListenFree(options_.listen);
  }
  ABACUS_RETURN_IF_ERROR(free);
  std::error_code ec;
  std::filesystem::create_directories(options_.run_dir, ec);
  if (ec) return Unavailable("cannot make " + options_.run_dir + ": " + ec.message());
  ::chmod(options_.run_dir.c_str(), 0700);
  admin_socket_ = options_.run_dir + "/admin.sock";
  api_ = RuntimeApi(admin_socket_);
  // Each service's endpoints once: its backend, and whether HAProxy checks its readiness path.
  std::vector<json> first;
  for (const std::string& s : options_.services) {
    auto eps = fetch_(s, "", 0);
    if (!eps.ok()) return eps.status().WithContext("service '" + s + "'");
    Followed f;
    f.service = s;
    f.host = eps->value("name", s);
    f.backend = BackendName(f.host);
    f.health_path = eps->value("healthCheck", json::object()).value("path", "");
    f.health_checks = !f.health_path.empty();
    followed_.push_back(std::move(f));
    first.push_back(*eps);
  }
  {
    std::ofstream truncate(options_.run_dir + "/haproxy.log", std::ios::trunc);
  }
  if (post_) ABACUS_RETURN_IF_ERROR(latency_.Start());  // only the metrics loop reads the latencies
  ABACUS_RETURN_IF_ERROR(WriteConfig());
  auto pid = SpawnHaproxy(-1);
  if (!pid.ok()) return pid.status();
  haproxy_pid_ = *pid;
  NoteHaproxy(*pid);
  for (size_t i = 0; i < followed_.size(); ++i) {
    Status s = Apply(followed_[i], first[i]);
    if (!s.ok()) ABACUS_LOG_WARN("gateway: {}", s.ToString());
  }
  for (size_t i = 0; i < followed_.size(); ++i) threads_.emplace_back([this, i] { Follow(i); });
  if (post_) threads_.emplace_back([this] { PostMetrics(); });
  ABACUS_LOG_INFO("gateway: haproxy pid {} serves {} on {}", haproxy_pid_, options_.services.size(), options_.listen);
  return Status::OK();
}

Status Gateway::Reload() {
  WriterLock reload(reload_mu_);
  ABACUS_RETURN_IF_ERROR(WriteConfig());
  pid_t previous = -1;
  {
    MutexLock lock(wait_mu_);
    previous = haproxy_pid_;
  }
  auto pid = SpawnHaproxy(previous);
  if (!pid.ok()) return pid.status().WithContext("reload");
  {
    MutexLock lock(wait_mu_);
    if (previous > 0) old_pids_.push_back(previous);
    haproxy_pid_ = *pid;
  }
  NoteHaproxy(*pid);
  // Draining servers were written with weight 0: give them their state and weight back.
  for (const Followed& f : followed_) {
    for (const auto& [name, w] : f.have) {
      if (w.admin != ServerAdmin::kDrain) continue;
      (void)api_.Send("set server " + f.backend + "/" + name + " state drain");
      (void)api_.Send("set server " + f.backend + "/" + name + " weight " + std::to_string(w.weight));
    }
  }
  {
    MutexLock lock(metrics_mu_);
    for (Followed& f : followed_) f.stats = StatsRead{};  // the new process counts from 0
  }
  reloads_.fetch_add(1);
  ABACUS_LOG_INFO("gateway: reloaded haproxy (pid {} → {}) for a new health-check path", previous, *pid);
  return Status::OK();
}

Status Gateway::Apply(Followed& f, const json& endpoints) {
  ReaderLock reload(reload_mu_);
  const ServerSet want = WantedServers(endpoints);
  Status first_error = Status::OK();
  for (const std::string& cmd : PlanCommands(f.backend, f.have, want, f.health_checks)) {
    auto r = api_.Send(cmd);
    ABACUS_LOG_DEBUG("gateway: {} -> {}", cmd, r.ok() ? *r : r.status().ToString());
    if (!r.ok() && first_error.ok()) first_error = r.status();
  }
  if (f.have != want) changes_.fetch_add(1);
  f.have = want;
  {
    MutexLock lock(metrics_mu_);
    f.service_id = endpoints.value("service", f.service);
    f.metric = endpoints.value("autoscaling", json::object()).value("metric", "");
    f.replicas.clear();
    for (const json& e : endpoints.value("items", json::array())) {
      f.replicas[ServerName(e.value("taskId", ""))] = e.value("replica", 0);
    }
  }
  f.revision = first_error.ok() ? endpoints.value("revision", "") : "";  // "": read again at once
  return first_error;
}

void Gateway::Follow(size_t index) {
  Followed& f = followed_[index];
  while (!stopping_.load()) {
    auto eps = fetch_(f.service, f.revision, options_.poll_timeout_seconds);
    if (stopping_.load()) break;
    if (!eps.ok()) {
      ABACUS_LOG_WARN("gateway: service '{}': {}; retrying in 1s", f.service, eps.status().ToString());
      for (int i = 0; i < 10 && !stopping_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (eps->value("revision", "") == f.revision && !f.revision.empty()) continue;
    // A changed readiness path: HAProxy 2.6 cannot change a check at run time, so a graceful
    // reload with the servers it has, then the rest of the change as usual.
    const std::string path = eps->value("healthCheck", json::object()).value("path", "");
    if (path != f.health_path) {
      std::string was = f.health_path;
      {
        WriterLock reload(reload_mu_);  // no Apply of another service while the flags change
        f.health_path = path;
        f.health_checks = !path.empty();
      }
      Status r = Reload();
      if (!r.ok()) {
        ABACUS_LOG_WARN("gateway: service '{}': health-check path {} → {}: {}", f.service, was, path, r.ToString());
      }
    }
    Status s = Apply(f, *eps);
    if (!s.ok()) ABACUS_LOG_WARN("gateway: service '{}': {}", f.service, s.ToString());
  }
}

void Gateway::PostMetrics() {
  while (!stopping_.load()) {
    for (int i = 0; i < options_.metrics_interval_seconds * 10 && !stopping_.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (stopping_.load()) break;
    std::vector<std::pair<std::string, json>> posts;  // service id → samples
    // Every backend's latencies of this interval (taken even when unused, so none piles up).
    std::map<std::string, std::map<std::string, LatencyCounts>> latencies;
    {
      MutexLock lock(metrics_mu_);
      bool any = false;
      for (const Followed& f : followed_) {
        any = any || !f.metric.empty();
        latencies[f.backend] = latency_.Take(f.backend);
      }
      if (!any) continue;
    }
    auto stat = api_.Send("show stat");
    if (!stat.ok()) {
      ABACUS_LOG_WARN("gateway: show stat: {}", stat.status().ToString());
      continue;
    }
    auto rows = ParseShowStat(*stat);
    if (!rows.ok()) {
      ABACUS_LOG_WARN("gateway: {}", rows.status().ToString());
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    {
      MutexLock lock(metrics_mu_);
      for (Followed& f : followed_) {
        if (f.metric.empty()) continue;
        json samples = MetricSamples(f.backend, *rows, now, f.replicas, f.metric, f.stats, latencies[f.backend]);
        if (!samples.empty()) posts.emplace_back(f.service_id, json{{"samples", std::move(samples)}});
      }
    }
    for (const auto& [service, body] : posts) {
      Status s = post_(service, body);
      if (s.ok()) {
        metric_posts_.fetch_add(1);
        ABACUS_LOG_DEBUG("gateway: metrics of {}: {}", service, body.dump());
      } else {
        ABACUS_LOG_WARN("gateway: posting the metrics of {}: {}", service, s.ToString());
      }
    }
  }
}

bool Gateway::HaproxyRunning() {
  MutexLock lock(wait_mu_);
  int status = 0;
  std::erase_if(old_pids_, [&](pid_t p) { return ::waitpid(p, &status, WNOHANG) == p; });  // reloaded away, done
  if (haproxy_pid_ <= 0) return false;
  pid_t r = ::waitpid(haproxy_pid_, &status, WNOHANG);
  if (r == haproxy_pid_) {
    haproxy_pid_ = -1;
    return false;
  }
  return true;
}

void Gateway::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_.store(true);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  MutexLock lock(wait_mu_);
  if (haproxy_pid_ > 0) old_pids_.push_back(haproxy_pid_);
  haproxy_pid_ = -1;
  for (pid_t pid : old_pids_) {
    ::kill(pid, SIGUSR1);  // soft stop: open requests finish
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  old_pids_.clear();
  latency_.Stop();
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
}

}  // namespace abacus::gateway

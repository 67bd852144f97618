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
#include "gateway/haproxy_config.h"

extern char** environ;

namespace abacus::gateway {
namespace {

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

Gateway::Gateway(GatewayOptions options, EndpointsFetch fetch) : options_(std::move(options)), fetch_(std::move(fetch)) {}

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
    ::close(lock_fd_);
    lock_fd_ = -1;
    return AlreadyExists("another abacus gateway serves " + options_.listen +
                         (holder.empty() ? "" : " (pid " + holder + ")") + " (lock " + path +
                         "); stop it first or pick another --listen");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) == 0) (void)!::pwrite(lock_fd_, pid.data(), pid.size(), 0);
  return Status::OK();
}

Status Gateway::Start() {
  if (options_.services.empty()) return InvalidArgument("no service to serve: give --service NAME (one or more)");
  ABACUS_RETURN_IF_ERROR(TakeLock());
  ABACUS_RETURN_IF_ERROR(CheckListenFree(options_.listen));
  std::error_code ec;
  std::filesystem::create_directories(options_.run_dir, ec);
  if (ec) return Unavailable("cannot make " + options_.run_dir + ": " + ec.message());
  ::chmod(options_.run_dir.c_str(), 0700);
  // Each service's endpoints once: its backend, and whether HAProxy checks its readiness path.
  HaproxyConfig config;
  config.listen = options_.listen;
  admin_socket_ = options_.run_dir + "/admin.sock";
  config.admin_socket = admin_socket_;
  config.pid_file = options_.run_dir + "/haproxy.pid";
  std::vector<json> first;
  for (const std::string& s : options_.services) {
    auto eps = fetch_(s, "", 0);
    if (!eps.ok()) return eps.status().WithContext("service '" + s + "'");
    Followed f;
    f.service = s;
    f.backend = BackendName(eps->value("name", s));
    const std::string path = eps->value("healthCheck", json::object()).value("path", "");
    f.health_checks = !path.empty();
    config.backends.push_back({f.backend, eps->value("name", s), path});
    followed_.push_back(std::move(f));
    first.push_back(*eps);
  }
  const std::string cfg = options_.run_dir + "/haproxy.cfg";
  {
    std::ofstream out(cfg, std::ios::trunc);
    out << RenderHaproxyConfig(config);
    if (!out) return Unavailable("cannot write " + cfg);
  }
  // HAProxy in the foreground (-db), its output in haproxy.log.
  const std::string log = options_.run_dir + "/haproxy.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> args = {options_.haproxy, "-db", "-f", cfg};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc = ::posix_spawn(&haproxy_pid_, options_.haproxy.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    haproxy_pid_ = -1;
    return NotFound("cannot start " + options_.haproxy + ": " + std::strerror(rc) +
                    " (install the Debian package haproxy, or give --haproxy PATH)");
  }
  api_ = RuntimeApi(admin_socket_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    if (api_.Send("show info").ok()) break;
    if (!HaproxyRunning()) return Unavailable("haproxy exited at start: " + Tail(log));
    if (std::chrono::steady_clock::now() > deadline) return Unavailable("haproxy's runtime API did not answer: " + Tail(log));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (size_t i = 0; i < followed_.size(); ++i) {
    Status s = Apply(followed_[i], first[i]);
    if (!s.ok()) ABACUS_LOG_WARN("gateway: {}", s.ToString());
  }
  for (size_t i = 0; i < followed_.size(); ++i) threads_.emplace_back([this, i] { Follow(i); });
  ABACUS_LOG_INFO("gateway: haproxy pid {} serves {} on {}", haproxy_pid_, options_.services.size(), options_.listen);
  return Status::OK();
}

Status Gateway::Apply(Followed& f, const json& endpoints) {
  const ServerSet want = WantedServers(endpoints);
  Status first_error = Status::OK();
  for (const std::string& cmd : PlanCommands(f.backend, f.have, want, f.health_checks)) {
    auto r = api_.Send(cmd);
    ABACUS_LOG_DEBUG("gateway: {} -> {}", cmd, r.ok() ? *r : r.status().ToString());
    if (!r.ok() && first_error.ok()) first_error = r.status();
  }
  if (f.have != want) changes_.fetch_add(1);
  f.have = want;
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
    Status s = Apply(f, *eps);
    if (!s.ok()) ABACUS_LOG_WARN("gateway: service '{}': {}", f.service, s.ToString());
  }
}

bool Gateway::HaproxyRunning() {
  std::lock_guard lock(wait_mu_);
  if (haproxy_pid_ <= 0) return false;
  int status = 0;
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
  std::lock_guard lock(wait_mu_);
  if (haproxy_pid_ > 0) {
    ::kill(haproxy_pid_, SIGUSR1);  // soft stop: open requests finish
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int status = 0;
    while (::waitpid(haproxy_pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(haproxy_pid_, SIGKILL);
        ::waitpid(haproxy_pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    haproxy_pid_ = -1;
  }
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
}

}  // namespace abacus::gateway

#include "agent/loop/waker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

namespace abacus::agent {

namespace {

constexpr int kSlots = 16;
std::atomic<int> g_sigchld_fds[kSlots] = {};  // write ends + 1 (0: free)
std::once_flag g_install;

void OnSigchld(int) {
  int saved = errno;
  for (auto& slot : g_sigchld_fds) {
    int fd = slot.load(std::memory_order_acquire) - 1;
    if (fd >= 0) {
      char c = 'c';
      [[maybe_unused]] ssize_t n = ::write(fd, &c, 1);
    }
  }
  errno = saved;
}

}  // namespace

Waker::Waker() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    read_fd_ = fds[0];
    write_fd_ = fds[1];
  }
}

Waker::~Waker() {
  bool subscribed = slot_ >= 0 || ever_subscribed_;
  UnsubscribeSigchld();
  // A SIGCHLD handler running on another thread may still hold the write end: a pipe that was
  // ever subscribed stays open (both ends, so a late write never raises SIGPIPE).
  if (subscribed) return;
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
}

void Waker::Wake() {
  if (write_fd_ < 0) return;
  char c = 'w';
  [[maybe_unused]] ssize_t n = ::write(write_fd_, &c, 1);  // a full pipe is already a wake
}

bool Waker::Wait(std::chrono::milliseconds timeout) {
  if (read_fd_ < 0) {
    ::usleep(static_cast<useconds_t>(timeout.count() * 1000));
    return false;
  }
  pollfd pfd{read_fd_, POLLIN, 0};
  int r = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (r == 0) return false;
  // Ready, or interrupted by a signal (whose handler may just have written): drain.
  bool woken = r > 0;
  char buf[256];
  while (::read(read_fd_, buf, sizeof buf) > 0) woken = true;
  return woken;
}

bool Waker::SubscribeSigchld() {
  if (slot_ >= 0 || write_fd_ < 0) return slot_ >= 0;
  std::call_once(g_install, [] {
    struct sigaction sa {};
    sa.sa_handler = OnSigchld;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    ::sigaction(SIGCHLD, &sa, nullptr);
  });
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_sigchld_fds[i].compare_exchange_strong(expected, write_fd_ + 1)) {
      slot_ = i;
      ever_subscribed_ = true;
      return true;
    }
  }
  return false;
}

void Waker::UnsubscribeSigchld() {
  if (slot_ < 0) return;
  g_sigchld_fds[slot_].store(0, std::memory_order_release);
  slot_ = -1;
}

}  // namespace abacus::agent

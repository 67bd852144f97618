// Waker: lets one thread sleep until another has news — or a child process has ended
// (SIGCHLD) — without polling on a slow timer. A self-pipe: Wake() and the SIGCHLD handler
// write a byte, Wait() polls the read end.
#pragma once

#include <chrono>

namespace abacus::agent {

class Waker {
 public:
  Waker();
  ~Waker();
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;

  // Wakes the waiting thread (any thread; async-signal-safe).
  void Wake();
  // Sleeps until woken or `timeout` passed; returns true when woken. Drains pending wakes.
  bool Wait(std::chrono::milliseconds timeout);

  // While subscribed, every SIGCHLD wakes this waker. The first subscription installs a
  // process-wide SIGCHLD handler (SA_RESTART | SA_NOCLDSTOP); at most 16 wakers at a time
  // (false beyond that: the caller's short poll still notices ended children). A waker that
  // was ever subscribed keeps its two pipe descriptors open until the process ends.
  bool SubscribeSigchld();
  void UnsubscribeSigchld();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  int slot_ = -1;
  bool ever_subscribed_ = false;
};

}  // namespace abacus::agent

#include "common/process_state.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace abacus {
namespace {

TEST(ProcessStateTest, ALiveProcessIsNotExitedAndAReapedOneIs) {
  EXPECT_NE(ProcessState(::getpid()), '\0');
  EXPECT_FALSE(ProcessExited(::getpid()));
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_FALSE(ProcessExited(child));
  ::kill(child, SIGKILL);
  // Not reaped yet: a zombie with no other thread has exited.
  for (int i = 0; i < 500 && ProcessState(child) != 'Z'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ProcessState(child), 'Z');
  EXPECT_TRUE(ProcessExited(child));
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(ProcessState(child), '\0');
  EXPECT_TRUE(ProcessExited(child));
}

void* SleepForever(void*) {
  for (;;) ::pause();
  return nullptr;
}

// The gateway found a stopped HAProxy's leader a zombie while its other threads still held the
// listening socket, and failed to bind (CI, 2026-12-07): a zombie leader with a live thread has
// not exited.
TEST(ProcessStateTest, AZombieLeaderWithALiveThreadHasNotExited) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pthread_t t;
    if (pthread_create(&t, nullptr, SleepForever, nullptr) != 0) ::_exit(1);
    ::syscall(SYS_exit, 0);  // the leader thread exits (no unwinding); the process lives on in its other one
  }
  for (int i = 0; i < 500 && ProcessState(child) != 'Z'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ProcessState(child), 'Z');
  EXPECT_FALSE(ProcessExited(child));
  ::kill(child, SIGKILL);
  for (int i = 0; i < 500 && !ProcessExited(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(ProcessExited(child));
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace abacus

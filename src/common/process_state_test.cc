#include "common/process_state.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace abacus {
namespace {

TEST(ProcessStateTest, AStatLineIsReadFromItsLastParenthesis) {
  // A command name may hold spaces and parentheses: "(a) b (c)".
  const std::string line = "4242 ((a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 123456 1000 55 "
                           "18446744073709551615";
  auto stat = ParseProcStat(line);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->utime, 7);
  EXPECT_EQ(stat->stime, 3);
  EXPECT_EQ(stat->start_time, 123456);
  EXPECT_EQ(stat->rss_pages, 55);
  EXPECT_FALSE(ParseProcStat("4242 (x) S 1 2 3").has_value());  // cut short
  EXPECT_FALSE(ParseProcStat("4242 x S 1").has_value());         // no command name
  EXPECT_FALSE(ParseProcStat(line.substr(0, line.find(" 7 3")) + " x 3 0 0 20 0 1 0 123456 1000 55 1").has_value());
  auto self = ReadProcStat(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_GT(self->start_time, 0);
  EXPECT_GT(self->rss_pages, 0);
}

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

#include "common/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace abacus {
namespace {

// Zero cost: the wrappers are the std types and nothing else.
static_assert(sizeof(Mutex) == sizeof(std::mutex));
static_assert(alignof(Mutex) == alignof(std::mutex));
static_assert(sizeof(SharedMutex) == sizeof(std::shared_mutex));

// A counter as the server's classes hold one: the data names its mutex.
class Counter {
 public:
  void Add(int n) {
    MutexLock lock(mu_);
    value_ += n;
    changed_.notify_all();
  }
  int value() {
    MutexLock lock(mu_);
    return value_;
  }
  // Blocks until the value reaches `target`.
  void AwaitAtLeast(int target) {
    MutexLock lock(mu_);
    lock.Wait(changed_, [&]() REQUIRES(mu_) { return value_ >= target; });
  }
  // Waits up to `limit` for `target`; returns whether it was reached.
  bool AwaitAtLeastFor(int target, std::chrono::milliseconds limit) {
    MutexLock lock(mu_);
    return lock.WaitFor(changed_, limit, [&]() REQUIRES(mu_) { return value_ >= target; });
  }
  // Reads, gives the lock back for work outside it, takes it again and reads again.
  std::pair<int, int> ReadAroundUnlockedWork(const std::function<void()>& work) {
    MutexLock lock(mu_);
    const int before = value_;
    lock.Unlock();
    work();
    lock.Lock();
    return {before, value_};
  }
  // Adds only when the mutex is free at once.
  bool TryAdd(int n) {
    if (!mu_.try_lock()) return false;
    MutexLock lock(mu_, std::adopt_lock);
    value_ += n;
    return true;
  }
  Mutex& mu() { return mu_; }

 private:
  Mutex mu_;
  std::condition_variable changed_;
  int value_ GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, MutexLockExcludesOtherThreads) {
  Counter c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c.Add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000);
}

TEST(MutexTest, WaitReturnsOnceThePredicateHolds) {
  Counter c;
  std::thread adder([&] {
    for (int i = 0; i < 5; ++i) c.Add(1);
  });
  c.AwaitAtLeast(5);
  EXPECT_GE(c.value(), 5);
  adder.join();
}

TEST(MutexTest, WaitForReportsAPredicateThatNeverHeld) {
  Counter c;
  EXPECT_FALSE(c.AwaitAtLeastFor(1, std::chrono::milliseconds(1)));
  c.Add(1);
  EXPECT_TRUE(c.AwaitAtLeastFor(1, std::chrono::milliseconds(1)));
}

TEST(MutexTest, UnlockLetsOthersInUntilLock) {
  Counter c;
  auto [before, after] = c.ReadAroundUnlockedWork([&] { c.Add(7); });  // would deadlock if still held
  EXPECT_EQ(before, 0);
  EXPECT_EQ(after, 7);
}

TEST(MutexTest, TryLockAndAdoptTakeOverAFreeMutexOnly) {
  Counter c;
  EXPECT_TRUE(c.TryAdd(2));
  {
    MutexLock held(c.mu());
    std::thread other([&] { EXPECT_FALSE(c.TryAdd(3)); });
    other.join();
  }
  EXPECT_EQ(c.value(), 2);
}

struct SharedValue {
  SharedMutex mu;
  int value GUARDED_BY(mu) = 0;
};

TEST(MutexTest, ReadersShareAWriterExcludes) {
  SharedValue v;
  {
    ReaderLock first(v.mu);
    bool second_reader_got_in = false;
    std::thread reader([&] {
      ReaderLock second(v.mu);  // would block forever if readers excluded each other
      second_reader_got_in = true;
    });
    reader.join();
    EXPECT_TRUE(second_reader_got_in);
  }
  std::thread writer;
  {
    ReaderLock reading(v.mu);
    writer = std::thread([&] {
      WriterLock w(v.mu);
      v.value = 1;
    });
    std::this_thread::yield();
    EXPECT_EQ(v.value, 0);  // the writer waits for the reader
  }
  writer.join();
  ReaderLock after(v.mu);
  EXPECT_EQ(v.value, 1);
}

}  // namespace
}  // namespace abacus

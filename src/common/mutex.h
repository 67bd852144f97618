// Annotated mutexes (docs/concurrency.md): std::mutex and std::shared_mutex with clang's
// capability attributes, and scoped locks the analysis follows. Each wrapper holds only the std
// type and its functions are inline, so it costs what the std type costs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "common/thread_annotations.h"

namespace abacus {

// An exclusive mutex. Data it guards is declared `T x GUARDED_BY(mu_);`.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Blocks until this thread holds the mutex.
  void lock() ACQUIRE() { mu_.lock(); }
  // Gives the mutex back; this thread holds it.
  void unlock() RELEASE() { mu_.unlock(); }
  // Takes the mutex if it is free; returns whether it did.
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis that this thread holds the mutex where it cannot see it (a lock taken by
  // a caller through a path it does not follow). No run-time check.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

  // The std::mutex, for std::condition_variable (MutexLock::Wait uses it).
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// A reader-writer mutex: writers hold it exclusively (MutexLock), readers shared (ReaderLock).
class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  // Blocks until this thread holds the mutex exclusively.
  void lock() ACQUIRE() { mu_.lock(); }
  // Gives back an exclusive hold.
  void unlock() RELEASE() { mu_.unlock(); }
  // Blocks until this thread holds the mutex shared.
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  // Gives back a shared hold.
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }
  // Tells the analysis that this thread holds the mutex exclusively / shared; no run-time check.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
  void AssertReaderHeld() const ASSERT_SHARED_CAPABILITY(this) {}

 private:
  std::shared_mutex mu_;
};

// Holds a Mutex (or a SharedMutex exclusively) from construction to destruction; Unlock and
// Lock give it back and take it again in between (the destructor releases only a held lock).
template <typename M>
class SCOPED_CAPABILITY BasicMutexLock {
 public:
  explicit BasicMutexLock(M& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  // Takes over a lock this thread already holds (after a successful try_lock).
  BasicMutexLock(M& mu, std::adopt_lock_t) REQUIRES(mu) : mu_(mu) {}
  ~BasicMutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  BasicMutexLock(const BasicMutexLock&) = delete;
  BasicMutexLock& operator=(const BasicMutexLock&) = delete;

  // Gives the mutex back early (work that must not hold it); Lock takes it again.
  void Unlock() RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  // Takes the mutex again after Unlock.
  void Lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 protected:
  M& mu_;
  bool held_ = true;
};

// Holds a Mutex; also waits on a std::condition_variable with it (the mutex is given back while
// waiting and held again on return, as std::condition_variable::wait does). A predicate that
// reads guarded data is declared `[&]() REQUIRES(mu_) { ... }`.
class SCOPED_CAPABILITY MutexLock : public BasicMutexLock<Mutex> {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : BasicMutexLock(mu) {}
  // Takes over a lock this thread already holds: `if (!mu.try_lock()) return; MutexLock l(mu, std::adopt_lock);`
  MutexLock(Mutex& mu, std::adopt_lock_t) REQUIRES(mu) : BasicMutexLock(mu, std::adopt_lock) {}
  ~MutexLock() RELEASE() = default;

  // Waits for a notification (or a spurious wakeup).
  void Wait(std::condition_variable& cv) {
    std::unique_lock<std::mutex> lock(mu_.native(), std::adopt_lock);
    cv.wait(lock);
    lock.release();
  }
  // Waits until `done()` is true.
  template <typename Predicate>
  void Wait(std::condition_variable& cv, Predicate done) {
    std::unique_lock<std::mutex> lock(mu_.native(), std::adopt_lock);
    cv.wait(lock, std::move(done));
    lock.release();
  }
  // Waits until `done()` is true or `timeout` passed; returns `done()`.
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout, Predicate done) {
    std::unique_lock<std::mutex> lock(mu_.native(), std::adopt_lock);
    const bool result = cv.wait_for(lock, timeout, std::move(done));
    lock.release();
    return result;
  }
  // Waits for a notification or until `timeout` passed.
  template <typename Rep, typename Period>
  std::cv_status WaitFor(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock<std::mutex> lock(mu_.native(), std::adopt_lock);
    const std::cv_status result = cv.wait_for(lock, timeout);
    lock.release();
    return result;
  }
  // Waits until `done()` is true or `deadline`; returns `done()`.
  template <typename C, typename D, typename Predicate>
  bool WaitUntil(std::condition_variable& cv, std::chrono::time_point<C, D> deadline, Predicate done) {
    std::unique_lock<std::mutex> lock(mu_.native(), std::adopt_lock);
    const bool result = cv.wait_until(lock, deadline, std::move(done));
    lock.release();
    return result;
  }
  // Waits for a notification or until `deadline`.
  template <typename C, typename D>
  std::cv_status WaitUntil(std::condition_variable& cv, std::chrono::time_point<C, D> deadline) {
    std::unique_lock<std::mutex> lock(mu_.native(), std::adopt_lock);
    const std::cv_status result = cv.wait_until(lock, deadline);
    lock.release();
    return result;
  }
};

// Holds a SharedMutex exclusively (a writer).
class SCOPED_CAPABILITY WriterLock : public BasicMutexLock<SharedMutex> {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : BasicMutexLock(mu) {}
  ~WriterLock() RELEASE() = default;
};

// Holds a SharedMutex shared (a reader) from construction to destruction.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace abacus

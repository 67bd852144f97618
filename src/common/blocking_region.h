// BlockingRegion: marks where a thread may wait long (for a commit, the scheduling loop, a long
// poll, a slow socket). A pool that bounds how many of its threads run on the CPU at once (the
// HTTP front's workers, net::FairQueue) joins its threads to itself; while one of them waits in a
// region the pool starts other work in its place, and the thread counts as running again when it
// leaves. On any other thread a region does nothing. (Go's scheduler hands its processor on at a
// blocking call the same way; Java's ForkJoinPool.managedBlock is the same idea.)
//
//   BlockingRegion::Join(&pool);        // a pool's worker thread, once
//   { BlockingRegion waiting; slot.Wait(); }
//
// The pool is found through the calling thread (a thread-local pointer set by the pool's own
// threads): the waits are deep below the code that knows about pools (a committer, a condition
// variable), and no request state travels this way.
#pragma once

namespace abacus {

class BlockingRegion {
 public:
  // A pool whose threads are counted while they run.
  class Pool {
   public:
    virtual ~Pool() = default;
    // The calling thread (one of the pool's) starts waiting: it stops counting as running.
    virtual void Blocked() = 0;
    // The calling thread stopped waiting: it counts as running again (at once, never waiting).
    virtual void Unblocked() = 0;
  };

  // Makes the calling thread one of `pool`'s (nullptr: of none).
  static void Join(Pool* pool);

  // Tells the calling thread's pool, if any, that the thread waits until the region ends.
  BlockingRegion();
  ~BlockingRegion();
  BlockingRegion(const BlockingRegion&) = delete;
  BlockingRegion& operator=(const BlockingRegion&) = delete;

 private:
  Pool* pool_;
};

}  // namespace abacus

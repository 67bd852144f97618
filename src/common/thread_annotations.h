// Clang thread-safety annotations (docs/concurrency.md): attributes that tell clang's
// -Wthread-safety analysis which capability (mutex) guards which data and which functions take,
// hold or must not hold it. They expand to nothing on other compilers, so GCC builds are
// unchanged; the clang builds (CMakeLists.txt, `tsa_check`) treat a violation as an error.
#pragma once

#if defined(__clang__)
#define ABACUS_THREAD_ATTRIBUTE(x) __attribute__((x))
#else
#define ABACUS_THREAD_ATTRIBUTE(x)
#endif

// On a class: its objects are capabilities ("mutex"); locking one is acquiring it.
#define CAPABILITY(name) ABACUS_THREAD_ATTRIBUTE(capability(name))
// On a class: an RAII object that holds a capability for its lifetime (MutexLock).
#define SCOPED_CAPABILITY ABACUS_THREAD_ATTRIBUTE(scoped_lockable)

// On data: reading needs `mu` held (shared or exclusive), writing needs it held exclusively.
#define GUARDED_BY(mu) ABACUS_THREAD_ATTRIBUTE(guarded_by(mu))
// On a pointer or smart pointer: the pointee is guarded by `mu` (the pointer itself is not).
#define PT_GUARDED_BY(mu) ABACUS_THREAD_ATTRIBUTE(pt_guarded_by(mu))

// On a mutex: the lock order. This one is taken before / after the listed ones.
#define ACQUIRED_BEFORE(...) ABACUS_THREAD_ATTRIBUTE(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) ABACUS_THREAD_ATTRIBUTE(acquired_after(__VA_ARGS__))

// On a function: the caller holds the capabilities exclusively / at least shared.
#define REQUIRES(...) ABACUS_THREAD_ATTRIBUTE(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) ABACUS_THREAD_ATTRIBUTE(requires_shared_capability(__VA_ARGS__))
// On a function: it takes the capabilities (no argument: `this`), exclusively or shared.
#define ACQUIRE(...) ABACUS_THREAD_ATTRIBUTE(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) ABACUS_THREAD_ATTRIBUTE(acquire_shared_capability(__VA_ARGS__))
// On a function: it gives the capabilities back (exclusive, shared, or whichever is held).
#define RELEASE(...) ABACUS_THREAD_ATTRIBUTE(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) ABACUS_THREAD_ATTRIBUTE(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) ABACUS_THREAD_ATTRIBUTE(release_generic_capability(__VA_ARGS__))
// On a function: it tries to take the capabilities; the first argument is the return value
// that means it did.
#define TRY_ACQUIRE(...) ABACUS_THREAD_ATTRIBUTE(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) ABACUS_THREAD_ATTRIBUTE(try_acquire_shared_capability(__VA_ARGS__))
// On a function: the caller must not hold the capabilities (the function takes them itself).
#define EXCLUDES(...) ABACUS_THREAD_ATTRIBUTE(locks_excluded(__VA_ARGS__))
// On a function: checks at run time that the capability is held; from there on the analysis
// assumes it is.
#define ASSERT_CAPABILITY(x) ABACUS_THREAD_ATTRIBUTE(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) ABACUS_THREAD_ATTRIBUTE(assert_shared_capability(x))
// On a function: it returns (a reference to) the capability `x`.
#define RETURN_CAPABILITY(x) ABACUS_THREAD_ATTRIBUTE(lock_returned(x))
// On a function: the analysis skips its body. Only with a comment saying why it is safe.
#define NO_THREAD_SAFETY_ANALYSIS ABACUS_THREAD_ATTRIBUTE(no_thread_safety_analysis)

// Whole-store copy and verification, for `abacus admin migrate`: enumerate every record of a
// store, write records verbatim (keeping versions, times and seq numbers) into another, and
// compare both sides by counts and a SHA-256 over the ordered records.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace abacus {

// Records to write verbatim.
struct StoreRecords {
  std::vector<ObjectRecord> objects;
  std::vector<EventRecord> events;
  std::vector<JournalRecord> journal;
  std::vector<std::pair<std::string, std::string>> meta;

  size_t size() const { return objects.size() + events.size() + journal.size() + meta.size(); }
};

// What a backend offers for whole-store copies (Store::copy_access()). Not for the serving
// path: Load bypasses versions and seq assignment.
class StoreCopyAccess {
 public:
  virtual ~StoreCopyAccess() = default;

  // Returns the kinds that hold at least one object.
  virtual Result<std::vector<std::string>> ObjectKinds() = 0;
  // Returns the journal streams that hold at least one entry.
  virtual Result<std::vector<std::string>> JournalStreams() = 0;
  // Returns the events of every object with seq > after_seq, in seq order, at most `limit`.
  virtual Result<std::vector<EventRecord>> EventsAfter(int64_t after_seq, size_t limit) = 0;
  // Returns every store-level setting, ordered by key.
  virtual Result<std::vector<std::pair<std::string, std::string>>> AllMeta() = 0;
  // Writes `records` as they are (objects with their version and updated_us, events and journal
  // entries with their seq) in one transaction, and moves the seq counters past them so that
  // later commits continue the numbering. Aborted when an object, event seq or journal seq
  // already exists (nothing is written then).
  virtual Status Load(const StoreRecords& records) = 0;
  // Removes every record and resets the seq counters.
  virtual Status Erase() = 0;
};

// Counts and checksum of a whole store.
struct StoreDigest {
  std::map<std::string, int64_t> objects;  // per kind
  std::map<std::string, int64_t> journal;  // per stream
  int64_t events = 0;
  int64_t meta = 0;
  int64_t last_event_seq = 0;
  std::string sha256;  // hex, over every record in a fixed order

  bool empty() const { return objects.empty() && journal.empty() && events == 0 && meta == 0; }
  bool operator==(const StoreDigest&) const = default;
};

// Computes the digest of `store`: objects by kind then key, events by seq, journal entries by
// stream then seq, meta by key; every field of every record enters the checksum.
// Unimplemented when the store offers no copy access.
Result<StoreDigest> DigestStore(Store& store);

// Returns a multi-line, human-readable list of what differs between two digests ("" if none).
std::string DescribeDigestDifference(const StoreDigest& from, const StoreDigest& to);

struct CopyOptions {
  bool force = false;        // replace a non-empty target instead of refusing
  size_t chunk = 2000;       // records per Load transaction
  // Called with a line of progress ("objects workload: 2000/5120").
  std::function<void(const std::string&)> progress;
};

struct CopyReport {
  StoreDigest source;
  StoreDigest target;
};

// Copies every record of `from` into `to`, then verifies that both digests are equal.
// FailedPrecondition when `to` is not empty and !options.force (with force it is erased
// first); DataLoss-like Internal error naming the differences when verification fails (for
// instance because `from` changed during the copy).
Result<CopyReport> CopyStore(Store& from, Store& to, const CopyOptions& options);

}  // namespace abacus

#include "store/store_copy.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace abacus {

namespace {

// Feeds length-prefixed fields to SHA-256, so that ("ab","c") and ("a","bc") differ.
class Hasher {
 public:
  Hasher() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
  }
  Hasher& Add(std::string_view text) {
    Add(static_cast<int64_t>(text.size()));
    EVP_DigestUpdate(ctx_.get(), text.data(), text.size());
    return *this;
  }
  Hasher& Add(int64_t value) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(uint64_t(value) >> (8 * i));
    EVP_DigestUpdate(ctx_.get(), bytes, sizeof bytes);
    return *this;
  }
  std::string Hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_.get(), digest, &size);
    std::string out;
    char buf[3];
    for (unsigned int i = 0; i < size; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", digest[i]);
      out += buf;
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

constexpr size_t kPage = 5000;

Result<StoreCopyAccess*> AccessOf(Store& store) {
  StoreCopyAccess* access = store.copy_access();
  if (access == nullptr) {
    return FailedPrecondition("store " + store.Describe() + " cannot be enumerated for a copy");
  }
  return access;
}

Result<std::vector<std::string>> Sorted(Result<std::vector<std::string>> names) {
  if (names.ok()) std::sort(names->begin(), names->end());
  return names;
}

}  // namespace

Result<StoreDigest> DigestStore(Store& store) {
  ABACUS_ASSIGN_OR_RETURN(StoreCopyAccess * access, AccessOf(store));
  StoreDigest digest;
  Hasher hash;
  ABACUS_ASSIGN_OR_RETURN(std::vector<std::string> kinds, Sorted(access->ObjectKinds()));
  hash.Add("objects");
  for (const std::string& kind : kinds) {
    ABACUS_ASSIGN_OR_RETURN(std::vector<ObjectRecord> objects, store.List(kind));
    digest.objects[kind] = static_cast<int64_t>(objects.size());
    for (const ObjectRecord& o : objects) {
      hash.Add(o.kind).Add(o.key).Add(o.version).Add(o.json).Add(o.updated_us);
    }
  }
  hash.Add("events");
  for (int64_t after = 0;;) {
    ABACUS_ASSIGN_OR_RETURN(std::vector<EventRecord> page, access->EventsAfter(after, kPage));
    for (const EventRecord& e : page) {
      hash.Add(e.seq).Add(e.object_kind).Add(e.object_key).Add(e.time_us).Add(e.type).Add(e.json);
    }
    digest.events += static_cast<int64_t>(page.size());
    if (!page.empty()) digest.last_event_seq = page.back().seq;
    if (page.size() < kPage) break;
    after = page.back().seq;
  }
  hash.Add("journal");
  ABACUS_ASSIGN_OR_RETURN(std::vector<std::string> streams, Sorted(access->JournalStreams()));
  for (const std::string& stream : streams) {
    int64_t count = 0;
    for (int64_t after = 0;;) {
      ABACUS_ASSIGN_OR_RETURN(std::vector<JournalRecord> page, store.Journal(stream, after, kPage));
      for (const JournalRecord& j : page) hash.Add(j.stream).Add(j.seq).Add(j.time_us).Add(j.json);
      count += static_cast<int64_t>(page.size());
      if (page.size() < kPage) break;
      after = page.back().seq;
    }
    digest.journal[stream] = count;
  }
  hash.Add("meta");
  ABACUS_ASSIGN_OR_RETURN(auto meta, access->AllMeta());
  std::sort(meta.begin(), meta.end());
  for (const auto& [key, value] : meta) hash.Add(key).Add(value);
  digest.meta = static_cast<int64_t>(meta.size());
  digest.sha256 = hash.Hex();
  return digest;
}

std::string DescribeDigestDifference(const StoreDigest& from, const StoreDigest& to) {
  std::string out;
  auto line = [&](const std::string& what, int64_t a, int64_t b) {
    if (a != b) out += "  " + what + ": " + std::to_string(a) + " vs " + std::to_string(b) + "\n";
  };
  auto maps = [&](const std::string& what, const std::map<std::string, int64_t>& a,
                  const std::map<std::string, int64_t>& b) {
    std::map<std::string, std::pair<int64_t, int64_t>> both;
    for (const auto& [k, n] : a) both[k].first = n;
    for (const auto& [k, n] : b) both[k].second = n;
    for (const auto& [k, p] : both) line(what + " " + k, p.first, p.second);
  };
  maps("objects", from.objects, to.objects);
  line("events", from.events, to.events);
  line("last event seq", from.last_event_seq, to.last_event_seq);
  maps("journal", from.journal, to.journal);
  line("meta", from.meta, to.meta);
  if (out.empty() && from.sha256 != to.sha256) {
    out = "  counts agree but the SHA-256 differs: " + from.sha256 + " vs " + to.sha256 + "\n";
  }
  return out;
}

Result<CopyReport> CopyStore(Store& from, Store& to, const CopyOptions& options) {
  ABACUS_ASSIGN_OR_RETURN(StoreCopyAccess * source, AccessOf(from));
  ABACUS_ASSIGN_OR_RETURN(StoreCopyAccess * target, AccessOf(to));
  auto progress = [&](const std::string& text) {
    if (options.progress) options.progress(text);
  };
  const size_t chunk = std::max<size_t>(options.chunk, 1);

  // 1) The target must be empty, or erased with force.
  ABACUS_ASSIGN_OR_RETURN(StoreDigest before, DigestStore(to));
  if (!before.empty()) {
    int64_t objects = 0;
    for (const auto& [kind, n] : before.objects) objects += n;
    if (!options.force) {
      return FailedPrecondition("target " + to.Describe() + " is not empty (" +
                                std::to_string(objects) + " objects, " +
                                std::to_string(before.events) + " events, " +
                                std::to_string(before.journal.size()) + " journal streams, " +
                                std::to_string(before.meta) +
                                " settings); pass --force to replace its contents");
    }
    progress("erasing the target (" + std::to_string(objects) + " objects, " +
             std::to_string(before.events) + " events)");
    ABACUS_RETURN_IF_ERROR(target->Erase());
  }

  // 2) Objects, kind by kind, in chunks of one transaction each.
  StoreRecords pending;
  auto flush = [&]() -> Status {
    if (pending.size() == 0) return Status::OK();
    Status s = target->Load(pending);
    pending = StoreRecords();
    return s;
  };
  ABACUS_ASSIGN_OR_RETURN(std::vector<std::string> kinds, Sorted(source->ObjectKinds()));
  for (const std::string& kind : kinds) {
    ABACUS_ASSIGN_OR_RETURN(std::vector<ObjectRecord> objects, from.List(kind));
    for (size_t i = 0; i < objects.size(); ++i) {
      pending.objects.push_back(std::move(objects[i]));
      if (pending.size() >= chunk || i + 1 == objects.size()) {
        ABACUS_RETURN_IF_ERROR(flush());
        progress("objects " + kind + ": " + std::to_string(i + 1) + "/" +
                 std::to_string(objects.size()));
      }
    }
  }
  // 3) Events, keeping their seq.
  int64_t events = 0;
  for (int64_t after = 0;;) {
    ABACUS_ASSIGN_OR_RETURN(std::vector<EventRecord> page, source->EventsAfter(after, chunk));
    if (page.empty()) break;
    after = page.back().seq;
    events += static_cast<int64_t>(page.size());
    pending.events = std::move(page);
    ABACUS_RETURN_IF_ERROR(flush());
    progress("events: " + std::to_string(events) + " (through seq " + std::to_string(after) + ")");
  }
  // 4) Journal streams, keeping their seq.
  ABACUS_ASSIGN_OR_RETURN(std::vector<std::string> streams, Sorted(source->JournalStreams()));
  for (const std::string& stream : streams) {
    int64_t entries = 0;
    for (int64_t after = 0;;) {
      ABACUS_ASSIGN_OR_RETURN(std::vector<JournalRecord> page, from.Journal(stream, after, chunk));
      if (page.empty()) break;
      after = page.back().seq;
      entries += static_cast<int64_t>(page.size());
      pending.journal = std::move(page);
      ABACUS_RETURN_IF_ERROR(flush());
      progress("journal " + stream + ": " + std::to_string(entries));
    }
  }
  // 5) Store-level settings.
  ABACUS_ASSIGN_OR_RETURN(pending.meta, source->AllMeta());
  const size_t settings = pending.meta.size();
  ABACUS_RETURN_IF_ERROR(flush());
  progress("meta: " + std::to_string(settings) + " settings");

  // 6) Verify both sides.
  progress("verifying counts and SHA-256 on both sides");
  CopyReport report;
  ABACUS_ASSIGN_OR_RETURN(report.source, DigestStore(from));
  ABACUS_ASSIGN_OR_RETURN(report.target, DigestStore(to));
  if (!(report.source == report.target)) {
    return Internal("verification failed: the copy differs from " + from.Describe() +
                    " (did the source change during the copy? stop the server and run again "
                    "with --force):\n" +
                    DescribeDigestDifference(report.source, report.target));
  }
  return report;
}

}  // namespace abacus

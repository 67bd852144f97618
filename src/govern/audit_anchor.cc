#include "govern/audit_anchor.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "govern/crypto.h"

namespace abacus::govern {
namespace {

std::string AnchorBytes(int64_t seq, const std::string& hash, int64_t time_us) {
  return "abacus-audit-anchor-v1\n" + std::to_string(seq) + "\n" + hash + "\n" + std::to_string(time_us) + "\n";
}

bool IsHex(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable("cannot write " + path + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  return Status::OK();
}

AuditAnchorReport Broken(AuditAnchorReport r, int64_t seq, std::string reason) {
  r.ok = false;
  r.first_bad_seq = seq;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

Result<std::string> LoadOrCreateAuditKey(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    std::string key = RandomHex(32);
    Status wrote = WriteAll(fd, key + "\n", path);
    if (wrote.ok() && ::fsync(fd) != 0) wrote = Unavailable("cannot sync " + path + ": " + std::strerror(errno));
    ::close(fd);
    if (!wrote.ok()) return wrote;
    return key;
  }
  if (errno != EEXIST) return Unavailable("cannot create audit key " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Unavailable("cannot read audit key " + path + ": " + std::strerror(errno));
  if ((st.st_mode & 077) != 0) {
    std::ostringstream mode;
    mode << std::oct << (st.st_mode & 0777);
    return InvalidArgument("audit key " + path + " is open to others (mode " + mode.str() + "): chmod 600 it");
  }
  std::ifstream in(path);
  std::string key;
  std::getline(in, key);
  if (key.size() != 64 || !IsHex(key)) {
    return InvalidArgument("audit key " + path + ": expected 64 lower-case hex characters (32 bytes)");
  }
  return key;
}

Status CheckAnchorFilesAtStart(const std::string& key_path, const std::string& anchor_path, int64_t chain_seq,
                               bool* new_history) {
  *new_history = false;
  std::error_code ec;
  const bool key = std::filesystem::exists(key_path, ec);
  bool anchored = false;  // the anchor file holds at least one line
  if (std::ifstream in(anchor_path); in) {
    for (std::string line; !anchored && std::getline(in, line);) anchored = !line.empty();
  }
  const std::string restore = " (docs/operations.md, Backup and restore)";
  if (anchored && !key) {
    return FailedPrecondition("the audit key " + key_path + " is missing but " + anchor_path +
                              " holds anchors signed with it: put the audit.key of this data folder back" + restore +
                              "; a new key would leave every anchor unverifiable");
  }
  if (key && !anchored && chain_seq > 0) {
    return FailedPrecondition(
        "the audit anchor file " + anchor_path + " is missing or empty but the audit chain holds " +
        std::to_string(chain_seq) + " entries anchored before with " + key_path +
        ": put back the audit.anchors of the same backup as the database" + restore +
        "; to start a new anchor history on purpose, move " + key_path + " away as well");
  }
  *new_history = !key && !anchored && chain_seq > 0;
  return Status::OK();
}

std::string FormatAuditAnchor(const AuditHead& head, Time time, const std::string& key) {
  const int64_t time_us = ToMicros(time);
  nlohmann::json j = {{"seq", head.seq},
                      {"hash", head.hash},
                      {"time", FormatTime(time)},
                      {"timeUs", time_us},
                      {"mac", HmacSha256Hex(key, AnchorBytes(head.seq, head.hash, time_us))}};
  return j.dump() + "\n";
}

Result<std::unique_ptr<AuditAnchorWriter>> AuditAnchorWriter::Open(const std::string& path, std::string key) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot open audit anchor file " + path + ": " + std::strerror(errno));
  return std::unique_ptr<AuditAnchorWriter>(new AuditAnchorWriter(fd, path, std::move(key)));
}

AuditAnchorWriter::~AuditAnchorWriter() { ::close(fd_); }

Status AuditAnchorWriter::Publish(const AuditHead& head, Time time) {
  ABACUS_RETURN_IF_ERROR(WriteAll(fd_, FormatAuditAnchor(head, time, key_), path_));
  if (::fdatasync(fd_) != 0) return Unavailable("cannot sync " + path_ + ": " + std::strerror(errno));
  return Status::OK();
}

Result<AuditAnchorReport> CheckAuditAnchors(const std::string& path, const std::string& key,
                                            const std::vector<AuditEntry>& entries) {
  return CheckAuditAnchors(
      path, key, [&]() -> Result<int64_t> { return entries.empty() ? 0 : entries.back().seq; },
      [&](int64_t seq) -> Result<std::optional<AuditEntry>> {
        if (seq >= 1 && static_cast<size_t>(seq) <= entries.size() && entries[seq - 1].seq == seq) {
          return std::optional<AuditEntry>(entries[seq - 1]);
        }
        for (const AuditEntry& x : entries) {
          if (x.seq == seq) return std::optional<AuditEntry>(x);
        }
        return std::optional<AuditEntry>();
      });
}

Result<AuditAnchorReport> CheckAuditAnchors(const std::string& path, const std::string& key,
                                            const std::function<Result<int64_t>()>& newest_seq,
                                            const AuditEntryAt& entry_at) {
  AuditAnchorReport report;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Broken(report, 0, "the audit anchor file " + path + " is missing (the server writes it at start: deleted?)");
  }
  std::ifstream in(path);
  if (!in) return Unavailable("cannot read audit anchor file " + path + ": " + std::strerror(errno));
  // 1) Every anchor: well formed, signed with the key.
  std::vector<AuditAnchor> anchors;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_integer() || !j.contains("hash") ||
        !j["hash"].is_string() || !j.contains("timeUs") || !j["timeUs"].is_number_integer() || !j.contains("mac") ||
        !j["mac"].is_string()) {
      return Broken(report, 0, where + ": not an anchor line (the anchor file was edited)");
    }
    AuditAnchor a{j["seq"].get<int64_t>(), j["hash"].get<std::string>(), FromMicros(j["timeUs"].get<int64_t>()),
                  j["mac"].get<std::string>()};
    if (!ConstantTimeEqual(a.mac, HmacSha256Hex(key, AnchorBytes(a.seq, a.hash, ToMicros(a.time))))) {
      return Broken(report, a.seq,
                    where + ": anchor for seq " + std::to_string(a.seq) +
                        " is not signed with this server's audit key (the anchor file was forged, or the key replaced)");
    }
    anchors.push_back(std::move(a));
    ++report.anchors;
    report.anchored_seq = std::max(report.anchored_seq, anchors.back().seq);
  }
  // 2) The chain against each anchor: long enough, and the same hash at the anchored seq.
  ABACUS_ASSIGN_OR_RETURN(const int64_t last, newest_seq());
  for (const AuditAnchor& a : anchors) {
    if (a.seq > last) {
      return Broken(report, last + 1,
                    "the chain ends at seq " + std::to_string(last) + " but seq " + std::to_string(a.seq) +
                        " was anchored at " + FormatTime(a.time) + " (entries deleted, or the log replaced)");
    }
    if (a.seq == 0) continue;
    ABACUS_ASSIGN_OR_RETURN(const std::optional<AuditEntry> e, entry_at(a.seq));
    if (!e) {
      return Broken(report, a.seq, "seq " + std::to_string(a.seq) + " was anchored but is missing from the chain");
    }
    if (e->hash != a.hash) {
      return Broken(report, a.seq,
                    "seq " + std::to_string(a.seq) + ": hash differs from the one anchored at " + FormatTime(a.time) +
                        " (the chain was rewritten)");
    }
  }
  return report;
}

}  // namespace abacus::govern

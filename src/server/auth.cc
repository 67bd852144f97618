#include "server/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/log.h"
#include "common/mutex.h"
#include "govern/crypto.h"

namespace abacus::server {
namespace {

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<std::unique_ptr<TokenAuthorizer>> TokenAuthorizer::Open(Store& store, const std::string& data_dir) {
  auto auth = std::unique_ptr<TokenAuthorizer>(new TokenAuthorizer());
  auth->data_dir_ = data_dir;
  struct Spec {
    const char* file;
    const char* meta;
    Principal who;
  };
  const Spec specs[] = {{"admin.token", kAdminTokenMeta, {"admin", "admin"}},
                        {"join.token", "token.join.sha256", {"agent-join", "agent"}}};
  for (const Spec& s : specs) {
    std::string path = (std::filesystem::path(data_dir) / s.file).string();
    ABACUS_ASSIGN_OR_RETURN(auto stored, store.GetMeta(s.meta));
    std::string on_disk = ReadTrimmed(path);
    std::string hash;
    if (stored && !on_disk.empty() && govern::ConstantTimeEqual(govern::Sha256Hex(on_disk), *stored)) {
      hash = *stored;
    } else if (stored && on_disk.empty()) {
      // The file was removed after first start: keep the stored token (it may be in use).
      ABACUS_LOG_WARN("{} is missing; the {} token stays valid (delete token meta to rotate)", path, s.who.name);
      hash = *stored;
    } else {
      std::string token = govern::RandomHex(32);
      hash = govern::Sha256Hex(token);
      ABACUS_RETURN_IF_ERROR(store.Commit(WriteBatch().PutMeta(s.meta, hash)));
      ABACUS_RETURN_IF_ERROR(WritePrivateFile(path, token + "\n"));
      ABACUS_LOG_INFO("wrote {} (mode 0600)", path);
    }
    MutexLock lock(auth->hash_mu_);  // not shared yet: uncontended
    auth->by_hash_[hash] = s.who;
  }
  return auth;
}

Result<Principal> TokenAuthorizer::Authenticate(std::string_view bearer_token) const {
  if (bearer_token.empty()) return Unauthenticated("missing bearer token (Authorization: Bearer TOKEN)");
  std::string hash = govern::BearerSha256Hex(bearer_token);
  {
    MutexLock lock(hash_mu_);
    for (const auto& [h, who] : by_hash_) {
      if (govern::ConstantTimeEqual(h, hash)) return who;
    }
  }
  {
    MutexLock lock(nodes_mu_);
    if (auto it = node_by_hash_.find(hash); it != node_by_hash_.end()) return Principal{it->second, "node"};
  }
  return Unauthenticated("invalid token");
}

Status TokenAuthorizer::ReplaceAdminToken(const std::string& token) {
  {
    MutexLock lock(hash_mu_);
    for (auto it = by_hash_.begin(); it != by_hash_.end();) {
      it = it->second.role == "admin" ? by_hash_.erase(it) : std::next(it);
    }
    by_hash_[govern::Sha256Hex(token)] = Principal{"admin", "admin"};
  }
  std::string path = (std::filesystem::path(data_dir_) / "admin.token").string();
  ABACUS_RETURN_IF_ERROR(WritePrivateFile(path, token + "\n"));
  ABACUS_LOG_INFO("admin token rotated; wrote {} (mode 0600)", path);
  return Status::OK();
}

void TokenAuthorizer::SetNodeCredential(const std::string& node, const std::string& sha256) {
  MutexLock lock(nodes_mu_);
  for (auto it = node_by_hash_.begin(); it != node_by_hash_.end();) {
    it = it->second == node ? node_by_hash_.erase(it) : std::next(it);
  }
  if (!sha256.empty()) node_by_hash_[sha256] = node;
}

Status TokenAuthorizer::Authorize(const Principal& who, const AccessRequest& what) const {
  if (who.role == "admin") return Status::OK();
  // The join token only registers nodes; a node credential makes the other agent calls (the
  // handlers check that it speaks for its own node).
  if (who.role == "agent" && what.path == "/api/v1/agent/register") return Status::OK();
  if (who.role == "node" && what.path.rfind("/api/v1/agent/", 0) == 0 && what.path != "/api/v1/agent/register") {
    return Status::OK();
  }
  return PermissionDenied("role '" + who.role + "' may not " + what.method + " " + what.path);
}

}  // namespace abacus::server

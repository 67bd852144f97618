#include "agent/loop/secret_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;

bool SafeRelative(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string seg = path.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return path.find('\0') == std::string::npos;
}

// Makes every directory under `dir` writable by the owner again, so that it can be removed.
void Unlock(const fs::path& dir) {
  std::error_code ec;
  ::chmod(dir.c_str(), 0700);
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
  }
}

}  // namespace

std::string SecretsDir(const std::string& work_dir) { return work_dir + "/secrets"; }

Status WriteSecretFiles(const std::string& work_dir, const std::vector<SecretFile>& files,
                        const std::optional<TaskUser>& owner) {
  const fs::path root = SecretsDir(work_dir);
  std::error_code ec;
  if (fs::symlink_status(root, ec).type() != fs::file_type::not_found) {
    Unlock(root);
    fs::remove_all(root, ec);
    if (ec) return FailedPrecondition("cannot clear " + root.string() + ": " + ec.message());
  }
  if (files.empty()) return Status::OK();
  for (const SecretFile& f : files) {
    if (!SafeRelative(f.path)) return InvalidArgument("secret file path '" + f.path + "' is not a safe relative path");
  }
  std::set<fs::path> dirs = {root};
  for (const SecretFile& f : files) {
    fs::path file = root / f.path;
    for (fs::path d = file.parent_path(); d != root && d.string().size() > root.string().size(); d = d.parent_path()) {
      dirs.insert(d);
    }
    fs::create_directories(file.parent_path(), ec);
    if (ec) return FailedPrecondition("cannot create " + file.parent_path().string() + ": " + ec.message());
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
    if (fd < 0) return FailedPrecondition("cannot create secret file " + file.string() + ": " + std::strerror(errno));
    size_t done = 0;
    while (done < f.data.size()) {
      ssize_t n = ::write(fd, f.data.data() + done, f.data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = errno;
        ::close(fd);
        return FailedPrecondition("cannot write secret file " + file.string() + ": " + std::strerror(err));
      }
      done += static_cast<size_t>(n);
    }
    ::fchmod(fd, 0400);  // whatever the umask
    if (owner && ::fchown(fd, owner->uid, owner->gid) != 0) {
      int err = errno;
      ::close(fd);
      return FailedPrecondition("cannot give secret file " + file.string() + " to uid " + std::to_string(owner->uid) +
                                ": " + std::strerror(err));
    }
    ::close(fd);
  }
  // Deepest first, so that no directory is closed before its children are.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    if (owner && ::lchown(it->c_str(), owner->uid, owner->gid) != 0) {
      return FailedPrecondition("cannot give " + it->string() + " to uid " + std::to_string(owner->uid) + ": " +
                                std::strerror(errno));
    }
    if (::chmod(it->c_str(), 0500) != 0) {
      return FailedPrecondition("cannot set mode 0500 on " + it->string() + ": " + std::strerror(errno));
    }
  }
  return Status::OK();
}

Status RemoveSecretFiles(const std::string& work_dir) { return WriteSecretFiles(work_dir, {}); }

}  // namespace abacus::agent

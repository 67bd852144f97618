#include "govern/secret_box.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "govern/crypto.h"

namespace abacus::govern {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr std::string_view kVersion = "v1";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool DecodeHex(std::string_view hex, std::string& out) {
  if (hex.size() % 2 != 0) return false;
  out.clear();
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>((hi << 4) | lo);
  }
  return true;
}

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string ModeText(mode_t mode) {
  std::ostringstream out;
  out << std::oct << (mode & 0777);
  return out.str();
}

}  // namespace

std::string SecretKeyring::KeyId(std::string_view hex) {
  return Sha256Hex("abacus secret key id:" + std::string(hex)).substr(0, 16);
}

Result<SecretKeyring> SecretKeyring::FromHex(std::string_view active_hex) {
  SecretKeyring ring;
  std::string raw;
  if (active_hex.size() != kKeyBytes * 2 || !DecodeHex(active_hex, raw)) {
    return InvalidArgument("secrets key: expected 64 lower-case hex characters (32 bytes)");
  }
  ring.active_id_ = KeyId(active_hex);
  ring.keys_[ring.active_id_] = raw;
  return ring;
}

Status SecretKeyring::AddOld(std::string_view hex) {
  std::string raw;
  if (hex.size() != kKeyBytes * 2 || !DecodeHex(hex, raw)) {
    return InvalidArgument("old secrets key: expected 64 lower-case hex characters (32 bytes)");
  }
  keys_.emplace(KeyId(hex), raw);
  return Status::OK();
}

std::string SealSecret(const SecretKeyring& ring, std::string_view identity, std::string_view plaintext) {
  const std::string& key = ring.keys_.at(ring.active_id_);
  unsigned char nonce[kNonceBytes];
  if (RAND_bytes(nonce, sizeof nonce) != 1) {
    std::fprintf(stderr, "abacus: RAND_bytes failed\n");
    std::abort();
  }
  std::string out(reinterpret_cast<const char*>(nonce), kNonceBytes);
  out.resize(kNonceBytes + plaintext.size() + kTagBytes);
  auto* ct = reinterpret_cast<unsigned char*>(out.data()) + kNonceBytes;
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int len = 0, total = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.data()), nonce) == 1 &&
            EVP_EncryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(identity.data()),
                              static_cast<int>(identity.size())) == 1 &&
            EVP_EncryptUpdate(ctx.get(), ct, &len, reinterpret_cast<const unsigned char*>(plaintext.data()),
                              static_cast<int>(plaintext.size())) == 1;
  total = len;
  ok = ok && EVP_EncryptFinal_ex(ctx.get(), ct + total, &len) == 1;
  total += len;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, ct + total) == 1;
  if (!ok) {
    std::fprintf(stderr, "abacus: AES-256-GCM encryption failed\n");
    std::abort();  // a server that cannot seal must not store anything in its place
  }
  return std::string(kVersion) + "." + ring.active_id_ + "." + ToHex(out);
}

std::string SealedKeyId(std::string_view sealed) {
  if (sealed.substr(0, kVersion.size() + 1) != std::string(kVersion) + ".") return "";
  std::string_view rest = sealed.substr(kVersion.size() + 1);
  size_t dot = rest.find('.');
  return dot == std::string_view::npos ? "" : std::string(rest.substr(0, dot));
}

Result<std::string> OpenSecret(const SecretKeyring& ring, std::string_view identity, std::string_view sealed) {
  const std::string id = SealedKeyId(sealed);
  if (id.empty()) return Internal("secret value of " + std::string(identity) + " is not a sealed value");
  auto key = ring.keys_.find(id);
  if (key == ring.keys_.end()) {
    return FailedPrecondition("secret value of " + std::string(identity) + " was sealed with key " + id +
                              ", which is not in the keyring: add the old key to the keyring file "
                              "(--secrets-keyring) and restart");
  }
  std::string raw;
  std::string_view hex = sealed.substr(kVersion.size() + 1 + id.size() + 1);
  if (!DecodeHex(hex, raw) || raw.size() < kNonceBytes + kTagBytes) {
    return Internal("secret value of " + std::string(identity) + " is damaged");
  }
  const auto* nonce = reinterpret_cast<const unsigned char*>(raw.data());
  const size_t n = raw.size() - kNonceBytes - kTagBytes;
  const auto* ct = nonce + kNonceBytes;
  std::string tag = raw.substr(kNonceBytes + n);
  std::string out(n, '\0');
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int len = 0;
  bool ok = ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key->second.data()),
                               nonce) == 1 &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(identity.data()),
                              static_cast<int>(identity.size())) == 1 &&
            EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len, ct, static_cast<int>(n)) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1;
  int final_len = 0;
  ok = ok && EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + len, &final_len) == 1;
  if (!ok) {
    return Internal("secret value of " + std::string(identity) +
                    " does not authenticate: altered, or sealed for another secret or key");
  }
  return out;
}

Result<SecretKeyring> LoadOrCreateSecretKeyring(const std::string& key_file, const std::string& keyring_file) {
  std::string active;
  int fd = ::open(key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    active = RandomHex(kKeyBytes);
    std::string line = active + "\n";
    bool wrote = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
    int err = errno;
    ::close(fd);
    if (!wrote) return Unavailable("cannot write secrets key " + key_file + ": " + std::strerror(err));
  } else {
    if (errno != EEXIST) return Unavailable("cannot create secrets key " + key_file + ": " + std::strerror(errno));
    struct stat st {};
    if (::stat(key_file.c_str(), &st) != 0) {
      return Unavailable("cannot read secrets key " + key_file + ": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
      return InvalidArgument("secrets key " + key_file + " is not a file: put the key file (one line of 64 hex) there");
    }
    if ((st.st_mode & 077) != 0) {
      return InvalidArgument("secrets key " + key_file + " is open to others (mode " + ModeText(st.st_mode) +
                             "): chmod 600 it");
    }
    std::ifstream in(key_file);
    std::getline(in, active);
  }
  auto ring = SecretKeyring::FromHex(active);
  if (!ring.ok()) return InvalidArgument(key_file + ": " + ring.status().message());
  if (keyring_file.empty()) return ring;
  std::ifstream in(keyring_file);
  if (!in) return ring;  // no older keys
  struct stat st {};
  if (::stat(keyring_file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return InvalidArgument("secrets keyring " + keyring_file + " is open to others (mode " + ModeText(st.st_mode) +
                           "): chmod 600 it");
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    size_t end = line.find_last_not_of(" \t\r");
    line = end == std::string::npos ? "" : line.substr(0, end + 1);
    if (line.empty() || line[0] == '#') continue;
    if (Status st = ring->AddOld(line); !st.ok()) {
      return InvalidArgument(keyring_file + ":" + std::to_string(n) + ": " + st.message());
    }
  }
  return ring;
}

}  // namespace abacus::govern

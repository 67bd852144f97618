// Secret values at rest (issue 24): AES-256-GCM under a key the server keeps outside the store,
// a random 96-bit nonce per value and the value's identity as associated data, so that a
// ciphertext moved to another secret, key or version no longer opens.
//
// A sealed value is text: "v1.<key id>.<hex(nonce ‖ ciphertext ‖ tag)>". The key id (16 hex, from
// the key's SHA-256) names the key that sealed it, so that after a rotation the old keys listed in
// the keyring file still open what they sealed (docs/governance.md, "Secrets").
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::govern {

// The active key (new values are sealed with it) and the older keys that still open values.
class SecretKeyring {
 public:
  // A keyring of one active key: 64 lower-case hex characters (32 bytes).
  static Result<SecretKeyring> FromHex(std::string_view active_hex);
  // Adds an older key (64 hex) that opens values but seals none; the active key stays active.
  Status AddOld(std::string_view hex);
  // The id of the active key.
  const std::string& active_id() const { return active_id_; }
  // True when a key with `id` is in the keyring.
  bool Has(const std::string& id) const { return keys_.count(id) != 0; }
  // The 16-hex id of a key given as 64 hex.
  static std::string KeyId(std::string_view hex);

 private:
  friend std::string SealSecret(const SecretKeyring&, std::string_view, std::string_view);
  friend Result<std::string> OpenSecret(const SecretKeyring&, std::string_view, std::string_view);
  std::string active_id_;
  std::map<std::string, std::string> keys_;  // id → 32 raw bytes
};

// Seals `plaintext` with the active key, bound to `identity` (tenant/project/name/version/key).
std::string SealSecret(const SecretKeyring& ring, std::string_view identity, std::string_view plaintext);
// Opens a sealed value for `identity`: FailedPrecondition when its key is not in the keyring,
// Internal when it was altered, sealed for another identity or under another key with that id.
// The messages never hold the value.
Result<std::string> OpenSecret(const SecretKeyring& ring, std::string_view identity, std::string_view sealed);
// The key id a sealed value names ("" when it is not a sealed value).
std::string SealedKeyId(std::string_view sealed);

// Reads the active key from `key_file` (created with a fresh random key, mode 0600, when
// missing; refused when open to others) and the older keys from `keyring_file` (one 64-hex key a
// line, '#' comments; skipped when missing or empty name).
Result<SecretKeyring> LoadOrCreateSecretKeyring(const std::string& key_file, const std::string& keyring_file);

}  // namespace abacus::govern

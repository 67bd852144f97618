#include "govern/secret_box.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "govern/crypto.h"

namespace abacus::govern {
namespace {

const std::string kKeyA = std::string(64, 'a');
const std::string kKeyB = std::string(64, 'b');
constexpr std::string_view kId = "nlp/llm/db-creds/1/password";

SecretKeyring Ring(const std::string& hex) { return SecretKeyring::FromHex(hex).value(); }

TEST(SecretBoxTest, RoundTripWithoutThePlaintextInTheSealedText) {
  SecretKeyring ring = Ring(kKeyA);
  std::string sealed = SealSecret(ring, kId, "hunter2-canary");
  EXPECT_EQ(sealed.find("hunter2"), std::string::npos);
  EXPECT_EQ(SealedKeyId(sealed), ring.active_id());
  EXPECT_EQ(OpenSecret(ring, kId, sealed).value(), "hunter2-canary");
  EXPECT_EQ(OpenSecret(ring, kId, SealSecret(ring, kId, "")).value(), "");
  // A fresh nonce each time: the same value never seals to the same text.
  EXPECT_NE(SealSecret(ring, kId, "x"), SealSecret(ring, kId, "x"));
}

TEST(SecretBoxTest, TamperingIsDetected) {
  SecretKeyring ring = Ring(kKeyA);
  std::string sealed = SealSecret(ring, kId, "hunter2-canary");
  for (size_t at : {sealed.size() - 1, sealed.size() - 40, sealed.find('.', 3) + 1}) {
    std::string bad = sealed;
    bad[at] = bad[at] == '0' ? '1' : '0';
    auto r = OpenSecret(ring, kId, bad);
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos);
  }
  EXPECT_FALSE(OpenSecret(ring, kId, sealed.substr(0, sealed.size() - 2)).ok());
  EXPECT_FALSE(OpenSecret(ring, kId, "plain text").ok());
}

TEST(SecretBoxTest, AValueMovedToAnotherIdentityDoesNotOpen) {
  SecretKeyring ring = Ring(kKeyA);
  std::string sealed = SealSecret(ring, kId, "v");
  auto r = OpenSecret(ring, "vision/cv/db-creds/1/password", sealed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not authenticate"), std::string::npos);
  EXPECT_FALSE(OpenSecret(ring, "nlp/llm/db-creds/2/password", sealed).ok());
}

TEST(SecretBoxTest, WrongKeyIsRefused) {
  std::string sealed = SealSecret(Ring(kKeyA), kId, "v");
  auto r = OpenSecret(Ring(kKeyB), kId, sealed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("not in the keyring"), std::string::npos);
}

TEST(SecretBoxTest, RotationOldKeysStillOpenNewValuesUseTheNewKey) {
  std::string old_sealed = SealSecret(Ring(kKeyA), kId, "old");
  SecretKeyring rotated = Ring(kKeyB);
  ASSERT_TRUE(rotated.AddOld(kKeyA).ok());
  EXPECT_EQ(OpenSecret(rotated, kId, old_sealed).value(), "old");
  std::string resealed = SealSecret(rotated, kId, OpenSecret(rotated, kId, old_sealed).value());
  EXPECT_EQ(SealedKeyId(resealed), SecretKeyring::KeyId(kKeyB));
  EXPECT_EQ(OpenSecret(Ring(kKeyB), kId, resealed).value(), "old");
  EXPECT_FALSE(rotated.AddOld("zz").ok());
}

TEST(SecretBoxTest, KeyFileIsCreatedPrivateAndOldKeysComeFromTheKeyring) {
  auto dir = std::filesystem::temp_directory_path() / ("secret_box_test_" + RandomHex(6));
  std::filesystem::create_directories(dir);
  const std::string key = (dir / "secrets.key").string(), ring_file = (dir / "secrets.keyring").string();
  auto first = LoadOrCreateSecretKeyring(key, ring_file);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateSecretKeyring(key, ring_file);
  EXPECT_EQ(again->active_id(), first->active_id());
  {
    std::ofstream out(ring_file);
    out << "# retired 2026-01\n" << kKeyA << "\n";
  }
  ::chmod(ring_file.c_str(), 0600);
  auto with_old = LoadOrCreateSecretKeyring(key, ring_file);
  ASSERT_TRUE(with_old.ok()) << with_old.status().ToString();
  EXPECT_TRUE(with_old->Has(SecretKeyring::KeyId(kKeyA)));
  ::chmod(key.c_str(), 0644);
  auto open = LoadOrCreateSecretKeyring(key, ring_file);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace abacus::govern

#include "govern/audit_anchor.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace abacus::govern {
namespace {

class AuditAnchorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/abacus-anchor-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto key = LoadOrCreateAuditKey(dir_ + "/audit.key");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    key_ = *key;
    anchors_ = dir_ + "/audit.anchors";
    AuditChain chain(clock_);
    for (int i = 0; i < 6; ++i) {
      AuditRecord r;
      r.actor = "user max";
      r.action = "create";
      r.object_name = "p/w" + std::to_string(i);
      chain_.push_back(chain.Append(r));
      clock_.Advance(std::chrono::seconds(1));
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Anchor(size_t upto) {
    auto w = AuditAnchorWriter::Open(anchors_, key_);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    AuditHead head = upto == 0 ? AuditHead{0, GenesisHash()} : AuditHead{chain_[upto - 1].seq, chain_[upto - 1].hash};
    ASSERT_TRUE((*w)->Publish(head, clock_.Now()).ok());
  }
  AuditAnchorReport Check(const std::vector<AuditEntry>& entries) {
    auto r = CheckAuditAnchors(anchors_, key_, entries);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : AuditAnchorReport{};
  }

  ManualClock clock_;
  std::string dir_, key_, anchors_;
  std::vector<AuditEntry> chain_;
};

TEST_F(AuditAnchorTest, TheKeyIsCreatedPrivateAndReadBack) {
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/audit.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateAuditKey(dir_ + "/audit.key");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, key_);
  chmod((dir_ + "/audit.key").c_str(), 0644);
  EXPECT_EQ(LoadOrCreateAuditKey(dir_ + "/audit.key").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(AuditAnchorTest, AnIntactChainMatchesEveryAnchor) {
  Anchor(0);
  Anchor(3);
  Anchor(6);
  auto r = Check(chain_);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.anchors, 3);
  EXPECT_EQ(r.anchored_seq, 6);
}

// Issue 20, point 21: a rewrite of the whole chain, re-hashed, passes the chain check alone.
TEST_F(AuditAnchorTest, AFullRewriteWithARehashedChainIsDetected) {
  Anchor(4);
  std::vector<AuditEntry> forged = chain_;
  std::string prev = GenesisHash();
  for (auto& e : forged) {
    e.record.actor = "user eve";
    e.prev_hash = prev;
    e.hash = ComputeAuditHash(e);
    prev = e.hash;
  }
  ASSERT_TRUE(VerifyAudit(forged, AuditHead{6, forged.back().hash}).ok);  // the chain alone: fine
  auto r = Check(forged);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 4);
  EXPECT_NE(r.reason.find("rewritten"), std::string::npos) << r.reason;
}

TEST_F(AuditAnchorTest, DeletingEveryEntryIsDetected) {
  Anchor(5);
  auto r = Check({});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("the chain ends at seq 0 but seq 5 was anchored"), std::string::npos) << r.reason;
  // Newest entries removed below the anchor, too.
  r = Check(std::vector<AuditEntry>(chain_.begin(), chain_.begin() + 3));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 4);
}

TEST_F(AuditAnchorTest, AForgedOrEditedAnchorIsDetected) {
  Anchor(6);
  std::ofstream(anchors_, std::ios::app) << FormatAuditAnchor({6, chain_[5].hash}, clock_.Now(), std::string(64, 'a'));
  auto r = Check(chain_);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("not signed with this server's audit key"), std::string::npos) << r.reason;
}

TEST_F(AuditAnchorTest, AMissingAnchorFileIsReported) {
  auto r = Check(chain_);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("missing"), std::string::npos) << r.reason;
}

// The fifth probe: a server started without audit.anchors (deleted, or a restore that left it
// out) wrote a fresh file anchoring the chain as it found it, and `abacus audit --verify` passed
// on a rolled-back database; one started without audit.key made a new key and appended anchors
// under it, leaving the history unverifiable for good. Both now refuse to start.
TEST_F(AuditAnchorTest, AStartWithTheAnchorsOrTheKeyGoneIsRefusedNamingWhatToPutBack) {
  Anchor(6);
  bool new_history = true;
  const std::string key = dir_ + "/audit.key";
  EXPECT_TRUE(CheckAnchorFilesAtStart(key, anchors_, 6, &new_history).ok());  // both there
  EXPECT_FALSE(new_history);
  // The anchors gone, or emptied, while the key is there and the chain holds entries.
  std::filesystem::rename(anchors_, anchors_ + ".gone");
  Status gone = CheckAnchorFilesAtStart(key, anchors_, 6, &new_history);
  EXPECT_EQ(gone.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(gone.message().find("audit anchor file " + anchors_ + " is missing"), std::string::npos) << gone.ToString();
  EXPECT_NE(gone.message().find("put back the audit.anchors of the same backup"), std::string::npos);
  std::ofstream(anchors_).close();
  EXPECT_EQ(CheckAnchorFilesAtStart(key, anchors_, 6, &new_history).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(CheckAnchorFilesAtStart(key, anchors_, 0, &new_history).ok());  // an empty chain: nothing anchored
  std::filesystem::rename(anchors_ + ".gone", anchors_);
  // The key gone while anchors signed with it are there.
  std::filesystem::rename(key, key + ".gone");
  Status no_key = CheckAnchorFilesAtStart(key, anchors_, 6, &new_history);
  EXPECT_EQ(no_key.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_key.message().find("audit key " + key + " is missing"), std::string::npos) << no_key.ToString();
  // Neither: a new anchor history (a new HA server's folder, or both moved away on purpose).
  std::filesystem::remove(anchors_);
  ASSERT_TRUE(CheckAnchorFilesAtStart(key, anchors_, 6, &new_history).ok());
  EXPECT_TRUE(new_history);
  ASSERT_TRUE(CheckAnchorFilesAtStart(key, anchors_, 0, &new_history).ok());  // a new data folder
  EXPECT_FALSE(new_history);
}

}  // namespace
}  // namespace abacus::govern

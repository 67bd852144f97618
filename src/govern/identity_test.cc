#include "govern/identity.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "govern/crypto.h"
#include "store/store.h"

namespace abacus::govern {
namespace {

UserSpec Alice() {
  UserSpec u;
  u.name = "alice";
  RoleBinding b;
  b.role = Role::kMember;
  b.project = "nlp/llm";
  u.roles.push_back(b);
  return u;
}

TEST(CryptoTest, Sha256KnownAnswerRandomnessAndCompare) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    std::string r = RandomHex(32);
    EXPECT_EQ(r.size(), 64u);
    EXPECT_TRUE(seen.insert(r).second);
  }
  EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abcd"));
}

// The per-thread memo of the last bearer token never answers for another token.
TEST(CryptoTest, BearerHashIsTheTokensOwnWhateverCameBefore) {
  for (const char* token : {"abc", "abc", "abd", "", "abc", "a-much-longer-token-of-64-characters-0123456789abcdef0123456789"}) {
    EXPECT_EQ(BearerSha256Hex(token), Sha256Hex(token)) << token;
  }
  std::string other_thread;
  std::thread([&] { other_thread = BearerSha256Hex("abd"); }).join();
  EXPECT_EQ(other_thread, Sha256Hex("abd"));
  EXPECT_EQ(BearerSha256Hex("abc"), Sha256Hex("abc"));
}

TEST(TokenRegistryTest, IssuedTokenAuthenticatesAndIsStoredOnlyAsHash) {
  ManualClock clock;
  TokenRegistry reg(clock);
  ASSERT_TRUE(reg.PutUser(Alice()).ok());
  auto issued = reg.IssueToken("alice", "laptop");
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(issued->secret.size(), 64u);  // 256 bits in hex
  EXPECT_EQ(issued->record.hash, Sha256Hex(issued->secret));
  EXPECT_EQ(issued->record.id.rfind("tok-", 0), 0u);
  std::string stored = TokenRecordToJson(issued->record).dump();
  EXPECT_EQ(stored.find(issued->secret), std::string::npos);

  clock.Advance(std::chrono::seconds(5));
  auto who = reg.Authenticate(issued->secret);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->name, "alice");
  EXPECT_EQ(who->kind, Principal::Kind::kUser);
  EXPECT_EQ(who->token_id, issued->record.id);
  EXPECT_TRUE(who->HasRole(Role::kMember));
  EXPECT_EQ(reg.FindToken(issued->record.id)->last_used, clock.Now());
  EXPECT_EQ(who->ToString(), "user alice (member of nlp/llm)");
}

TEST(TokenRegistryTest, RejectsUnknownEmptyExpiredRevokedAndDisabled) {
  ManualClock clock;
  TokenRegistry reg(clock);
  ASSERT_TRUE(reg.PutUser(Alice()).ok());
  EXPECT_EQ(reg.Authenticate("").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(reg.Authenticate(std::string(64, 'a')).status().message(), "invalid token");

  auto shortlived = reg.IssueToken("alice", "ci", std::chrono::hours(1));
  ASSERT_TRUE(shortlived.ok());
  clock.Advance(std::chrono::minutes(59));
  EXPECT_TRUE(reg.Authenticate(shortlived->secret).ok());
  clock.Advance(std::chrono::minutes(1));
  auto expired = reg.Authenticate(shortlived->secret);
  EXPECT_EQ(expired.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(expired.status().message().find("expired"), std::string::npos);

  auto t = reg.IssueToken("alice", "laptop");
  ASSERT_TRUE(t.ok());
  auto revoked = reg.Revoke(t->record.id);
  ASSERT_TRUE(revoked.ok());
  EXPECT_TRUE(revoked->revoked.has_value());
  EXPECT_NE(reg.Authenticate(t->secret).status().message().find("revoked"), std::string::npos);
  EXPECT_EQ(reg.Revoke("tok-missing").status().code(), StatusCode::kNotFound);

  auto t2 = reg.IssueToken("alice", "second");
  ASSERT_TRUE(t2.ok());
  UserSpec disabled = Alice();
  disabled.disabled = true;
  ASSERT_TRUE(reg.PutUser(disabled).ok());
  EXPECT_EQ(reg.Authenticate(t2->secret).status().message(), "user alice is disabled");

  EXPECT_EQ(reg.IssueToken("nobody", "x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(reg.IssueToken("alice", "x", std::chrono::seconds(0)).status().code(), StatusCode::kInvalidArgument);
}

TEST(TokenRegistryTest, RemovingAUserRevokesItsTokens) {
  ManualClock clock;
  TokenRegistry reg(clock);
  ASSERT_TRUE(reg.PutUser(Alice()).ok());
  auto t = reg.IssueToken("alice", "laptop");
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(reg.RemoveUser("alice").ok());
  EXPECT_FALSE(reg.Authenticate(t->secret).ok());
  EXPECT_TRUE(reg.FindToken(t->record.id)->revoked.has_value());
  EXPECT_EQ(reg.RemoveUser("alice").code(), StatusCode::kNotFound);
}

TEST(TokenRegistryTest, NodeCredentialIsAnAgentOfThatNodeOnly) {
  ManualClock clock;
  TokenRegistry reg(clock);
  auto cred = reg.IssueNodeCredential("gpu-01");
  ASSERT_TRUE(cred.ok());
  EXPECT_TRUE(cred->record.agent);
  auto who = reg.Authenticate(cred->secret);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->kind, Principal::Kind::kAgent);
  ASSERT_EQ(who->roles.size(), 1u);
  EXPECT_EQ(who->roles[0].role, Role::kAgent);
  EXPECT_EQ(who->roles[0].node, "gpu-01");
  EXPECT_EQ(who->ToString(), "agent of node gpu-01");
  EXPECT_FALSE(reg.IssueNodeCredential("Bad Node!").ok());
}

TEST(TokenRegistryTest, UsersWithBadBindingsOrAgentRolesAreRefused) {
  ManualClock clock;
  TokenRegistry reg(clock);
  UserSpec u = Alice();
  u.roles[0].project = "not-a-project";
  EXPECT_EQ(reg.PutUser(u).code(), StatusCode::kInvalidArgument);
  u = Alice();
  u.roles[0] = RoleBinding{Role::kAgent, "", "", "gpu-01"};
  EXPECT_EQ(reg.PutUser(u).code(), StatusCode::kInvalidArgument);
}

TEST(TokenRegistryTest, DirtyTokensReportLastUseOnce) {
  ManualClock clock;
  TokenRegistry reg(clock);
  ASSERT_TRUE(reg.PutUser(Alice()).ok());
  auto t = reg.IssueToken("alice", "laptop");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(reg.TakeDirtyTokens().empty());
  ASSERT_TRUE(reg.Authenticate(t->secret).ok());
  ASSERT_TRUE(reg.Authenticate(t->secret).ok());
  auto dirty = reg.TakeDirtyTokens();
  ASSERT_EQ(dirty.size(), 1u);
  EXPECT_EQ(dirty[0].last_used, clock.Now());
  EXPECT_TRUE(reg.TakeDirtyTokens().empty());
}

TEST(TokenRegistryTest, PersistsThroughTheStore) {
  ManualClock clock;
  auto store = OpenStore("memory://", {&clock});
  ASSERT_TRUE(store.ok());
  TokenRegistry reg(clock);
  ASSERT_TRUE(reg.PutUser(Alice()).ok());
  auto t = reg.IssueToken("alice", "laptop", std::chrono::hours(24));
  ASSERT_TRUE(t.ok());
  auto node = reg.IssueNodeCredential("gpu-01");
  ASSERT_TRUE(node.ok());
  WriteBatch batch;
  StagePutUser(batch, *reg.FindUser("alice"));
  StagePutToken(batch, t->record);
  StagePutToken(batch, node->record);
  ASSERT_TRUE((*store)->Commit(batch).ok());

  TokenRegistry restored(clock);
  ASSERT_TRUE(restored.LoadFrom(**store).ok());
  EXPECT_EQ(restored.FindUser("alice"), reg.FindUser("alice"));
  EXPECT_EQ(restored.Tokens(), reg.Tokens());
  EXPECT_EQ(restored.Tokens("alice").size(), 1u);
  EXPECT_TRUE(restored.Authenticate(t->secret).ok());
  EXPECT_TRUE(restored.Authenticate(node->secret).ok());
}

TEST(TokenRegistryTest, TokenRecordJsonRoundTripsAndRejectsMalformed) {
  TokenRecord t;
  t.id = "tok-1";
  t.hash = std::string(64, 'f');
  t.owner = "alice";
  t.created = FromMicros(1000);
  t.expires = FromMicros(2000);
  t.last_used = FromMicros(1500);
  auto back = TokenRecordFromJson(TokenRecordToJson(t));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, t);
  auto j = TokenRecordToJson(t);
  j["sha256"] = "short";
  EXPECT_FALSE(TokenRecordFromJson(j).ok());
  EXPECT_FALSE(TokenRecordFromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace abacus::govern

// The request context passed down explicitly (issue 22, request_context.h): a write made for a
// request on a thread that serves no HTTP request commits the request's audit entry with its
// change, on the caller's thread or on the loop, and what the core learns about the request
// (its object, a replayed key, an entry committed) lands in the context it was given.
#include "server/request_context.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "govern/audit.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// An audited request of the admin, as the pre-routing handler leaves it.
RequestContext AdminRequest(const std::string& id, const std::string& action) {
  RoleBinding admin;
  admin.role = Role::kAdmin;
  RequestContext ctx;
  ctx.active = true;
  ctx.caller.via = Caller::Via::kAdminToken;
  ctx.caller.principal = govern::Principal::User("admin", {admin});
  ctx.request_id = id;
  ctx.audit = true;
  ctx.action = action;
  return ctx;
}

class RequestContextTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(testing_org::AcmeOrg("train", 2));
  }
  // The chain's entries of request `id`.
  std::vector<govern::AuditRecord> EntriesOf(const std::string& id) {
    auto entries = cp_->governance().ReadAudit({});
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    std::vector<govern::AuditRecord> out;
    if (!entries.ok()) return out;
    for (const auto& e : *entries) {
      if (e.record.request_id == id) out.push_back(e.record);
    }
    return out;
  }
  // Stores a stray entry at the chain's next seq: every audited commit fails from now on.
  void BreakTheChain() {
    cp_->governance().FlushAudit();
    WriteBatch stray;
    stray.AppendJournalJson(std::string(govern::AuditLog::kStream), json{{"stray", true}}, clock_.Now());
    ASSERT_TRUE(cp_->store().Commit(stray).ok());
  }
};

// Submit on this (non-HTTP) thread: the entry is in the chain when Submit returns (no flush: it
// was committed with the workload), and the context says so and names the workload.
TEST_F(RequestContextTest, SubmitCommitsTheEntryOfTheRequestItIsGivenWithTheWorkload) {
  RequestContext ctx = AdminRequest("req-submit-1", "post");
  auto r = cp_->Submit(testing_cp::A100Job("explicit", 1), false, "job.yaml", &ctx.caller.principal, {}, false, &ctx);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string id = r->answer.submitted[0].id;
  EXPECT_TRUE(ctx.audited);
  EXPECT_EQ(ctx.object_kind, "workload");
  EXPECT_EQ(ctx.object_name, "acme/ml/explicit");
  EXPECT_EQ(ctx.tenant, "acme");
  std::vector<govern::AuditRecord> entries = EntriesOf("req-submit-1");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].actor, "user admin");
  EXPECT_EQ(entries[0].object_name, "acme/ml/explicit");
  EXPECT_NE(entries[0].after.find(id), std::string::npos) << entries[0].after;
  EXPECT_EQ(entries[0].result, "ok");
}

// Cancel runs on the loop: the request's pending entry travels with the command and the
// cancel's commit claims it (its "after" is what the batch wrote).
TEST_F(RequestContextTest, ALoopCommandCommitsTheEntryItWasGivenWithItsChange) {
  const std::string id = SubmitYaml(testing_cp::A100Job("doomed", 1));
  RequestContext ctx = AdminRequest("req-cancel-1", "cancel");
  ctx.object_kind = "workload";
  ctx.object_name = id;
  auto r = cp_->Cancel(id, "test", {}, &ctx);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(State(id), "Cancelled");
  ASSERT_NE(ctx.pending, nullptr);
  EXPECT_TRUE(ctx.pending->committed.load());
  std::vector<govern::AuditRecord> entries = EntriesOf("req-cancel-1");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].action, "cancel");
  EXPECT_NE(entries[0].after.find("put workload/" + id), std::string::npos) << entries[0].after;
}

// A failed commit frees the claim for the post-routing handler, and the change is not made.
TEST_F(RequestContextTest, AFailedCommitLeavesTheEntryUnclaimed) {
  const std::string id = SubmitYaml(testing_cp::A100Job("kept", 1));
  BreakTheChain();
  RequestContext ctx = AdminRequest("req-cancel-2", "cancel");
  auto r = cp_->Cancel(id, "test", {}, &ctx);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(State(id), "Cancelled");
  ASSERT_NE(ctx.pending, nullptr);
  EXPECT_FALSE(ctx.pending->claimed.load());
  EXPECT_FALSE(ctx.pending->committed.load());
}

// A keyed repeat is noted in the context it was given, and commits nothing.
TEST_F(RequestContextTest, AReplayIsNotedInTheContextOfTheRepeat) {
  const std::string id = SubmitYaml(testing_cp::A100Job("twice", 1));
  IdempotentRequest keyed{"admin", "key-1", "POST /api/v1/workloads/" + id + "/cancel", "digest"};
  RequestContext first = AdminRequest("req-first", "cancel");
  ASSERT_TRUE(cp_->Cancel(id, "", keyed, &first).ok());
  EXPECT_TRUE(first.replayed_key.empty());
  RequestContext again = AdminRequest("req-again", "cancel");
  ASSERT_TRUE(cp_->Cancel(id, "", keyed, &again).ok());
  EXPECT_EQ(again.replayed_key, "key-1");
  EXPECT_TRUE(EntriesOf("req-again").empty());  // the post-routing handler writes its note
}

// No context (the loop's own writes, tests, the bench): no request entry, nothing noted.
TEST_F(RequestContextTest, WithoutAContextNoRequestEntryIsWritten) {
  auto r = cp_->Submit(testing_cp::A100Job("plain", 1), false, "job.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  cp_->governance().FlushAudit();
  auto entries = cp_->governance().ReadAudit({});
  ASSERT_TRUE(entries.ok());
  for (const auto& e : *entries) EXPECT_TRUE(e.record.request_id.empty()) << e.record.action;
}

// Governance writes (a token issued) commit with the entry of the context they are given.
TEST_F(RequestContextTest, AGovernanceWriteCommitsTheEntryOfTheContextItIsGiven) {
  ApplyOrg("kind: User\nname: alice\nroles: [{role: viewer}]\n");
  RequestContext ctx = AdminRequest("req-token-1", "post");
  auto issued = cp_->governance().IssueToken(ctx.caller.principal, "alice", "laptop", std::nullopt, &ctx);
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(ctx.object_kind, "token");
  EXPECT_EQ(ctx.object_name, issued->token.record.id);
  ASSERT_NE(ctx.pending, nullptr);
  EXPECT_TRUE(ctx.pending->committed.load());
  std::vector<govern::AuditRecord> entries = EntriesOf("req-token-1");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].object_kind, "token");
}

}  // namespace
}  // namespace abacus::server

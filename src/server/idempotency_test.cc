#include "server/idempotency.h"

#include <gtest/gtest.h>

#include "govern/crypto.h"
#include "store/memory_store.h"

namespace abacus::server {
namespace {

using nlohmann::json;

class IdempotentWriteTest : public ::testing::Test {
 protected:
  IdempotentRequest Request(const std::string& route, const std::string& body, const std::string& key = "k-1",
                            const std::string& user = "alice") {
    return DescribeRequest(user, key, "POST", route, {}, body);
  }
  // Checks `request` and, when new, commits `answer` under its key as a change would.
  Result<json> Write(const IdempotentRequest& request, const json& answer) {
    IdempotentWrite keyed(store_, request, kIdempotencyTtl);
    ABACUS_ASSIGN_OR_RETURN(bool repeat, keyed.Check(clock_.Now()));
    if (repeat) return keyed.first_answer();
    WriteBatch batch;
    keyed.Stage(batch, [&] { return answer; }, clock_.Now());
    ABACUS_RETURN_IF_ERROR(store_.Commit(batch));
    return answer;
  }

  ManualClock clock_;
  InMemoryStore store_{clock_};
};

TEST(DescribeRequestTest, TheDigestIsTheBodyAloneWithoutAQueryAndCoversTheQueryInAnyOrder) {
  IdempotentRequest plain = DescribeRequest("alice", "k", "POST", "/api/v1/apply", {}, "body");
  EXPECT_EQ(plain.route, "POST /api/v1/apply");
  EXPECT_EQ(plain.digest, govern::Sha256Hex("body"));
  IdempotentRequest ab = DescribeRequest("alice", "k", "POST", "/p", {{"a", "1"}, {"b", "2"}}, "body");
  IdempotentRequest ba = DescribeRequest("alice", "k", "POST", "/p", {{"b", "2"}, {"a", "1"}}, "body");
  IdempotentRequest other = DescribeRequest("alice", "k", "POST", "/p", {{"a", "1"}, {"b", "3"}}, "body");
  EXPECT_EQ(ab.digest, ba.digest);
  EXPECT_NE(ab.digest, other.digest);
  EXPECT_NE(ab.digest, plain.digest);
  EXPECT_FALSE(DescribeRequest("alice", "", "POST", "/p", {}, "").keyed());
}

TEST_F(IdempotentWriteTest, ARepeatGetsTheFirstAnswerAndAnotherBodyOrRouteIsRefusedNamingTheKey) {
  json created = json::array({{{"kind", "Queue"}, {"name", "q"}, {"action", "created"}}});
  ASSERT_EQ(*Write(Request("/api/v1/apply", "q1"), created), created);
  // The second apply would be "unchanged": the repeat answers "created".
  auto again = Write(Request("/api/v1/apply", "q1"), json::array({{{"action", "unchanged"}}}));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, created);

  auto body = Write(Request("/api/v1/apply", "q2"), created);
  EXPECT_EQ(body.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(body.status().message().find("Idempotency-Key 'k-1'"), std::string::npos);
  EXPECT_NE(body.status().message().find("different request body"), std::string::npos);
  auto route = Write(Request("/api/v1/workloads/w/cancel", "q1"), created);
  EXPECT_EQ(route.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(route.status().message().find("for POST /api/v1/apply, not POST /api/v1/workloads/w/cancel"),
            std::string::npos)
      << route.status().message();
  // Keys are per user.
  json bobs = json::array({{{"action", "configured"}}});
  EXPECT_EQ(*Write(Request("/api/v1/apply", "q2", "k-1", "bob"), bobs), bobs);
}

TEST_F(IdempotentWriteTest, AnUnkeyedRequestPassesThroughAndAMalformedKeyIsInvalid) {
  IdempotentWrite unkeyed(store_, IdempotentRequest{}, kIdempotencyTtl);
  auto checked = unkeyed.Check(clock_.Now());
  ASSERT_TRUE(checked.ok());
  EXPECT_FALSE(*checked);
  WriteBatch batch;
  bool encoded = false;
  unkeyed.Stage(batch, [&] { encoded = true; return json::object(); }, clock_.Now());
  EXPECT_TRUE(batch.empty());
  EXPECT_FALSE(encoded);  // an unkeyed write's answer is encoded once, at the edge
  EXPECT_FALSE(unkeyed.TakeStaged().has_value());
  EXPECT_EQ(unkeyed.AfterFailedCommit(Aborted("conflict"), clock_.Now()).status().code(), StatusCode::kAborted);
  EXPECT_EQ(Write(Request("/p", "b", "has space"), json::object()).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(IdempotentWriteTest, AnExpiredKeyIsNewAgainAndThePurgeRemovesEveryRoutesRecords) {
  ASSERT_TRUE(Write(Request("/api/v1/apply", "a"), json::array({1})).ok());
  ASSERT_TRUE(Write(Request("/api/v1/workloads/w/cancel", "c", "k-2"), json::object({{"state", "Cancelled"}})).ok());
  clock_.Advance(kIdempotencyTtl + std::chrono::seconds(1));
  // Expired: another body under the key is a new request, stored over the old record.
  json second = json::array({2});
  EXPECT_EQ(*Write(Request("/api/v1/apply", "other"), second), second);
  EXPECT_EQ(*Write(Request("/api/v1/apply", "other"), json::array({3})), second);
  auto purged = PurgeExpiredIdempotencyKeys(store_, clock_.Now());
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 1);  // the cancel's; the renewed apply key stays
  EXPECT_EQ(*store_.Count(kIdempotencyKind), 1);
}

TEST_F(IdempotentWriteTest, OfTwoConcurrentRequestsWithOneKeyTheSecondGetsTheFirstsAnswer) {
  IdempotentWrite a(store_, Request("/api/v1/apply", "q"), kIdempotencyTtl);
  IdempotentWrite b(store_, Request("/api/v1/apply", "q"), kIdempotencyTtl);
  ASSERT_FALSE(*a.Check(clock_.Now()));
  ASSERT_FALSE(*b.Check(clock_.Now()));
  WriteBatch first, second;
  a.Stage(first, [] { return json::array({"a"}); }, clock_.Now());
  b.Stage(second, [] { return json::array({"b"}); }, clock_.Now());
  ASSERT_TRUE(store_.Commit(first).ok());
  Status lost = store_.Commit(second);
  ASSERT_EQ(lost.code(), StatusCode::kAborted) << lost.ToString();
  auto answer = b.AfterFailedCommit(lost, clock_.Now());
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(*answer, json::array({"a"}));
  // Another failure is passed on as it is.
  EXPECT_EQ(b.AfterFailedCommit(Internal("disk"), clock_.Now()).status().code(), StatusCode::kInternal);
}

TEST_F(IdempotentWriteTest, ARecordStoredBeforeRoutesWereKeyedReadsAsASubmission) {
  // The record as submissions stored it: the body's digest and the answer's items, no route.
  const std::string user = "alice", key = "old";
  json doc = {{"user", user},
              {"key", key},
              {"bodySha256", govern::Sha256Hex("job")},
              {"items", json::array({{{"id", "wl-1"}}})},
              {"createdUs", ToMicros(clock_.Now())},
              {"expiresUs", ToMicros(clock_.Now() + kIdempotencyTtl)}};
  WriteBatch batch;
  batch.PutJson(kIdempotencyKind, govern::Sha256Hex(user + "\n" + key), doc, 0);
  ASSERT_TRUE(store_.Commit(batch).ok());
  auto replay = Write(Request("/api/v1/workloads", "job", key), json::array());
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(*replay, json::array({{{"id", "wl-1"}}}));
  EXPECT_EQ(Write(Request("/api/v1/apply", "job", key), json::array()).status().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace abacus::server

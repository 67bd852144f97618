#include "server/loop_reply.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>

namespace abacus::server {
namespace {

// The first answer reaches the caller; a second one (a later continuation) is ignored.
TEST(LoopReplyTest, TheFirstAnswerWins) {
  auto [reply, answer] = LoopReply<Result<int>>::Make(nullptr);
  LoopReply<Result<int>> copy = reply;  // as a continuation holds it
  EXPECT_FALSE(reply.answered());
  copy(Result<int>(7));
  reply(Result<int>(8));
  EXPECT_TRUE(reply.answered());
  Result<int> got = answer.get();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 7);
}

// A reply every holder dropped unanswered (a continuation lost) answers Internal: the caller is
// never left waiting.
TEST(LoopReplyTest, ADroppedReplyAnswersInternal) {
  std::future<Status> answer;
  {
    auto made = LoopReply<Status>::Make(nullptr);
    answer = std::move(made.second);
    LoopReply<Status> held = made.first;
  }
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  Status got = answer.get();
  EXPECT_EQ(got.code(), StatusCode::kInternal) << got.ToString();
}

// The request's pending audit entry lives as long as the reply, so a commit started for the
// request may still claim it after the command returned.
TEST(LoopReplyTest, TheRequestsEntryLivesAsLongAsTheReply) {
  auto pending = std::make_shared<PendingRequestAudit>();
  std::weak_ptr<PendingRequestAudit> watch = pending;
  std::optional<LoopReply<Status>> reply;
  {
    auto made = LoopReply<Status>::Make(std::move(pending));
    reply = made.first;
  }
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(reply->audit(), watch.lock().get());
  (*reply)(Status::OK());
  reply.reset();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace abacus::server

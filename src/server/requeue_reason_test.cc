#include "server/requeue_reason.h"

#include <gtest/gtest.h>

#include <string>

#include "control/failure.h"

namespace abacus::server {
namespace {

TEST(RequeueReasonTest, EveryReasonReadsBackFromItsStoredName) {
  for (int i = 0; i <= static_cast<int>(RequeueReason::kOther); ++i) {
    const auto r = static_cast<RequeueReason>(i);
    EXPECT_EQ(ParseRequeueReason(RequeueReasonName(r)), r) << RequeueReasonName(r);
  }
  EXPECT_EQ(RequeueReasonName(RequeueReason::kNone), "");
  EXPECT_EQ(RequeueReasonName(RequeueReason::kPreempted), "Preempted");
  EXPECT_EQ(RequeueReasonName(RequeueReason::kDrained), "Drained");
}

TEST(RequeueReasonTest, TheInfrastructureFailureClassesAreNamedAndAnUnknownNameIsOther) {
  // A requeue without a retry carries the failure class's name (control/completion.cc).
  for (auto c : {control::FailureClass::kNodeLost, control::FailureClass::kDeviceError,
                 control::FailureClass::kAgentRestart, control::FailureClass::kInterrupted}) {
    const std::string name(control::FailureClassName(c));
    EXPECT_NE(ParseRequeueReason(name), RequeueReason::kOther) << name;
    EXPECT_EQ(RequeueReasonName(ParseRequeueReason(name)), name);
  }
  EXPECT_EQ(ParseRequeueReason("SomethingNew"), RequeueReason::kOther);
  EXPECT_EQ(ParseRequeueReason(""), RequeueReason::kNone);
}

}  // namespace
}  // namespace abacus::server

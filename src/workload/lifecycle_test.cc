#include "workload/lifecycle.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace abacus {
namespace {

using W = WorkloadState;
using T = TaskState;

const std::set<std::pair<W, W>> kWorkloadLegal = {
    {W::kPending, W::kAdmitted},     {W::kPending, W::kFailed},       {W::kPending, W::kCancelled},
    {W::kAdmitted, W::kRunning},     {W::kAdmitted, W::kPending},     {W::kAdmitted, W::kPreempting},
    {W::kAdmitted, W::kFailed},      {W::kAdmitted, W::kCancelled},   {W::kRunning, W::kSucceeded},
    {W::kRunning, W::kFailed},       {W::kRunning, W::kPreempting},   {W::kRunning, W::kRequeued},
    {W::kRunning, W::kCancelled},    {W::kPreempting, W::kRequeued},  {W::kPreempting, W::kSucceeded},
    {W::kPreempting, W::kFailed},    {W::kPreempting, W::kCancelled}, {W::kRequeued, W::kAdmitted},
    {W::kRequeued, W::kFailed},      {W::kRequeued, W::kCancelled},
};

const std::set<std::pair<T, T>> kTaskLegal = {
    {T::kPending, T::kAssigned},     {T::kPending, T::kKilled},       {T::kAssigned, T::kStarting},
    {T::kAssigned, T::kFailed},      {T::kAssigned, T::kTerminating}, {T::kAssigned, T::kKilled},
    {T::kAssigned, T::kLost},        {T::kStarting, T::kRunning},     {T::kStarting, T::kFailed},
    {T::kStarting, T::kTerminating}, {T::kStarting, T::kLost},        {T::kRunning, T::kSucceeded},
    {T::kRunning, T::kFailed},       {T::kRunning, T::kTerminating},  {T::kRunning, T::kLost},
    {T::kTerminating, T::kKilled},   {T::kTerminating, T::kSucceeded}, {T::kTerminating, T::kFailed},
    {T::kTerminating, T::kLost},
};

TEST(WorkloadLifecycleTest, EveryPairIsLegalExactlyWhenListed) {
  for (int f = 0; f < kWorkloadStateCount; ++f) {
    for (int t = 0; t < kWorkloadStateCount; ++t) {
      W from = static_cast<W>(f), to = static_cast<W>(t);
      bool legal = kWorkloadLegal.count({from, to}) != 0;
      W state = from;
      Status s = Transition(state, to);
      EXPECT_EQ(s.ok(), legal) << WorkloadStateName(from) << " -> " << WorkloadStateName(to);
      EXPECT_EQ(state, legal ? to : from);
      if (!legal) {
        EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
      }
    }
  }
}

TEST(WorkloadLifecycleTest, IllegalTransitionsNameBothStates) {
  struct Row {
    W from, to;
    const char* message;
  };
  for (const Row& r : std::vector<Row>{
           {W::kPending, W::kRunning, "illegal workload transition Pending -> Running"},
           {W::kPending, W::kSucceeded, "illegal workload transition Pending -> Succeeded"},
           {W::kPending, W::kPreempting, "illegal workload transition Pending -> Preempting"},
           {W::kAdmitted, W::kSucceeded, "illegal workload transition Admitted -> Succeeded"},
           {W::kRunning, W::kAdmitted, "illegal workload transition Running -> Admitted"},
           {W::kRunning, W::kPending, "illegal workload transition Running -> Pending"},
           {W::kPreempting, W::kRunning, "illegal workload transition Preempting -> Running"},
           {W::kRequeued, W::kRunning, "illegal workload transition Requeued -> Running"},
           {W::kSucceeded, W::kRunning, "illegal workload transition Succeeded -> Running (Succeeded is final)"},
           {W::kFailed, W::kRequeued, "illegal workload transition Failed -> Requeued (Failed is final)"},
           {W::kCancelled, W::kPending, "illegal workload transition Cancelled -> Pending (Cancelled is final)"},
           {W::kCancelled, W::kCancelled, "illegal workload transition Cancelled -> Cancelled (Cancelled is final)"},
       }) {
    W state = r.from;
    Status s = Transition(state, r.to);
    EXPECT_EQ(s, FailedPrecondition(r.message));
    EXPECT_EQ(state, r.from);
  }
}

TEST(WorkloadLifecycleTest, CancelFromEveryNonTerminalState) {
  for (int f = 0; f < kWorkloadStateCount; ++f) {
    W from = static_cast<W>(f);
    EXPECT_EQ(CanTransition(from, W::kCancelled), !IsTerminal(from)) << WorkloadStateName(from);
  }
  EXPECT_TRUE(IsTerminal(W::kSucceeded));
  EXPECT_TRUE(IsTerminal(W::kFailed));
  EXPECT_TRUE(IsTerminal(W::kCancelled));
  EXPECT_TRUE(NextStates(W::kSucceeded).empty());
  EXPECT_EQ(NextStates(W::kPending), (std::vector<W>{W::kAdmitted, W::kFailed, W::kCancelled}));
}

TEST(WorkloadLifecycleTest, PreemptionStory) {
  W s = W::kPending;
  for (W next : {W::kAdmitted, W::kRunning, W::kPreempting, W::kRequeued, W::kAdmitted, W::kRunning,
                 W::kSucceeded}) {
    ASSERT_TRUE(Transition(s, next).ok()) << WorkloadStateName(next);
  }
  EXPECT_EQ(s, W::kSucceeded);
}

TEST(WorkloadLifecycleTest, NamesParseBack) {
  for (int i = 0; i < kWorkloadStateCount; ++i) {
    W s = static_cast<W>(i);
    EXPECT_EQ(*ParseWorkloadState(WorkloadStateName(s)), s);
  }
  EXPECT_FALSE(ParseWorkloadState("Done").ok());
  for (int i = 0; i < kTaskStateCount; ++i) {
    T s = static_cast<T>(i);
    EXPECT_EQ(*ParseTaskState(TaskStateName(s)), s);
  }
  EXPECT_FALSE(ParseTaskState("Zombie").ok());
}

TEST(TaskLifecycleTest, EveryPairIsLegalExactlyWhenListed) {
  for (int f = 0; f < kTaskStateCount; ++f) {
    for (int t = 0; t < kTaskStateCount; ++t) {
      T from = static_cast<T>(f), to = static_cast<T>(t);
      bool legal = kTaskLegal.count({from, to}) != 0;
      T state = from;
      Status s = Transition(state, to);
      EXPECT_EQ(s.ok(), legal) << TaskStateName(from) << " -> " << TaskStateName(to);
      EXPECT_EQ(state, legal ? to : from);
    }
  }
  for (T terminal : {T::kSucceeded, T::kFailed, T::kKilled, T::kLost}) {
    EXPECT_TRUE(IsTerminal(terminal));
    T s = terminal;
    EXPECT_EQ(Transition(s, T::kRunning),
              FailedPrecondition("illegal task transition " + std::string(TaskStateName(terminal)) +
                                 " -> Running (" + std::string(TaskStateName(terminal)) + " is final)"));
  }
  T s = T::kPending;
  EXPECT_EQ(Transition(s, T::kRunning), FailedPrecondition("illegal task transition Pending -> Running"));
}

}  // namespace
}  // namespace abacus

// LoopReply: the answer to a command the scheduling loop runs for another thread (issue 22.3).
// A command that commits hands its batch to the committer and goes on; the answer is given
// later, on the loop, by the commit's continuation (loop_commits.h), and the thread that queued
// the command waits for it. A reply is shared by every continuation of its command; the first
// call answers, later calls are ignored. A reply dropped unanswered (a continuation lost, a bug)
// answers Internal rather than leaving its caller waiting forever.
//
//   auto [reply, answer] = LoopReply<Result<T>>::Make(pending_audit);
//   inbox.Run([reply] { ...start a commit whose continuation calls reply(value)... });
//   Result<T> r = answer.get();
//
// The request's pending audit entry (request_context.h) lives as long as the reply, so a
// commit started for the request may claim it until the reply is answered.
#pragma once

#include <future>
#include <memory>
#include <utility>

#include "common/status.h"
#include "server/request_context.h"

namespace abacus::server {

template <typename R>
class LoopReply {
 public:
  // A reply and the future its caller waits on; `audit` (may be null) is kept alive with it.
  static std::pair<LoopReply, std::future<R>> Make(std::shared_ptr<PendingRequestAudit> audit) {
    LoopReply reply(std::make_shared<State>(std::move(audit)));
    std::future<R> future = reply.state_->promise.get_future();
    return {std::move(reply), std::move(future)};
  }

  // Answers the caller with `value` unless it was answered already.
  void operator()(R value) const {
    if (state_->answered) return;
    state_->answered = true;
    state_->promise.set_value(std::move(value));
  }
  // The request's pending audit entry (null: none); valid while this reply exists.
  PendingRequestAudit* audit() const { return state_->audit.get(); }
  bool answered() const { return state_->answered; }

 private:
  struct State {
    explicit State(std::shared_ptr<PendingRequestAudit> a) : audit(std::move(a)) {}
    ~State() {
      if (!answered) promise.set_value(R(Internal("the scheduling loop dropped the command's answer")));
    }
    std::promise<R> promise;
    bool answered = false;  // loop thread only
    std::shared_ptr<PendingRequestAudit> audit;
  };
  explicit LoopReply(std::shared_ptr<State> state) : state_(std::move(state)) {}

  std::shared_ptr<State> state_;
};

}  // namespace abacus::server

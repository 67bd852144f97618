// The definitions of ControlPlane's loop commands (AnswerOnLoop, RunOnLoop), for the files that
// queue work on the scheduling loop: a command runs on the loop thread and answers its caller
// through a LoopReply (loop_reply.h), at once or from the continuation of a commit it started.
#pragma once

#include <functional>
#include <future>
#include <string>
#include <utility>

#include "common/blocking_region.h"
#include "server/control_plane.h"
#include "server/loop_inbox.h"
#include "server/loop_reply.h"
#include "server/request_context.h"

namespace abacus::server {

template <typename R, typename F>
R ControlPlane::AnswerOnLoop(RequestContext* context, F fn) {
  // The request's entry travels with the command, a value: its change's commit claims it.
  auto made = LoopReply<R>::Make(PendingAuditOf(context));
  std::future<R> answer = std::move(made.second);
  ABACUS_RETURN_IF_ERROR(inbox_.Run([reply = std::move(made.first), fn = std::move(fn)]() mutable { fn(reply); }));
  {
    BlockingRegion waiting;  // for the loop
    answer.wait();
  }
  return answer.get();
}

template <typename F>
auto ControlPlane::RunOnLoop(RequestContext* context, F fn)
    -> std::invoke_result_t<F&, PendingRequestAudit*> {
  using R = std::invoke_result_t<F&, PendingRequestAudit*>;
  return AnswerOnLoop<R>(context, [this, fn = std::move(fn)](const LoopReply<R>& reply) mutable {
    commits_.SettleAll();  // it reads and changes what is durable
    reply(fn(reply.audit()));
  });
}

template <typename F>
auto ControlPlane::RunOnLoop(F fn) -> std::invoke_result_t<F&> {
  return RunOnLoop(nullptr, [fn = std::move(fn)](PendingRequestAudit*) mutable { return fn(); });
}

// A workload command's answer once its commit settled (a Written, for the `then` of the loop's
// writes): the workload as committed, or the error.
inline std::function<void(const Status&)> AnswerWithView(const ControlPlane& cp, std::string id,
                                                         LoopReply<Result<WorkloadView>> reply) {
  return [&cp, id = std::move(id), reply = std::move(reply)](const Status& st) {
    if (!st.ok()) return reply(st);
    reply(cp.GetWorkload(id));
  };
}

// From a commit's continuation, which may not settle: runs `work` as a loop command of its own
// (it may settle, to read what is durable), then answers `reply` with `answer`. When the inbox is
// closed (a stop) `answer` is given at once, without `work`: the write it follows is durable, and
// no caller waits forever. One rule for every write followed by such work (a registration's task
// reconciliation, a heartbeat's fail-over, a deleted maintenance window's uncordons).
template <typename R>
void AnswerAfterCommand(LoopInbox& inbox, LoopReply<R> reply, R answer, std::function<void()> work) {
  Status queued = inbox.Run([reply, answer, work = std::move(work)] {
    work();
    reply(answer);
  });
  if (!queued.ok()) reply(std::move(answer));
}

}  // namespace abacus::server

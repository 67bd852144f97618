// ProbeRunner on a ManualClock with scripted attempts: thresholds, outcomes, messages, removal
// and slow probes. (The probe JSON and the table's folding of outcomes: loop_test.cc; the whole
// loop against a fake server and real probes: agent_test.cc, "probes".)
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "agent/loop/probe_runner.h"
#include "common/test_eventually.h"

namespace abacus::agent {

// Readable test failures.
void PrintTo(const ProbeOutcome& o, std::ostream* os) {
  auto flag = [](const std::optional<bool>& b) { return b ? (*b ? "true" : "false") : "-"; };
  *os << "{ready " << flag(o.ready) << ", live " << flag(o.live) << ", \"" << o.message << "\"}";
}

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProbeOutcome Outcome(std::optional<bool> ready, std::optional<bool> live, std::string message = "") {
  return ProbeOutcome{ready, live, std::move(message), std::nullopt, std::nullopt};
}

// `o` without its runs: what the verdict tests compare.
ProbeOutcome Verdict(ProbeOutcome o) {
  o.readiness_run.reset();
  o.liveness_run.reset();
  return o;
}

// Attempts answered from a script per port; an empty script answers ok. A port can be held:
// its attempts wait until released.
class Script {
 public:
  ProbeResult Attempt(const ProbeSpec& spec) {
    std::unique_lock lock(mu_);
    ++calls_[spec.port];
    cv_.wait(lock, [&] { return held_.count(spec.port) == 0; });
    auto& queue = results_[spec.port];
    if (queue.empty()) return {true, "HTTP 200"};
    ProbeResult r = queue.front();
    queue.pop_front();
    return r;
  }
  void Push(int port, ProbeResult r) {
    std::lock_guard lock(mu_);
    results_[port].push_back(std::move(r));
  }
  void Hold(int port) {
    std::lock_guard lock(mu_);
    held_.insert(port);
  }
  void Release(int port) {
    {
      std::lock_guard lock(mu_);
      held_.erase(port);
    }
    cv_.notify_all();
  }
  int calls(int port) {
    std::lock_guard lock(mu_);
    return calls_[port];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, std::deque<ProbeResult>> results_;
  std::map<int, int> calls_;
  std::set<int> held_;
};

class ProbeRunnerTest : public ::testing::Test {
 protected:
  ProbeRunnerTest()
      : runner_(
            clock_,
            [this](const std::string& id, const ProbeOutcome& o) {
              std::lock_guard lock(mu_);
              reports_.emplace_back(id, o);
            },
            2, [this](const ProbeSpec& s) { return script_.Attempt(s); }) {}

  static AssignedProbe Http(int port, int period, int failure_threshold, int success_threshold, int delay = 0) {
    AssignedProbe p;
    p.spec.kind = ProbeKind::kHttp;
    p.spec.port = port;
    p.spec.path = "/health";
    p.spec.initial_delay = seconds(delay);
    p.spec.period = seconds(period);
    p.spec.failure_threshold = failure_threshold;
    p.spec.success_threshold = success_threshold;
    return p;
  }
  std::vector<std::pair<std::string, ProbeOutcome>> Reports() {
    std::lock_guard lock(mu_);
    return reports_;
  }
  ProbeOutcome Last() {
    std::lock_guard lock(mu_);
    return reports_.back().second;
  }
  // Moves the clock and waits until `n` attempts were recorded in all.
  void Step(Duration d, int n) {
    clock_.Advance(d);
    ASSERT_TRUE(Eventually([&] { return runner_.attempts() == n; })) << "attempt " << n;
  }

  ManualClock clock_;
  Script script_;
  std::mutex mu_;
  std::vector<std::pair<std::string, ProbeOutcome>> reports_;
  ProbeRunner runner_;  // last: stopped before the script and the reports go
};

TEST_F(ProbeRunnerTest, ReadinessNeedsItsSuccessThresholdAndTheMessageClearsOnceReady) {
  script_.Push(8000, {false, "GET http://127.0.0.1:8000/health: HTTP 503"});
  runner_.Add("t", Http(8000, 10, 1, 2, 5), std::nullopt, clock_.Now());
  ASSERT_EQ(Reports().size(), 1u);  // the first outcome, before any attempt
  EXPECT_EQ(Last(), Outcome(false, std::nullopt));
  EXPECT_EQ(runner_.attempts(), 0);

  Step(seconds(5), 1);  // after the initial delay: fails
  EXPECT_EQ(Verdict(Last()), Outcome(false, std::nullopt, "readiness: GET http://127.0.0.1:8000/health: HTTP 503"));
  Step(seconds(10), 2);  // one success of two: not ready yet, only the run changed
  EXPECT_EQ(Reports().size(), 3u);
  EXPECT_EQ(Last().ready, false);
  Step(seconds(10), 3);
  EXPECT_EQ(Verdict(Last()), Outcome(true, std::nullopt));
  EXPECT_EQ(Reports().size(), 4u);
  // Attempts follow the period on the clock: none before it.
  clock_.Advance(seconds(9));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(runner_.attempts(), 3);
  Step(seconds(1), 4);
}

TEST_F(ProbeRunnerTest, LivenessStaysTrueUntilItsFailureThresholdAndComesBack) {
  AssignedProbe liveness = Http(9000, 10, 3, 1);
  liveness.spec.kind = ProbeKind::kTcp;
  for (int i = 0; i < 3; ++i) script_.Push(9000, {false, "tcp 127.0.0.1:9000: connection refused"});
  runner_.Add("t", std::nullopt, liveness, clock_.Now());
  EXPECT_EQ(Reports().front().second, Outcome(std::nullopt, true));
  ASSERT_TRUE(Eventually([&] { return runner_.attempts() == 1; }));  // no delay: due at once
  EXPECT_EQ(Verdict(Last()), Outcome(std::nullopt, true, "liveness: tcp 127.0.0.1:9000: connection refused"));
  Step(seconds(10), 2);
  EXPECT_EQ(Last().live, true);
  Step(seconds(10), 3);
  EXPECT_EQ(Verdict(Last()), Outcome(std::nullopt, false, "liveness: tcp 127.0.0.1:9000: connection refused"));
  Step(seconds(10), 4);  // answers again
  EXPECT_EQ(Verdict(Last()), Outcome(std::nullopt, true));
}

TEST_F(ProbeRunnerTest, BothProbesAndAnUnreadableOneFailsEveryAttempt) {
  AssignedProbe bad;
  bad.invalid = "unreadable probe: expected exactly one of http, tcp, exec";
  runner_.Add("t", Http(8000, 10, 1, 1), bad, clock_.Now());
  EXPECT_EQ(Reports().front().second, Outcome(false, true));
  ASSERT_TRUE(Eventually([&] { return runner_.attempts() == 2; }));
  EXPECT_EQ(Last().ready, true);
  EXPECT_EQ(Last().live, true);  // one failure of three
  EXPECT_EQ(Last().message, "liveness: unreadable probe: expected exactly one of http, tcp, exec");
  EXPECT_EQ(script_.calls(0), 0);  // never attempted
  EXPECT_EQ(script_.calls(8000), 1);
}

TEST_F(ProbeRunnerTest, ASlowProbeHoldsUpNeitherOtherTasksNorRemoval) {
  script_.Hold(8000);
  runner_.Add("slow", Http(8000, 10, 1, 1), std::nullopt, clock_.Now());
  ASSERT_TRUE(Eventually([&] { return script_.calls(8000) == 1; }));  // in flight, held
  runner_.Add("quick", Http(8001, 10, 1, 1), std::nullopt, clock_.Now());
  ASSERT_TRUE(Eventually([&] { return runner_.attempts() == 1; }));
  auto reports = Reports();
  EXPECT_EQ(reports.back().first, "quick");
  EXPECT_EQ(Verdict(reports.back().second), Outcome(true, std::nullopt));
  // The slow task stops meanwhile: its attempt, when it ends, is not reported.
  runner_.Remove("slow");
  EXPECT_FALSE(runner_.Probing("slow"));
  script_.Release(8000);
  Step(seconds(10), 2);  // the quick one's next attempt
  for (const auto& [id, o] : Reports()) {
    if (id == "slow") {
      EXPECT_EQ(o, Outcome(false, std::nullopt));
    }
  }
  runner_.Stop();
  runner_.Add("late", Http(8002, 10, 1, 1), std::nullopt, clock_.Now());  // after Stop: ignored
  EXPECT_FALSE(runner_.Probing("late"));
}

// Issue 19.5: every attempt that changes a probe's run of equal results is reported with its
// count, capped at the larger threshold, so that the server's controller can count
// failureThreshold failures in a row; a steady probe stops reporting.
TEST_F(ProbeRunnerTest, EachRunOfEqualResultsIsReportedWithItsCountUpToTheLargerThreshold) {
  for (int i = 0; i < 4; ++i) script_.Push(8000, {false, "GET http://127.0.0.1:8000/health: HTTP 503"});
  script_.Hold(8000);  // the first attempt starts at once: held so the first report is seen alone
  runner_.Add("t", Http(8000, 10, 3, 1), std::nullopt, clock_.Now());
  EXPECT_FALSE(Last().readiness_run);  // no attempt yet
  script_.Release(8000);
  ASSERT_TRUE(Eventually([&] { return runner_.attempts() == 1; }));
  EXPECT_EQ(Last().readiness_run, (ProbeRun{false, 1}));
  Step(seconds(10), 2);
  EXPECT_EQ(Last().readiness_run, (ProbeRun{false, 2}));
  Step(seconds(10), 3);
  EXPECT_EQ(Last().readiness_run, (ProbeRun{false, 3}));
  size_t reported = Reports().size();
  Step(seconds(10), 4);  // a fourth failure: the run stays at the cap, nothing new to say
  EXPECT_EQ(Reports().size(), reported);
  Step(seconds(10), 5);  // answers again
  EXPECT_EQ(Last().readiness_run, (ProbeRun{true, 1}));
  EXPECT_EQ(Last().ready, true);
}

TEST_F(ProbeRunnerTest, ATaskWithoutProbesIsNotProbed) {
  runner_.Add("t", std::nullopt, std::nullopt, clock_.Now());
  EXPECT_FALSE(runner_.Probing("t"));
  EXPECT_TRUE(Reports().empty());
}

}  // namespace
}  // namespace abacus::agent

// The read side of the CLI habits (issue 23) against a real server with the real binary:
// `get -w` and `events -w` stream what the server commits (long polls on a resourceVersion,
// filtered like the list: a tenant never sees another's changes), Ctrl-C and a server shutdown
// end them; label selectors, --kind and --user filter `get workloads`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

// t1 (project p1, queue q1) and t2 (p3, q2); max a member of t1/p1, mia of t2/p3.
const std::string kOrg = org::Org(
    org::TwoTenants("p3"), {{"cpu", "64"}, {"memory", "1Ti"}},
    {org::Member("max", "t1/p1"), org::Member("mia", "t2/p3")});

std::string Job(const std::string& name, const std::string& project, const std::string& queue,
                const std::string& labels = "", const std::string& kind = "TrainingJob") {
  return "kind: " + kind + "\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         (labels.empty() ? "" : "\nlabels: {" + labels + "}") +
         "\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n";
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `abacus ARGS...` running in the background, its stdout and stderr going to files.
class Background {
 public:
  Background(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    out_ = dir_.path() + "/out";
    err_ = dir_.path() + "/err";
    pid_ = fork();
    if (pid_ == 0) {
      int out = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int err = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(out, 1);
      dup2(err, 2);
      setenv("HOME", dir_.path().c_str(), 1);
      unsetenv("ABACUS_CONFIG");
      for (const auto& e : env) putenv(strdup(e.c_str()));
      std::vector<std::string> all = {ABACUS_BINARY};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string out() const { return ReadFile(out_); }
  std::string err() const { return ReadFile(err_); }
  // Sends `sig`; returns the exit code once it ended (-1: killed by a signal; -2: still running).
  int Signal(int sig) {
    kill(pid_, sig);
    return Wait();
  }
  // The exit code once it ended within the WaitFor limit (-1: by a signal), -2 if still running.
  int Wait() {
    int status = 0;
    bool done = WaitFor([&] { return waitpid(pid_, &status, WNOHANG) == pid_; });
    if (!done) return -2;
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  TempDir dir_;
  std::string out_, err_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    auto admin = server_->Client();
    auto applied = admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    for (const char* user : {"max", "mia"}) {
      auto r = admin.Post("/api/v1/tokens", json{{"user", user}}.dump(), "application/json");
      ASSERT_EQ(r.status, 201) << r.text;
      tokens_[user] = r.body["token"];
    }
  }
  cli::ApiClient As(const std::string& user) { return cli::ApiClient({server_->url(), tokens_.at(user)}); }
  std::vector<std::string> Env(const std::string& user) {
    return {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + tokens_.at(user)};
  }
  std::string Submit(const std::string& user, const std::string& yaml) {
    auto r = As(user).Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0].value("id", "") : "";
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> tokens_;
};

// The route: a watch answers when something the caller may see changed, and only with that.
TEST_F(WatchTest, TheWatchRouteAnswersWithTheCallersChangesOnly) {
  auto mia = As("mia"), max = As("max");
  auto first = mia.Get("/api/v1/workloads?watch=1");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body["type"], "List");
  const uint64_t rv = first.body["resourceVersion"];
  const std::string alpha = Submit("max", Job("alpha-job", "t1/p1", "q1"));
  // Tenant t1's watcher gets its change at once (the route long-polls up to 300 s here).
  auto theirs = max.Get("/api/v1/workloads?watch=1&timeoutSeconds=300&resourceVersion=" + std::to_string(rv));
  ASSERT_EQ(theirs.status, 200) << theirs.text;
  EXPECT_EQ(theirs.body["type"], "Changes");
  ASSERT_FALSE(theirs.body["items"].empty());
  EXPECT_EQ(theirs.body["items"][0]["id"], alpha);
  // Tenant t2's watcher sees nothing of it: its watch times out empty.
  auto mine = mia.Get("/api/v1/workloads?watch=1&timeoutSeconds=1&resourceVersion=" + std::to_string(rv));
  ASSERT_EQ(mine.status, 200) << mine.text;
  EXPECT_EQ(mine.body["type"], "Changes");
  EXPECT_TRUE(mine.body["items"].empty()) << mine.text;
  EXPECT_GT(mine.body["resourceVersion"].get<uint64_t>(), rv);
  // Malformed parameters are 400 naming them.
  auto bad = mia.Get("/api/v1/workloads?watch=1&resourceVersion=x1");
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(Contains(bad.text, "resourceVersion")) << bad.text;
  EXPECT_EQ(mia.Get("/api/v1/workloads?watch=1&timeoutSeconds=0").status, 400);
  // Events: the same filter.
  auto ev = mia.Get("/api/v1/events?watch=1&timeoutSeconds=1&resourceVersion=" + std::to_string(rv));
  ASSERT_EQ(ev.status, 200) << ev.text;
  EXPECT_TRUE(ev.body["items"].empty()) << ev.text;
  auto ev_max = max.Get("/api/v1/events?watch=1&timeoutSeconds=300&resourceVersion=" + std::to_string(rv));
  ASSERT_EQ(ev_max.status, 200) << ev_max.text;
  ASSERT_FALSE(ev_max.body["items"].empty()) << ev_max.text;
  EXPECT_EQ(ev_max.body["items"][0]["workload"], alpha);
  EXPECT_EQ(ev_max.body["items"][0]["type"], "Submitted");
  EXPECT_EQ(mia.Get("/api/v1/events?workload=" + alpha).status, 404);
}

// A watch opened before its token was revoked answered the changes made after the revocation
// (the probe of 2026-12-07: a stolen laptop's token kept receiving for up to 300 s per watch).
// A long poll now asks whether its caller still stands before it answers: 401, nothing of the
// change. The same for a user disabled while it waits.
TEST_F(WatchTest, AWatchWhoseTokenIsRevokedWhileItWaitsAnswers401AndNotTheChange) {
  auto admin = server_->Client();
  auto listed = admin.Get("/api/v1/tokens?user=max");
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.body["items"].size(), 1u) << listed.text;
  const std::string token_id = listed.body["items"][0].value("id", "");
  const uint64_t rv = As("max").Get("/api/v1/workloads?watch=1").body["resourceVersion"];
  cli::ApiResponse workloads, events;
  std::thread w([&] {
    workloads = As("max").Get("/api/v1/workloads?watch=1&timeoutSeconds=60&resourceVersion=" + std::to_string(rv));
  });
  std::thread e([&] {
    events = As("max").Get("/api/v1/events?watch=1&timeoutSeconds=60&resourceVersion=" + std::to_string(rv));
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // both are waiting (else refused at once: 401 too)
  ASSERT_EQ(admin.Delete("/api/v1/tokens/" + token_id).status, 200);
  ASSERT_EQ(admin.Post("/api/v1/workloads", Job("after-revoke", "t1/p1", "q1"), "application/yaml").status, 201);
  w.join();
  e.join();
  for (const cli::ApiResponse* r : {&workloads, &events}) {
    EXPECT_EQ(r->status, 401) << r->text;
    EXPECT_TRUE(Contains(r->text, "revoked")) << r->text;
    EXPECT_FALSE(Contains(r->text, "after-revoke")) << r->text;
  }

  // A user disabled while its watch waits: the same.
  const uint64_t rv2 = As("mia").Get("/api/v1/workloads?watch=1").body["resourceVersion"];
  cli::ApiResponse mias;
  std::thread m([&] {
    mias = As("mia").Get("/api/v1/workloads?watch=1&timeoutSeconds=60&resourceVersion=" + std::to_string(rv2));
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(admin.Post("/api/v1/apply", "kind: User\nname: mia\ndisabled: true\nroles: [{role: member, project: t2/p3}]\n",
                       "application/yaml")
                .status,
            200);
  ASSERT_EQ(admin.Post("/api/v1/workloads", Job("after-disable", "t2/p3", "q2"), "application/yaml").status, 201);
  m.join();
  EXPECT_EQ(mias.status, 401) << mias.text;
  EXPECT_TRUE(Contains(mias.text, "disabled")) << mias.text;
  EXPECT_FALSE(Contains(mias.text, "after-disable")) << mias.text;
  // And no token is minted for a user whose tokens could never authenticate.
  auto minted = admin.Post("/api/v1/tokens", json{{"user", "mia"}}.dump(), "application/json");
  EXPECT_GE(minted.status, 400) << minted.text;
  EXPECT_TRUE(Contains(minted.text, "is disabled")) << minted.text;
}

// A revocation with nothing else changing, or a token that expires, left the watch waiting to
// its own timeout (the fifth probe: up to 300 s, asked again only at the next change). Both
// end the watch with 401 well before its 120 s: the revocation wakes it, the expiry bounds it.
// (The 30 s bound only keeps a regression from hanging the test for the full timeout.)
TEST_F(WatchTest, AWatchEndsWith401WhenItsTokenIsRevokedOrExpiresWithNothingElseChanging) {
  auto admin = server_->Client();
  const std::string token_id = admin.Get("/api/v1/tokens?user=max").body["items"][0].value("id", "");
  const uint64_t rv = As("max").Get("/api/v1/workloads?watch=1").body["resourceVersion"];
  auto revoked_watch = std::async(std::launch::async, [&] {
    return As("max").Get("/api/v1/workloads?watch=1&timeoutSeconds=120&resourceVersion=" + std::to_string(rv));
  });
  auto revoked_events = std::async(std::launch::async, [&] {
    return As("max").Get("/api/v1/events?watch=1&timeoutSeconds=120&resourceVersion=" + std::to_string(rv));
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // both are waiting (else refused at once: 401 too)
  ASSERT_EQ(admin.Delete("/api/v1/tokens/" + token_id).status, 200);
  for (auto* f : {&revoked_watch, &revoked_events}) {
    ASSERT_EQ(f->wait_for(std::chrono::seconds(30)), std::future_status::ready) << "still waiting after the revocation";
    cli::ApiResponse r = f->get();
    EXPECT_EQ(r.status, 401) << r.text;
    EXPECT_TRUE(Contains(r.text, "revoked")) << r.text;
  }

  // A token that expires in 3 s, its watch asking for 120 s.
  auto minted = admin.Post("/api/v1/tokens", json{{"user", "mia"}, {"expires", "3s"}}.dump(), "application/json");
  ASSERT_EQ(minted.status, 201) << minted.text;
  cli::ApiClient brief({server_->url(), minted.body.value("token", "")});
  const uint64_t rv2 = brief.Get("/api/v1/workloads?watch=1").body["resourceVersion"];
  auto expiring = std::async(std::launch::async, [&] {
    return brief.Get("/api/v1/workloads?watch=1&timeoutSeconds=120&resourceVersion=" + std::to_string(rv2));
  });
  ASSERT_EQ(expiring.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "still waiting after the expiry";
  cli::ApiResponse r = expiring.get();
  EXPECT_EQ(r.status, 401) << r.text;
  EXPECT_TRUE(Contains(r.text, "expired")) << r.text;
  // A token that would expire before its answer is read is not issued (it was, inactive).
  auto dead = admin.Post("/api/v1/tokens", json{{"user", "mia"}, {"expires", "1ms"}}.dump(), "application/json");
  EXPECT_EQ(dead.status, 400) << dead.text;
  EXPECT_TRUE(Contains(dead.text, "expires: must be at least 1s")) << dead.text;

  // The admin token rotated while its watch waits: 401 saying so (it said "invalid token").
  auto admin_watch = std::async(std::launch::async, [&] {
    return admin.Get("/api/v1/workloads?watch=1&timeoutSeconds=120&resourceVersion=" + std::to_string(rv2));
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(server_->Client().Post("/api/v1/tokens/rotate-admin", "{}", "application/json").status, 200);
  ASSERT_EQ(admin_watch.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "still waiting after the rotation";
  r = admin_watch.get();
  EXPECT_EQ(r.status, 401) << r.text;
  EXPECT_TRUE(Contains(r.text, "token was replaced (rotated) while this call waited")) << r.text;
}

// One user's watches hold at most 16 HTTP threads (the sixth probe: 110 watches of one viewer
// token filled all 96, the agents' heartbeats waited behind them, their nodes went NotReady and a
// running training was killed). The 17th is refused 429 naming the limit; another user still
// watches; the places come back when the watches end (here: the token revoked).
TEST_F(WatchTest, OneUsersWatchesHoldAtMostSixteenThreadsAndTheNextIsRefused429) {
  // The server's default of 96 HTTP threads (ServerProcess gives tests 24): the default limits.
  server_.reset();
  server_ = std::make_unique<ServerProcess>(dir_.path(), std::vector<std::string>{"--http-threads", "96"});
  const uint64_t rv = As("max").Get("/api/v1/workloads?watch=1").body["resourceVersion"];
  const std::string wait = "/api/v1/workloads?watch=1&timeoutSeconds=120&resourceVersion=" + std::to_string(rv);
  // 17 at once, one connection each (httplib directly: the CLI's client sends one request at a
  // time): whichever comes 17th is refused at once, the other 16 wait.
  std::vector<std::future<std::pair<int, std::string>>> held;
  for (int i = 0; i < 17; ++i) {
    held.push_back(std::async(std::launch::async, [&] {
      httplib::Client c(server_->url());
      c.set_bearer_token_auth(tokens_.at("max"));
      c.set_read_timeout(std::chrono::seconds(150));
      auto r = c.Get(wait);
      return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
    }));
  }
  std::optional<std::pair<int, std::string>> refused;
  ASSERT_TRUE(WaitFor([&] {
    for (auto& f : held) {
      if (f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready) refused = f.get();
    }
    return refused.has_value();
  })) << "no watch of the 17 was refused";
  EXPECT_EQ(refused->first, 429) << refused->second;
  EXPECT_TRUE(Contains(refused->second, "user max has 16 watches and log follows open")) << refused->second;
  const std::string one_more = "/api/v1/workloads?watch=1&timeoutSeconds=1&resourceVersion=" + std::to_string(rv);
  EXPECT_EQ(As("max").Get("/api/v1/workloads").status, 200);  // a plain list needs no place
  EXPECT_EQ(As("mia").Get(one_more).status, 200);            // another user's watch does
  EXPECT_EQ(server_->Client().Get("/healthz").status, 200);
  // Revoked: the 16 end (401) and give their places back.
  auto admin = server_->Client();
  const std::string token_id = admin.Get("/api/v1/tokens?user=max").body["items"][0].value("id", "");
  ASSERT_EQ(admin.Delete("/api/v1/tokens/" + token_id).status, 200);
  int waited = 0;
  for (auto& f : held) {
    if (!f.valid()) continue;
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_EQ(f.get().first, 401);
    ++waited;
  }
  EXPECT_EQ(waited, 16);
}

TEST_F(WatchTest, GetWatchStreamsEachTenantItsOwnChangesAndCtrlCEndsIt) {
  Background a({"get", "workloads", "-w"}, Env("max"));
  Background b({"get", "workloads", "-w"}, Env("mia"));
  Background events_b({"events", "-w"}, Env("mia"));
  Submit("max", Job("alpha-job", "t1/p1", "q1"));
  Submit("mia", Job("beta-job", "t2/p3", "q2"));
  EXPECT_TRUE(WaitFor([&] { return Contains(a.out(), "alpha-job"); })) << a.out() << a.err();
  EXPECT_TRUE(WaitFor([&] { return Contains(b.out(), "beta-job"); })) << b.out() << b.err();
  EXPECT_TRUE(WaitFor([&] { return Contains(events_b.out(), "beta-job"); })) << events_b.out() << events_b.err();
  // A later change (a cancel) streams too.
  ASSERT_EQ(RunCli({"cancel", "beta-job"}, Env("mia")).code, 0);
  EXPECT_TRUE(WaitFor([&] { return Contains(b.out(), "Cancelled"); })) << b.out();
  EXPECT_TRUE(WaitFor([&] { return Contains(events_b.out(), "Cancelled"); })) << events_b.out();
  EXPECT_FALSE(Contains(b.out(), "alpha-job")) << b.out();
  EXPECT_FALSE(Contains(events_b.out(), "alpha-job")) << events_b.out();
  EXPECT_FALSE(Contains(a.out(), "beta-job")) << a.out();
  // The header once, then rows.
  const std::string out = b.out();
  EXPECT_EQ(out.find("NAME"), out.rfind("NAME")) << out;
  // Ctrl-C ends it with exit 0.
  EXPECT_EQ(a.Signal(SIGINT), 0) << a.err();
  EXPECT_EQ(b.Signal(SIGINT), 0) << b.err();
  EXPECT_EQ(events_b.Signal(SIGINT), 0) << events_b.err();
}

TEST_F(WatchTest, NodesAndQueuesWatchStreamChanges) {
  auto admin_env = std::vector<std::string>{"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
  Background nodes({"get", "nodes", "-w"}, admin_env);
  Background queues({"get", "queues", "-w"}, Env("mia"));
  EXPECT_TRUE(WaitFor([&] { return Contains(queues.out(), "q2"); })) << queues.out() << queues.err();
  auto put = server_->Client().Post("/api/v1/nodes", H100Node("gpu-watch-1").dump(), "application/json");
  ASSERT_EQ(put.status, 201) << put.text;
  EXPECT_TRUE(WaitFor([&] { return Contains(nodes.out(), "gpu-watch-1"); })) << nodes.out() << nodes.err();
  // A submission changes q2's PENDING/ADMITTED: the queue's row again.
  const std::string seen = queues.out();
  const size_t rows_before = std::count(seen.begin(), seen.end(), '\n');
  Submit("mia", Job("beta-job", "t2/p3", "q2"));
  EXPECT_TRUE(WaitFor([&] {
    std::string out = queues.out();
    return static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) > rows_before;
  })) << queues.out();
  EXPECT_FALSE(Contains(queues.out(), "q1")) << queues.out();  // t1's queue is not mia's to see
  EXPECT_EQ(nodes.Signal(SIGINT), 0);
  EXPECT_EQ(queues.Signal(SIGINT), 0);
  auto usage = RunCli({"get", "devices", "-w"}, admin_env);
  EXPECT_EQ(usage.code, 2);
  EXPECT_TRUE(Contains(usage.err, "-w watches workloads, nodes and queues")) << usage.err;
}

TEST_F(WatchTest, AServerShutdownEndsEveryWatch) {
  const std::string url = server_->url(), token = tokens_.at("mia");
  Background watcher({"get", "workloads", "-w"}, Env("mia"));
  EXPECT_TRUE(WaitFor([&] { return !server_->Client().Get("/healthz").text.empty(); }));
  // A raw long poll of 300 s: the shutdown answers it long before.
  cli::ApiResponse answer;
  std::thread poll([&] {
    cli::ApiClient c({url, token});
    auto first = c.Get("/api/v1/workloads?watch=1");
    answer = c.Get("/api/v1/workloads?watch=1&timeoutSeconds=300&resourceVersion=" +
                   std::to_string(first.body.value("resourceVersion", uint64_t{0})));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the poll start waiting
  EXPECT_EQ(server_->Terminate(), 0);
  poll.join();  // returns: the shutdown woke it (else the test would hang for 300 s)
  EXPECT_TRUE(answer.status == 200 || answer.status == 0) << answer.status << " " << answer.text;
  EXPECT_EQ(watcher.Wait(), 3) << watcher.err();
  EXPECT_TRUE(Contains(watcher.err(), "the watch ended")) << watcher.err();
}

// `logs -f` of a task that runs on while the server stops: the follow answered done, and the CLI
// exited 0 as if the task had ended (the probe of 2026-12-07). Now the answer is 503 "shutting
// down", and the CLI fails saying so.
TEST_F(WatchTest, AServerShutdownDoesNotEndALogFollowAsDone) {
  AgentProcess agent(*server_, "cpu-1", "");
  const std::string id = Submit("max",
                                "kind: TrainingJob\nname: long\nproject: t1/p1\nqueue: q1\nspec:\n"
                                "  command: [\"sh\", \"-c\", \"echo started; sleep 600\"]\n"
                                "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n");
  ASSERT_TRUE(WaitFor([&] {
    return Contains(As("max").Get("/api/v1/workloads/" + id + "/logs").body.value("content", ""), "started");
  }, std::chrono::seconds(30)));
  Background follower({"logs", "long", "-f"}, Env("max"));
  EXPECT_TRUE(WaitFor([&] { return Contains(follower.out(), "started"); })) << follower.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the next follow waits on the server
  EXPECT_EQ(server_->Terminate(), 0);
  EXPECT_NE(follower.Wait(), 0) << follower.out() << follower.err();
  EXPECT_TRUE(Contains(follower.err(), "shutting down") || Contains(follower.err(), "connect"))
      << follower.err();
}

TEST_F(WatchTest, LabelSelectorsKindAndUserFilterGetWorkloads) {
  Submit("max", Job("nlp-prod", "t1/p1", "q1", "team: nlp, stage: prod"));
  Submit("max", Job("nlp-dev", "t1/p1", "q1", "team: nlp, stage: dev"));
  Submit("max", Job("vision", "t1/p1", "q1", "team: vision"));
  Submit("max", Job("sweep", "t1/p1", "q1", "", "Experiment"));
  auto env = Env("max");
  auto names = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"get", "workloads", "-o", "name"});
    auto r = RunCli(args, env);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(names({"-l", "team=nlp"}), "workload/nlp-prod\nworkload/nlp-dev\n");
  EXPECT_EQ(names({"-l", "team=nlp,stage!=dev"}), "workload/nlp-prod\n");
  EXPECT_EQ(names({"-l", "stage"}), "workload/nlp-prod\nworkload/nlp-dev\n");
  EXPECT_EQ(names({"-l", "!team"}), "workload/sweep\n");
  EXPECT_EQ(names({"--kind", "Experiment"}), "workload/sweep\n");
  EXPECT_EQ(names({"--user", "max", "-l", "team=vision"}), "workload/vision\n");
  EXPECT_EQ(names({"--user", "mia"}), "");
  // The raw field.
  auto one = As("max").Get("/api/v1/workloads?labelSelector=team%3Dvision");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(one.body["items"][0]["submittedBy"], "max");
  // Malformed: exit 2 naming the bad part, on the client; 400 on the server.
  auto bad = RunCli({"get", "workloads", "-l", "team=nlp,=dev"}, env);
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(Contains(bad.err, "requirement '=dev' has no key")) << bad.err;
  EXPECT_EQ(As("max").Get("/api/v1/workloads?labelSelector=a%3D%3D%3D").status, 400);
  auto kind = RunCli({"get", "workloads", "--kind", "Trainingjob"}, env);
  EXPECT_EQ(kind.code, 2);
  EXPECT_TRUE(Contains(kind.err, "unknown workload kind 'Trainingjob'")) << kind.err;
  auto elsewhere = RunCli({"get", "nodes", "-l", "a=b"}, env);
  EXPECT_EQ(elsewhere.code, 2);
  EXPECT_TRUE(Contains(elsewhere.err, "-l filters workloads only")) << elsewhere.err;
  // The evaluations' filters elsewhere: refused, not ignored (the probe of 2026-12-07 listed
  // every workload for `get workloads --model m1`, exit 0).
  for (const std::vector<std::string>& args : {std::vector<std::string>{"get", "workloads", "--model", "m1"},
                                               std::vector<std::string>{"get", "nodes", "--baseline", "1.0"}}) {
    auto ignored = RunCli(args, env);
    EXPECT_EQ(ignored.code, 2) << args[1];
    EXPECT_TRUE(Contains(ignored.err, "filters evaluations only, not " + args[1])) << ignored.err;
  }
}

// report -l: the same selector chooses the workloads a report counts (issue 23).
TEST_F(WatchTest, ReportsCountOnlyTheWorkloadsALabelSelectorChooses) {
  Submit("max", Job("nlp-prod", "t1/p1", "q1", "team: nlp, stage: prod"));
  Submit("max", Job("nlp-dev", "t1/p1", "q1", "team: nlp, stage: dev"));
  Submit("max", Job("vision", "t1/p1", "q1", "team: vision"));
  const std::vector<std::string> admin = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
  auto pending = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"report", "wait", "--by", "queue", "-o", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunCli(args, admin);
    EXPECT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    int64_t n = 0;
    if (j.is_object()) {
      for (const auto& row : j["rows"]) n += row.value("pending", int64_t{0});
    }
    return n;
  };
  EXPECT_EQ(pending({}), 3);
  EXPECT_EQ(pending({"-l", "team=nlp"}), 2);
  EXPECT_EQ(pending({"-l", "team=nlp,stage!=dev"}), 1);
  EXPECT_EQ(pending({"-l", "team=none"}), 0);
  auto bad = RunCli({"report", "wait", "-l", "=x"}, admin);
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(Contains(bad.err, "has no key")) << bad.err;
}

// An array task's retry knows it is one: ABACUS_ATTEMPT counts its index's retries (the probe
// of 2026-12-07 saw every run of a retried index print attempt=1, so a retry could not resume).
TEST_F(WatchTest, AnArrayTasksRetryRunsAsItsNextAttempt) {
  AgentProcess agent(*server_, "cpu-1", "");
  const std::string id = Submit("max",
                                "kind: BatchJob\nname: retried\nproject: t1/p1\nqueue: q1\nspec:\n"
                                "  command: [\"sh\", \"-c\", \"echo idx=$ABACUS_TASK_INDEX attempt=$ABACUS_ATTEMPT "
                                "resume=${ABACUS_RESUME:-0}; test $ABACUS_TASK_INDEX = 0 || test $ABACUS_ATTEMPT -ge 2\"]\n"
                                "  restartPolicy: {maxRetries: 1, backoffSeconds: 0}\n"
                                "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n"
                                "  tasks: 2\n  parallelism: 1\n");
  auto state = [&] { return As("max").Get("/api/v1/workloads/" + id).body.value("state", ""); };
  ASSERT_TRUE(WaitFor([&] { return state() == "Succeeded" || state() == "Failed"; }, std::chrono::seconds(60)))
      << state();
  EXPECT_EQ(state(), "Succeeded");
  auto all = RunCli({"logs", "retried", "--all-tasks"}, Env("max"));
  ASSERT_EQ(all.code, 0) << all.err;
  for (const char* line : {"idx=0 attempt=1 resume=0", "idx=1 attempt=1 resume=0", "idx=1 attempt=2 resume=1"}) {
    EXPECT_TRUE(Contains(all.out, line)) << line << " in " << all.out;
  }
}

// logs --all-tasks (every array task, prefixed), --previous (the attempt before), --tail N
// lines, -f (follows until the task ends) with a real agent; another tenant reaches none of it.
TEST_F(WatchTest, LogsOfEveryTaskThePreviousAttemptAndFollow) {
  AgentProcess agent(*server_, "cpu-1", "");
  auto state_of = [&](const std::string& id) {
    auto r = As("max").Get("/api/v1/workloads/" + id);
    return r.ok() ? r.body.value("state", "") : "";
  };
  const std::string array = Submit("max",
                                   "kind: BatchJob\nname: arr\nproject: t1/p1\nqueue: q1\nspec:\n"
                                   "  command: [\"sh\", \"-c\", \"echo task $ABACUS_TASK_INDEX; echo last line\"]\n"
                                   "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n"
                                   "  tasks: 3\n  parallelism: 1\n");
  const std::string flaky = Submit("max",
                                   "kind: TrainingJob\nname: flaky\nproject: t1/p1\nqueue: q1\nspec:\n"
                                   "  command: [\"sh\", \"-c\", \"echo attempt $ABACUS_ATTEMPT; "
                                   "test $ABACUS_ATTEMPT -ge 2\"]\n"
                                   "  restartPolicy: {maxRetries: 1, backoffSeconds: 0}\n"
                                   "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n");
  ASSERT_TRUE(WaitFor([&] { return state_of(array) == "Succeeded"; }, std::chrono::seconds(60))) << state_of(array);
  ASSERT_TRUE(WaitFor([&] { return state_of(flaky) == "Succeeded"; }, std::chrono::seconds(60))) << state_of(flaky);
  auto env = Env("max");
  auto all = RunCli({"logs", "arr", "--all-tasks"}, env);
  ASSERT_EQ(all.code, 0) << all.err;
  for (const char* line : {"task 0", "task 1", "task 2"}) EXPECT_TRUE(Contains(all.out, line)) << all.out;
  EXPECT_TRUE(Contains(all.out, "[" + array + ".0.0.1] ")) << all.out;
  auto tail = RunCli({"logs", "arr", "--all-tasks", "--tail", "1"}, env);
  ASSERT_EQ(tail.code, 0) << tail.err;
  EXPECT_FALSE(Contains(tail.out, "task 0")) << tail.out;
  EXPECT_TRUE(Contains(tail.out, "last line")) << tail.out;
  auto current = RunCli({"logs", "flaky"}, env);
  ASSERT_EQ(current.code, 0) << current.err;
  EXPECT_EQ(current.out, "attempt 2\n");
  auto previous = RunCli({"logs", "flaky", "--previous"}, env);
  ASSERT_EQ(previous.code, 0) << previous.err;
  EXPECT_EQ(previous.out, "attempt 1\n");
  auto none = RunCli({"logs", "arr", "--previous"}, env);
  EXPECT_EQ(none.code, 1);
  EXPECT_TRUE(Contains(none.err, "no earlier attempt")) << none.err;
  // Another tenant: neither flag reaches max's tasks (404 as for any workload it may not see).
  for (std::vector<std::string> args : {std::vector<std::string>{"logs", array, "--all-tasks"},
                                        {"logs", flaky, "--previous"},
                                        {"logs", "arr", "--all-tasks"}}) {
    auto r = RunCli(args, Env("mia"));
    EXPECT_EQ(r.code, 1) << args[1];
    EXPECT_TRUE(Contains(r.err, "not found")) << r.err;
    EXPECT_FALSE(Contains(r.out, "task 0")) << r.out;
  }
  EXPECT_EQ(As("mia").Get("/api/v1/workloads/" + array + "/tasks").status, 404);
  EXPECT_EQ(As("mia").Get("/api/v1/workloads/" + flaky + "/logs?follow=1").status, 404);
  // -f: prints what there is, then what comes, and ends with the task.
  const std::string slow = Submit("max",
                                  "kind: TrainingJob\nname: slow\nproject: t1/p1\nqueue: q1\nspec:\n"
                                  "  command: [\"sh\", \"-c\", \"echo start; sleep 3; echo end\"]\n"
                                  "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n");
  // Started before the task wrote anything: it waits for the first output.
  auto follow = RunCli({"logs", "slow", "-f"}, env);
  EXPECT_EQ(follow.code, 0) << follow.err;
  EXPECT_EQ(follow.out, "start\nend\n");
  EXPECT_TRUE(WaitFor([&] { return state_of(slow) == "Succeeded"; })) << state_of(slow);
  auto both = RunCli({"logs", "slow", "-f", "--all-tasks"}, env);
  EXPECT_EQ(both.code, 2);

  // describe, for people: ages and durations, every task that ran (both attempts of flaky,
  // each array task of arr) with node, attempt and exit code; the events.
  auto described = RunCli({"describe", "workload", "flaky"}, env);
  ASSERT_EQ(described.code, 0) << described.err;
  for (const std::string& part : {std::string("Tasks:"), flaky + ".0.0.1", flaky + ".0.0.2", std::string("cpu-1"),
                                  std::string("Exited"), std::string("Events:"), std::string("Submitted:"),
                                  std::string("by max"), std::string("(attempt 2)")}) {
    EXPECT_TRUE(Contains(described.out, part)) << part << "\n" << described.out;
  }
  EXPECT_FALSE(Contains(described.out, "submittedUs")) << described.out;
  auto arr_described = RunCli({"describe", "workload", "arr"}, env);
  ASSERT_EQ(arr_described.code, 0) << arr_described.err;
  for (const char* run : {".0.0.1 ", ".0.0.1.1", ".0.0.1.2"}) {
    EXPECT_TRUE(Contains(arr_described.out, array + run)) << run << "\n" << arr_described.out;
  }
  // Every array task with its node and exit code, not only the slot's last run.
  size_t exited_rows = 0;
  for (size_t at = arr_described.out.find("cpu-1"); at != std::string::npos; at = arr_described.out.find("cpu-1", at + 1)) {
    ++exited_rows;
  }
  EXPECT_GE(exited_rows, 3u) << arr_described.out;
  EXPECT_TRUE(Contains(described.out, flaky + ".0.0.1  cpu-1")) << described.out;  // the failed first attempt
  auto raw = RunCli({"describe", "workload", "flaky", "-o", "yaml"}, env);
  ASSERT_EQ(raw.code, 0) << raw.err;
  EXPECT_TRUE(Contains(raw.out, "submittedUs")) << raw.out;
  auto node = RunCli({"describe", "node", "cpu-1"},
                     {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()});
  ASSERT_EQ(node.code, 0) << node.err;
  EXPECT_TRUE(Contains(node.out, "GiB")) << node.out;
  EXPECT_TRUE(Contains(node.out, "Devices:")) << node.out;
}

TEST_F(WatchTest, DescribeNodeShowsDevicesInGiBWithTheirHolders) {
  auto admin = server_->Client();
  ASSERT_EQ(admin.Post("/api/v1/nodes", H100Node("h100-a").dump(), "application/json").status, 201);
  auto r = RunCli({"describe", "node", "h100-a"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "80 GiB")) << r.out;
  EXPECT_TRUE(Contains(r.out, "HELD BY")) << r.out;
  EXPECT_TRUE(Contains(r.out, "gpu/nvidia/H100-80G")) << r.out;
  EXPECT_FALSE(Contains(r.out, "memoryBytes")) << r.out;
}

}  // namespace
}  // namespace abacus::testing

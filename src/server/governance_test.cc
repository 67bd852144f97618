// Governance without HTTP: the rate limiter, role checks of apply and submit, admission labels,
// API tokens persisted across a restart, and decisions appended to the audit chain.
#include "server/governance.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "workload/documents.h"

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

RoleBinding Bind(Role role, std::string tenant = "", std::string project = "") {
  RoleBinding b;
  b.role = role;
  b.tenant = std::move(tenant);
  b.project = std::move(project);
  return b;
}

TEST(RateLimiterTest, BurstThenRateThenRefill) {
  RateLimiter limiter(10, 3);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Take("tok-a", t0), 0) << i;
  double wait = limiter.Take("tok-a", t0);
  EXPECT_NEAR(wait, 0.1, 1e-9);                 // one token every 100 ms
  EXPECT_EQ(limiter.Take("tok-b", t0), 0);      // buckets are per key
  EXPECT_EQ(limiter.Take("tok-a", t0 + 100ms), 0);
  EXPECT_GT(limiter.Take("tok-a", t0 + 100ms), 0);
  // A long pause refills up to the burst, not beyond.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Take("tok-a", t0 + 10s), 0) << i;
  EXPECT_GT(limiter.Take("tok-a", t0 + 10s), 0);
}

TEST(RateLimiterTest, ZeroRateIsUnlimitedAndBurstDefaultsToTwiceTheRate) {
  RateLimiter off(0, 0);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(off.Take("k", t0), 0);
  RateLimiter two(2, 0);
  EXPECT_EQ(two.burst(), 4);
}

class GovernanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("abacus-gov-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    auto store = OpenStore("memory://", {&clock_});
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    Reopen();
  }
  void TearDown() override {
    gov_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    gov_.reset();
    auto boot = TokenAuthorizer::Open(*store_, dir_.string());
    ASSERT_TRUE(boot.ok());
    boot_ = std::move(*boot);
    auto gov = Governance::Open(*store_, clock_, *boot_);
    ASSERT_TRUE(gov.ok()) << gov.status().ToString();
    gov_ = std::move(*gov);
  }
  // Applies `yaml` as `who` (null: trusted) through PlanApply, staging and committing like
  // ControlPlane::Apply does for governance documents; tenancy documents go into `config_`.
  Status Apply(const govern::Principal* who, const std::string& yaml) {
    ParsedDocuments parsed = ParseDocuments(yaml, "t.yaml");
    if (!parsed.diagnostics.empty()) return parsed.diagnostics.ToStatus();
    auto plan = gov_->PlanApply(who, parsed.documents, parsed.extensions, parsed.governance, config_, nullptr);
    if (!plan.ok()) return plan.status();
    WriteBatch batch;
    std::vector<AppliedView> out;
    (*plan)->Stage(batch, out);
    if (!batch.empty()) {
      Status st = store_->Commit(batch);
      if (!st.ok()) return st;
    }
    (*plan)->Committed();
    // As the server holds it: a document replaces the one of its kind and name.
    for (Document& d : parsed.documents) {
      std::string key = std::string(d.kind()) + "/" + d.name();
      auto it = std::find_if(applied_.begin(), applied_.end(), [&](const auto& a) { return a.first == key; });
      if (it == applied_.end()) {
        applied_.emplace_back(key, std::move(d));
      } else {
        it->second = std::move(d);
      }
    }
    std::vector<Document> all;
    for (const auto& a : applied_) all.push_back(a.second);
    config_ = TenancyConfig{};
    Diagnostics diags;
    AddToTenancyConfig(all, config_, diags);
    return Status::OK();
  }
  Status Submit(const govern::Principal* who, const std::string& yaml, std::vector<Document>* out = nullptr) {
    ParsedDocuments parsed = ParseDocuments(yaml, "job.yaml");
    if (!parsed.diagnostics.empty()) return parsed.diagnostics.ToStatus();
    Status st = gov_->CheckSubmit(who, parsed.documents, nullptr);
    if (out != nullptr) *out = parsed.documents;
    return st;
  }

  ManualClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TokenAuthorizer> boot_;
  std::unique_ptr<Governance> gov_;
  TenancyConfig config_;
  std::vector<std::pair<std::string, Document>> applied_;  // kind/name → the document, in apply order
};

constexpr char kQueue[] = "kind: Queue\nname: q1\ntenant: t1\nquotas:\n  - {resource: cpu, nominal: 8}\n";

std::string Job(const std::string& project, const std::string& image) {
  return "kind: TrainingJob\nname: j\nproject: " + project + "\nqueue: q1\nspec:\n" +
         (image.empty() ? "" : "  image: " + image + "\n") +
         "  command: [\"true\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n";
}

TEST_F(GovernanceTest, ApplyChecksRolesPerDocument) {
  auto admin = govern::Principal::User("ann", {Bind(Role::kAdmin)});
  auto tia = govern::Principal::User("tia", {Bind(Role::kTenantAdmin, "t1")});
  auto max = govern::Principal::User("max", {Bind(Role::kMember, "", "t1/p1")});
  ASSERT_TRUE(Apply(&admin, "kind: Tenant\nname: t1\n---\nkind: Tenant\nname: t2\n").ok());
  // A tenant-admin changes its own tenant's queues (not their quotas: the platform's), not
  // another's, not tenants.
  EXPECT_TRUE(Apply(&tia, "kind: Queue\nname: q1\ntenant: t1\n").ok());
  Status quota = Apply(&tia, kQueue);
  EXPECT_EQ(quota.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(quota.message().find("quotas[cpu].nominal (none → 8)"), std::string::npos) << quota.message();
  EXPECT_TRUE(Apply(&admin, kQueue).ok());
  Status ours = Apply(&tia, std::string(kQueue) + "description: ours\n");
  EXPECT_TRUE(ours.ok()) << ours.ToString();
  Status other = Apply(&tia, "kind: Queue\nname: q2\ntenant: t2\n");
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(other.message().find("t.yaml:1"), std::string::npos) << other.message();
  EXPECT_EQ(Apply(&tia, "kind: Tenant\nname: t1\n").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Apply(&tia, "kind: Cohort\nname: c\n").code(), StatusCode::kPermissionDenied);
  // Moving a queue to another tenant needs the right over the tenant it leaves.
  auto tib = govern::Principal::User("tib", {Bind(Role::kTenantAdmin, "t2")});
  EXPECT_EQ(Apply(&tib, std::string(kQueue).replace(std::string(kQueue).find("t1"), 2, "t2")).code(),
            StatusCode::kPermissionDenied);
  // A member changes no configuration.
  Status member = Apply(&max, kQueue);
  EXPECT_EQ(member.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(member.message().find("may not"), std::string::npos) << member.message();
  // Users: admins only; policies: the tenants they cover.
  EXPECT_EQ(Apply(&tia, "kind: User\nname: bob\nroles: [{role: viewer}]\n").code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Apply(&admin, "kind: User\nname: bob\nroles: [{role: viewer}]\n").ok());
  EXPECT_TRUE(gov_->registry().FindUser("bob").has_value());
  const char* own = "kind: AdmissionPolicy\nname: p\ntenants: [t1]\nspec: {network: internal}\n";
  EXPECT_TRUE(Apply(&tia, own).ok());
  EXPECT_EQ(Apply(&tia, "kind: AdmissionPolicy\nname: g\nspec: {network: isolated}\n").code(),
            StatusCode::kPermissionDenied);  // every tenant: admin only
  EXPECT_EQ(Apply(&tia, "kind: AdmissionPolicy\nname: p\ntenants: [t1, t2]\nspec: {network: internal}\n").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(Apply(&tib, "kind: AdmissionPolicy\nname: p\ntenants: [t2]\nspec: {}\n").code(),
            StatusCode::kAlreadyExists);  // taking over t1's policy: a name taken, owner untold
  ASSERT_EQ(gov_->Policies().size(), 1u);
}

// Probe report §2 and §3: another tenant's queue or policy is, for a caller who cannot see it,
// a missing one — the field check never quotes it, no message names its tenant — and where a
// missing name would be created, the name is taken (AlreadyExists), whoever holds it.
TEST_F(GovernanceTest, AnotherTenantsQueueOrPolicyAnswersLikeAMissingOne) {
  auto admin = govern::Principal::User("ann", {Bind(Role::kAdmin)});
  auto tib = govern::Principal::User("tib", {Bind(Role::kTenantAdmin, "t2")});
  ASSERT_TRUE(Apply(&admin, "kind: Tenant\nname: t1\n---\nkind: Tenant\nname: t2\n").ok());
  ASSERT_TRUE(Apply(&admin, std::string(kQueue) + "weight: 7\n").ok());
  ASSERT_TRUE(Apply(&admin, "kind: AdmissionPolicy\nname: p\ntenants: [t1]\nspec: {network: internal}\n").ok());
  auto as_tib = [&](const std::string& yaml, const std::string& name) {
    Status st = Apply(&tib, yaml);
    std::string text = st.ToString();
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 4)) {
      text.replace(at, name.size(), "NAME");
    }
    EXPECT_EQ(text.find("t1"), std::string::npos) << st.ToString();
    EXPECT_EQ(text.find("8"), std::string::npos) << st.ToString();
    EXPECT_EQ(text.find("7"), std::string::npos) << st.ToString();
    return text;
  };
  for (const std::string rest : {"quotas:\n  - {resource: memory, nominal: 1}\n", "weight: 2\n", "cohort: c\n"}) {
    EXPECT_EQ(as_tib("kind: Queue\nname: q1\ntenant: t2\n" + rest, "q1"),
              as_tib("kind: Queue\nname: qx\ntenant: t2\n" + rest, "qx"))
        << rest;
  }
  EXPECT_TRUE(Apply(&tib, "kind: Queue\nname: qx\ntenant: t2\n").ok());  // a missing name is created
  Status queue = Apply(&tib, "kind: Queue\nname: q1\ntenant: t2\n");     // a hidden one is taken
  EXPECT_EQ(queue.code(), StatusCode::kAlreadyExists) << queue.ToString();
  as_tib("kind: Queue\nname: q1\ntenant: t2\n", "q1");
  Status policy = Apply(&tib, "kind: AdmissionPolicy\nname: p\ntenants: [t2]\nspec: {}\n");
  EXPECT_EQ(policy.code(), StatusCode::kAlreadyExists) << policy.ToString();
  as_tib("kind: AdmissionPolicy\nname: p\ntenants: [t2]\nspec: {}\n", "p:");
  EXPECT_EQ(config_.FindQueue("q1")->tenant, "t1");
  EXPECT_EQ(gov_->Policies().size(), 1u);
  // The admin, who sees both, keeps the detailed answer.
  Status detailed = Apply(&admin, "kind: Queue\nname: q1\ntenant: t1\n");
  EXPECT_TRUE(detailed.ok()) << detailed.ToString();
}

TEST_F(GovernanceTest, SubmitChecksRolesAndAdmission) {
  ASSERT_TRUE(Apply(nullptr,
                    "kind: AdmissionPolicy\nname: t1-rules\ntenants: [t1]\nspec:\n  images: {allowedRegistries: "
                    "[registry.local]}\n  network: internal\n  pools: [train]\n")
                  .ok());
  auto max = govern::Principal::User("max", {Bind(Role::kMember, "", "t1/p1")});
  std::vector<Document> docs;
  ASSERT_TRUE(Submit(&max, Job("t1/p1", "registry.local/x:1"), &docs).ok());
  const Workload* w = docs[0].workload();
  EXPECT_EQ(w->labels.at(std::string(kNetworkLabel)), "internal");
  EXPECT_EQ(w->labels.at(std::string(kAllowedPoolsLabel)), "train");
  EXPECT_EQ(w->admission.pools, (std::vector<std::string>{"train"}));  // the typed outcome the labels show
  ASSERT_TRUE(w->admission.network.has_value());
  EXPECT_EQ(*w->admission.network, NetworkClass::kInternal);
  Status bad = Submit(&max, Job("t1/p1", "docker.io/x:1"));
  EXPECT_EQ(bad.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(bad.message().find("policy t1-rules: image registry docker.io is not allowed"), std::string::npos)
      << bad.message();
  EXPECT_NE(bad.message().find("job.yaml:1"), std::string::npos) << bad.message();
  // Another project: refused by role before any policy.
  Status other = Submit(&max, Job("t1/p2", "registry.local/x:1"));
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(other.message().find("may not create"), std::string::npos) << other.message();
  // Policies bind trusted callers too; other tenants are untouched by t1's policy.
  EXPECT_EQ(Submit(nullptr, Job("t1/p1", "")).code(), StatusCode::kOk);  // images.requireImage not set
  EXPECT_EQ(Submit(nullptr, Job("t1/p1", "quay.io/x:1")).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Submit(nullptr, Job("t2/p1", "quay.io/x:1")).ok());
}

TEST_F(GovernanceTest, TokensAuthenticateAndSurviveARestart) {
  ASSERT_TRUE(Apply(nullptr, "kind: User\nname: alice\nroles: [{role: member, project: t1/p1}]\n").ok());
  auto admin = govern::Principal::User("admin", {Bind(Role::kAdmin)});
  auto issued = gov_->IssueToken(admin, "alice", "laptop", 24h, nullptr);
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  std::string secret = issued->secret;
  std::string id = issued->token.record.id;
  EXPECT_EQ(secret.size(), 64u);
  EXPECT_TRUE(issued->token.record.hash.empty());  // an answer never holds the stored hash
  auto caller = gov_->Authenticate(secret);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->via, Caller::Via::kApiToken);
  EXPECT_EQ(caller->Actor(), "user alice");
  EXPECT_EQ(caller->RateKey(), id);
  // Alice manages her own tokens only.
  EXPECT_EQ(gov_->IssueToken(caller->principal, "bob", "", std::nullopt, nullptr).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(gov_->ListTokens(caller->principal, "").size(), 1u);
  // The store keeps the hash only.
  auto stored = store_->Get(govern::kTokenStoreKind, id);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->json.find(secret), std::string::npos);

  Reopen();  // a restart: the token still works, then is revoked, which also persists
  ASSERT_TRUE(gov_->Authenticate(secret).ok());
  std::string admin_token;
  std::ifstream(dir_ / "admin.token") >> admin_token;
  auto bootstrap_admin = gov_->Authenticate(admin_token);
  ASSERT_TRUE(bootstrap_admin.ok());
  EXPECT_EQ(bootstrap_admin->via, Caller::Via::kAdminToken);
  EXPECT_TRUE(bootstrap_admin->principal.HasRole(Role::kAdmin));
  ASSERT_TRUE(gov_->RevokeToken(admin, id, nullptr).ok());
  Reopen();
  auto refused = gov_->Authenticate(secret);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("revoked"), std::string::npos);
  // Expiry.
  auto short_lived = gov_->IssueToken(admin, "alice", "", 1h, nullptr);
  ASSERT_TRUE(short_lived.ok());
  clock_.Advance(2h);
  EXPECT_FALSE(gov_->Authenticate(short_lived->secret).ok());
}

TEST_F(GovernanceTest, DecisionsJoinTheChain) {
  gov_->AppendDecision("scheduler", "admit", "workload", "t1/p1/j", "t1", "{\"state\":\"Pending\"}",
                       "{\"state\":\"Admitted\"}");
  govern::AuditRecord r;
  r.actor = "user admin";
  r.action = "cancel";
  r.object_kind = "workload";
  r.object_name = "t1/p1/j";
  r.request_id = "req-1";
  r.result = "ok";
  ASSERT_TRUE(gov_->WaitAudit(gov_->EnqueueAudit(r)).ok());
  gov_->FlushAudit();
  auto entries = gov_->ReadAudit({});
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].record.action, "admit");
  EXPECT_EQ((*entries)[1].record.request_id, "req-1");
  auto report = gov_->VerifyAudit();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
  Reopen();  // the chain resumes after a restart
  gov_->AppendDecision("scheduler", "preempt", "workload", "t1/p1/j", "t1", "", "");
  gov_->FlushAudit();
  report = gov_->VerifyAudit();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
  EXPECT_EQ(report->checked, 3);
}

// A quota change is a decision that touches a user's work: it joins the chain with the queue's
// quotas before and after, and who made it; a queue applied again unchanged is not one.
TEST_F(GovernanceTest, QuotaChangesJoinTheChain) {
  auto ann = govern::Principal::User("ann", {Bind(Role::kAdmin)});
  ASSERT_TRUE(Apply(nullptr, "kind: Tenant\nname: t1\n").ok());
  ASSERT_TRUE(Apply(&ann, kQueue).ok());
  ASSERT_TRUE(Apply(&ann, kQueue).ok());  // unchanged
  std::string bigger = kQueue;
  bigger.replace(bigger.find("nominal: 8"), 10, "nominal: 16");
  ASSERT_TRUE(Apply(&ann, bigger).ok());
  gov_->FlushAudit();
  auto entries = gov_->ReadAudit({});
  ASSERT_TRUE(entries.ok());
  std::vector<govern::AuditRecord> changes;
  for (const auto& e : *entries) {
    if (e.record.action == "quota-change") changes.push_back(e.record);
  }
  ASSERT_EQ(changes.size(), 2u);  // created with quotas, then raised
  EXPECT_EQ(changes[0].before, "");
  EXPECT_EQ(changes[1].actor, "user ann");
  EXPECT_EQ(changes[1].object_kind, "queue");
  EXPECT_EQ(changes[1].object_name, "q1");
  EXPECT_EQ(changes[1].tenant, "t1");
  EXPECT_NE(changes[1].before.find("\"8\""), std::string::npos) << changes[1].before;
  EXPECT_NE(changes[1].after.find("\"16\""), std::string::npos) << changes[1].after;
  auto report = gov_->VerifyAudit();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
}

// A request's change and its audit entry commit together (CommitAudited): the writer joins
// concurrent callers into one commit, and a caller whose batch conflicts fails alone — its entry
// is not written, the others' are, and the chain stays whole.
TEST_F(GovernanceTest, CommitAuditedWritesEachBatchWithItsEntryAndAConflictFailsAlone) {
  ASSERT_TRUE(store_->Commit(WriteBatch().Put("thing", "taken", "{}", 0)).ok());
  constexpr int kRounds = 20, kCallers = 8;
  std::set<std::string> committed_ids;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::thread> callers;
    std::vector<Status> statuses(kCallers);
    std::vector<CommitResult> results(kCallers);
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        // Caller 0 of each round asks for a key that exists: its batch conflicts.
        std::string key = c == 0 ? "taken" : "k-" + std::to_string(round) + "-" + std::to_string(c);
        WriteBatch batch;
        batch.Put("thing", key, "{\"n\":" + std::to_string(c) + "}", 0);
        batch.AppendEvent("thing", key, "Created", "{}", clock_.Now());
        govern::AuditRecord r;
        r.actor = "user admin";
        r.action = "create";
        r.object_kind = "thing";
        r.object_name = key;
        r.result = "ok";
        r.request_id = "req-" + std::to_string(round) + "-" + std::to_string(c);
        statuses[c] = gov_->CommitAudited(batch, r, &results[c]);
      });
      if (c % 3 == 0) gov_->AppendDecision("scheduler", "admit", "workload", "w", "t1", "", "");
    }
    for (auto& t : callers) t.join();
    EXPECT_EQ(statuses[0].code(), StatusCode::kAborted) << statuses[0].ToString();
    for (int c = 1; c < kCallers; ++c) {
      ASSERT_TRUE(statuses[c].ok()) << statuses[c].ToString();
      ASSERT_EQ(results[c].assigned.size(), 2u);  // the caller's own ops only
      EXPECT_EQ(results[c].assigned[0], 1);       // the new object's version
      committed_ids.insert("req-" + std::to_string(round) + "-" + std::to_string(c));
    }
  }
  gov_->FlushAudit();
  auto entries = gov_->ReadAudit({});
  ASSERT_TRUE(entries.ok());
  std::set<std::string> audited;
  for (const auto& e : *entries) {
    if (e.record.action == "create") {
      EXPECT_TRUE(audited.insert(e.record.request_id).second) << "twice: " << e.record.request_id;
    }
  }
  EXPECT_EQ(audited, committed_ids);  // every committed batch has its entry; no failed one has
  auto things = store_->List("thing");
  ASSERT_TRUE(things.ok());
  EXPECT_EQ(things->size(), 1u + kRounds * (kCallers - 1));
  auto report = gov_->VerifyAudit();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
}

// A request may carry any byte in a token id or path; the chain is JSON: such bytes become '?'
// before the entry is sealed (the writer would otherwise throw while encoding it).
TEST_F(GovernanceTest, AuditFieldsAreMadeUtf8) {
  govern::AuditRecord r;
  r.actor = "user admin";
  r.action = "token-revoke";
  r.object_kind = "token";
  r.object_name = std::string("tok-\xff\xfe") + "ok" + "\xc3\xa9";  // two bad bytes, then "ok" and a good "é"
  r.result = "404: token \xff not found";
  ASSERT_TRUE(gov_->WaitAudit(gov_->EnqueueAudit(r)).ok());
  auto entries = gov_->ReadAudit({});
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].record.object_name, "tok-??ok\xc3\xa9");
  EXPECT_EQ((*entries)[0].record.result, "404: token ? not found");
  EXPECT_NO_THROW((void)govern::AuditEntryToJson((*entries)[0]).dump());
  auto report = gov_->VerifyAudit();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
}

}  // namespace
}  // namespace abacus::server

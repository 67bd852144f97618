// Secrets end to end with real processes (issue 24): a member creates a secret of its project, a
// TrainingJob takes one key as an env var, every key as envFrom and the secret as files; its task
// prints only whether the variable holds the expected value (its spec holds the value's SHA-256,
// not the value) and the file's mode. Then a canary
// search: the value is in no API answer (workload, events, secrets list, audit), in no task log,
// in no file of the server's data folder (the store holds it sealed), in no file of the agent's
// work folder outside the task's secrets directory and in neither process's debug log. Another tenant's member can neither
// list nor reference it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "child_stderr.h"
#include "govern/crypto.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kCanary[] = "canary-7f3e9b21-do-not-leak";

constexpr char kMia[] = R"(kind: User
name: mia
roles: [{role: member, project: acme/ml}]
)";

std::string Job(const std::string& name, const std::string& project, const std::string& queue) {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         "\nspec:\n"
         "  command: [\"sh\", \"-c\", \"[ \\\"$(printf %s \\\"$DB_PASSWORD\\\" | sha256sum | cut -c1-64)\\\" = " +
         govern::Sha256Hex(kCanary) + " ] && echo env-ok; [ \\\"$password\\\" = \\\"$DB_PASSWORD\\\" ] && echo envfrom-ok; "
         "stat -c 'mode=%a' \\\"$ABACUS_SECRETS_DIR/db/password\\\"; "
         "[ \\\"$(cat secrets/db/password)\\\" = \\\"$DB_PASSWORD\\\" ] && echo file-ok\"]\n"
         "  env:\n    - {name: DB_PASSWORD, secretRef: {secret: db-creds, key: password}}\n"
         "  envFrom: [{secret: db-creds}]\n"
         "  secretMounts: [{secret: db-creds, path: db}]\n"
         "  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n";
}

bool FilesHold(const fs::path& root, const std::string& text, const std::string& skip_dir, std::string* where) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory() && it->path().filename() == skip_dir) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    if (ReadFile(it->path().string()).find(text) != std::string::npos) {
      *where = it->path().string();
      return true;
    }
  }
  return false;
}

TEST(SecretsTest, ATaskGetsItsSecretAndTheValueLeaksNowhere) {
  TempDir dir, log_dir;
  const std::string log_file = log_dir.path() + "/server-and-agent.log";
  ChildStderrTo capture(log_file);  // the server's and the agent's logs, at debug level
  const std::string config = log_dir.path() + "/debug.yaml";
  { std::ofstream(config) << "log-level: debug\n"; }
  ServerProcess server(dir.path(), {"--config", config});
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", kMia, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", kBetaTenant, "application/yaml").status, 200);
  auto token_of = [&](const std::string& user) {
    auto r = admin.Post("/api/v1/tokens", json({{"user", user}}).dump(), "application/json");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body.value("token", "");
  };
  cli::ApiClient mia({server.url(), token_of("mia")});
  cli::ApiClient bea({server.url(), token_of("bea")});
  AgentProcess agent(server, "cpu-a", "", {"--config", config});

  // Created by a member of the project (CLI); the answer names keys, never values.
  CliResult created = RunCli({"secret", "create", "db-creds", "-p", "acme/ml", "--from-literal",
                              std::string("password=") + kCanary, "--server", server.url(), "--token",
                              mia.config().token});
  ASSERT_EQ(created.code, 0) << created.err;
  EXPECT_EQ(created.out.find(kCanary), std::string::npos);
  // Not in another tenant's project, not by its member.
  auto foreign = bea.Post("/api/v1/secrets", json({{"name", "x"}, {"project", "acme/ml"}, {"stringData", {{"k", "v"}}}}).dump(),
                          "application/json");
  EXPECT_EQ(foreign.status, 403) << foreign.text;
  EXPECT_TRUE(bea.Get("/api/v1/secrets").body["items"].empty());
  EXPECT_EQ(bea.Delete("/api/v1/secrets/db-creds?project=acme/ml").status, 404);
  // bea's workload names the same secret: it resolves in bea's own project, where there is none.
  auto stolen = bea.Post("/api/v1/workloads", Job("steal", "beta/lab", "train"), "application/yaml");
  EXPECT_NE(stolen.status, 201) << stolen.text;

  auto submitted = mia.Post("/api/v1/workloads", Job("uses-secret", "acme/ml", "train"), "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["items"][0]["id"];
  auto state = [&] { return admin.Get("/api/v1/workloads/" + id).body.value("state", ""); };
  ASSERT_TRUE(WaitFor([&] { return state() == "Succeeded" || state() == "Failed"; }, std::chrono::seconds(60)))
      << admin.Get("/api/v1/workloads/" + id).text;
  auto logs = admin.Get("/api/v1/workloads/" + id + "/logs");
  ASSERT_EQ(logs.status, 200);
  EXPECT_NE(logs.text.find("env-ok"), std::string::npos) << logs.text;
  EXPECT_NE(logs.text.find("envfrom-ok"), std::string::npos) << logs.text;
  EXPECT_NE(logs.text.find("mode=400"), std::string::npos) << logs.text;
  EXPECT_NE(logs.text.find("file-ok"), std::string::npos) << logs.text;
  EXPECT_EQ(state(), "Succeeded");

  // The canary search.
  for (const std::string& path :
       {"/api/v1/workloads/" + id, "/api/v1/workloads/" + id + "/events", "/api/v1/workloads/" + id + "/logs",
        std::string("/api/v1/workloads"), std::string("/api/v1/secrets"), std::string("/api/v1/audit"),
        std::string("/api/v1/events")}) {
    auto r = admin.Get(path);
    EXPECT_EQ(r.text.find(kCanary), std::string::npos) << path;
  }
  CliResult described = RunCli({"describe", "workload", id, "--server", server.url(), "--token", server.token()});
  EXPECT_EQ(described.out.find(kCanary), std::string::npos);
  std::string where;
  EXPECT_FALSE(FilesHold(server.data_dir(), kCanary, "", &where)) << where;
  EXPECT_FALSE(FilesHold(agent.work_dir(), kCanary, "secrets", &where)) << where;
  const std::string logged = ReadFile(log_file);
  EXPECT_NE(logged.find("agent"), std::string::npos) << "the logs were not captured";
  EXPECT_EQ(logged.find(kCanary), std::string::npos) << "a log holds the value";
  // Audited: the creation and the use, naming the secret, never the value.
  auto audit = admin.Get("/api/v1/audit");
  EXPECT_NE(audit.text.find("secret-create"), std::string::npos);
  EXPECT_NE(audit.text.find("secret-use"), std::string::npos) << audit.text;
  EXPECT_NE(audit.text.find("acme/ml/db-creds"), std::string::npos);
}

// Two tenants' plain-process tasks on one node (probe report, defect 1): the agent runs each
// under a uid of its own (docs/agent.md, "Task users"), so task B of tenant beta is refused
// task A's secret file, A's environment (/proc/<pid>/environ), A's stdout.log, the node
// credential and the listing of the tasks directory, while A reads its own secret file and
// environment. Needs root (the agent can only give tasks their own uids as root).
TEST(SecretsTest, ATaskOfAnotherTenantOnTheSameNodeReadsNoneOfItsSecretsLogsOrTheNodeCredential) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only a root agent runs tasks under uids of their own";
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", kMia, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", kBetaTenant, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply",
                       "kind: Queue\nname: beta-q\ntenant: beta\nquotas:\n  - {resource: cpu, nominal: 8}\n"
                       "  - {resource: memory, nominal: 32Gi}\n",
                       "application/yaml").status,
            200);
  auto token_of = [&](const std::string& user) {
    auto r = admin.Post("/api/v1/tokens", json({{"user", user}}).dump(), "application/json");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body.value("token", "");
  };
  cli::ApiClient mia({server.url(), token_of("mia")});
  cli::ApiClient bea({server.url(), token_of("bea")});
  AgentProcess agent(server, "cpu-a", "");
  auto secret = mia.Post("/api/v1/secrets",
                         json({{"name", "db-creds"}, {"project", "acme/ml"}, {"stringData", {{"password", kCanary}}}}).dump(),
                         "application/json");
  ASSERT_EQ(secret.status, 201) << secret.text;
  auto job = [](const std::string& name, const std::string& project, const std::string& queue,
                const std::string& extra, const std::string& script) {
    std::string indented;
    std::istringstream lines(script);
    for (std::string line; std::getline(lines, line);) indented += "      " + line + "\n";
    return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
           "\nspec:\n  command:\n    - sh\n    - -c\n    - |\n" + indented + extra +
           "  taskGroups:\n    - name: main\n      resources: {cpu: 100m, memory: 16Mi}\n";
  };
  auto logs_of = [&](const std::string& id) { return admin.Get("/api/v1/workloads/" + id + "/logs").text; };
  auto state_of = [&](const std::string& id) { return admin.Get("/api/v1/workloads/" + id).body.value("state", ""); };

  // Task A (acme/ml): its secret as a variable and as a file; it checks both, then runs on.
  auto a = mia.Post("/api/v1/workloads",
                    job("holder", "acme/ml", "train",
                        "  env:\n    - {name: DB_PASSWORD, secretRef: {secret: db-creds, key: password}}\n"
                        "  secretMounts: [{secret: db-creds, path: db}]\n",
                        "[ \"$(cat secrets/db/password)\" = \"$DB_PASSWORD\" ] && echo own-file-ok\n"
                        "tr '\\0' '\\n' < /proc/$$/environ | grep -qx \"DB_PASSWORD=$DB_PASSWORD\" && echo own-environ-ok\n"
                        "echo A-STDOUT-MARKER\n"
                        "exec sleep 300\n"),
                    "application/yaml");
  ASSERT_EQ(a.status, 201) << a.text;
  const std::string a_id = a.body["items"][0]["id"];
  ASSERT_TRUE(WaitFor([&] { return logs_of(a_id).find("A-STDOUT-MARKER") != std::string::npos; },
                      std::chrono::seconds(60)))
      << state_of(a_id) << "\n" << logs_of(a_id);
  EXPECT_NE(logs_of(a_id).find("own-file-ok"), std::string::npos) << logs_of(a_id);
  EXPECT_NE(logs_of(a_id).find("own-environ-ok"), std::string::npos) << logs_of(a_id);

  // Where A's files are (the test runs as root): its task directory and its process.
  const std::string work = agent.work_dir();
  std::string a_dir;
  for (const auto& entry : fs::directory_iterator(work + "/tasks")) a_dir = entry.path().string();
  ASSERT_FALSE(a_dir.empty());
  std::istringstream pid_file(ReadFile(a_dir + "/pid"));
  long a_pid = 0;
  pid_file >> a_pid;
  ASSERT_GT(a_pid, 1);
  for (const std::string& path : {a_dir + "/work/secrets/db/password", a_dir + "/stdout.log", work + "/node.credential"}) {
    ASSERT_TRUE(fs::exists(path)) << path;
  }

  // Task B (beta/lab) tries each of them by its exact path.
  const std::string steal =
      "try() { if out=$(cat \"$2\" 2>&1); then echo \"open-$1 $out\"; else case \"$out\" in\n"
      "  *'ermission denied'*) echo \"denied-$1\" ;; *) echo \"failed-$1 $out\" ;; esac; fi; }\n"
      "try file " + a_dir + "/work/secrets/db/password\n"
      "try environ /proc/" + std::to_string(a_pid) + "/environ\n"
      "try stdout " + a_dir + "/stdout.log\n"
      "try credential " + work + "/node.credential\n"
      "if ls " + work + "/tasks >/dev/null 2>&1; then echo listed-tasks; else echo denied-list; fi\n";
  auto b = bea.Post("/api/v1/workloads", job("thief", "beta/lab", "beta-q", "", steal), "application/yaml");
  ASSERT_EQ(b.status, 201) << b.text;
  const std::string b_id = b.body["items"][0]["id"];
  ASSERT_TRUE(WaitFor([&] { return state_of(b_id) == "Succeeded" || state_of(b_id) == "Failed"; },
                      std::chrono::seconds(60)))
      << state_of(b_id);
  ASSERT_TRUE(WaitFor([&] { return logs_of(b_id).find("denied-list") != std::string::npos ||
                                   logs_of(b_id).find("listed-tasks") != std::string::npos; }))
      << logs_of(b_id);
  const std::string stolen = logs_of(b_id);
  for (const char* want : {"denied-file", "denied-environ", "denied-stdout", "denied-credential", "denied-list"}) {
    EXPECT_NE(stolen.find(want), std::string::npos) << want << " is not in task B's log:\n" << stolen;
  }
  EXPECT_EQ(stolen.find(kCanary), std::string::npos) << "task B read task A's secret:\n" << stolen;
  EXPECT_EQ(stolen.find("A-STDOUT-MARKER"), std::string::npos) << "task B read task A's log:\n" << stolen;
  EXPECT_EQ(state_of(a_id), "Running");
}

// One rule for what a workload names, on submit and on update (issue 22.4): an update whose
// spec.env names a secret that does not exist, or a key the secret lacks, was accepted and the
// task could not start later; it is refused now as the same submission is, and accepted once
// the secret and key exist.
TEST(SecretsTest, AnUpdateNamingAMissingSecretOrKeyIsRefusedAsASubmissionIs) {
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  auto sub = admin.Post("/api/v1/workloads",
                        "kind: TrainingJob\nname: later\nproject: acme/ml\nqueue: train\nspec:\n"
                        "  command: [\"true\"]\n  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n",
                        "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;  // no node: it waits
  const std::string id = sub.body["items"][0]["id"];
  const std::string env = R"({"spec": {"env": [{"name": "DB_PASSWORD", "secretRef": {"secret": "db-creds", "key": "password"}}]}})";
  auto missing = admin.Patch("/api/v1/workloads/" + id, env, "application/merge-patch+json");
  EXPECT_EQ(missing.status, 409) << missing.text;
  EXPECT_NE(missing.text.find("secret db-creds not found in project acme/ml"), std::string::npos) << missing.text;
  // The same reference in a submission: the same refusal.
  auto submitted = admin.Post("/api/v1/workloads",
                              "kind: TrainingJob\nname: other\nproject: acme/ml\nqueue: train\nspec:\n"
                              "  command: [\"true\"]\n  env:\n    - {name: DB_PASSWORD, secretRef: {secret: db-creds, key: password}}\n"
                              "  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n",
                              "application/yaml");
  EXPECT_EQ(submitted.status, missing.status) << submitted.text;
  auto secret = admin.Post("/api/v1/secrets",
                           json({{"name", "db-creds"}, {"project", "acme/ml"}, {"stringData", {{"user", "ml"}}}}).dump(),
                           "application/json");
  ASSERT_EQ(secret.status, 201) << secret.text;
  auto no_key = admin.Patch("/api/v1/workloads/" + id, env, "application/merge-patch+json");
  EXPECT_EQ(no_key.status, 409) << no_key.text;
  EXPECT_NE(no_key.text.find("has no key password"), std::string::npos) << no_key.text;
  EXPECT_EQ(admin.Get("/api/v1/workloads/" + id).body["spec"].value("env", json::array()).size(), 0u);
  auto fixed = admin.Post("/api/v1/secrets",
                          json({{"name", "db-creds"}, {"project", "acme/ml"}, {"stringData", {{"password", kCanary}}}}).dump(),
                          "application/json");
  ASSERT_TRUE(fixed.status == 200 || fixed.status == 201) << fixed.text;
  auto ok = admin.Patch("/api/v1/workloads/" + id, env, "application/merge-patch+json");
  EXPECT_EQ(ok.status, 200) << ok.text;
}

// `kind: Secret` through `abacus apply -f` (issue 24): a member of the project applies it, applies
// it again unchanged and changed (a new version), lists, gets, describes and deletes it with the
// CLI; another tenant's member is refused each of these with the name in the path, the query
// and the body; no answer, audit entry or log line holds a value.
TEST(SecretsTest, ApplyGetDescribeAndDeleteASecretWithTheRightsOfCreate) {
  const std::string first = "apply-canary-1-0c9d4e", second = "apply-canary-2-7a11f0";
  TempDir dir, log_dir, files;
  const std::string log_file = log_dir.path() + "/server.log";
  ChildStderrTo capture(log_file);  // the server's log, at debug level
  const std::string config = log_dir.path() + "/debug.yaml";
  { std::ofstream(config) << "log-level: debug\n"; }
  ServerProcess server(dir.path(), {"--config", config});
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", kMia, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", kBetaTenant, "application/yaml").status, 200);
  auto token_of = [&](const std::string& user) {
    auto r = admin.Post("/api/v1/tokens", json({{"user", user}}).dump(), "application/json");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body.value("token", "");
  };
  const std::string mia = token_of("mia"), bea = token_of("bea");
  auto cli = [&](const std::string& token, std::vector<std::string> args) {
    args.insert(args.end(), {"--server", server.url(), "--token", token});
    CliResult r = RunCli(args);
    EXPECT_EQ(r.out.find(first), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(first), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find(second), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(second), std::string::npos) << r.err;
    return r;
  };
  auto secret_file = [&](const std::string& name, const std::string& value) {
    const std::string path = files.path() + "/" + name;
    std::ofstream(path) << "kind: Secret\nmetadata:\n  name: db-creds\n  tenant: acme\n  project: ml\n"
                           "stringData:\n  password: " << value << "\ndata:\n  user: YXBw\n";  // "app"
    return path;
  };
  const std::string v1 = secret_file("v1.yaml", first), v2 = secret_file("v2.yaml", second);

  CliResult created = cli(mia, {"apply", "-f", v1});
  ASSERT_EQ(created.code, 0) << created.err;
  EXPECT_NE(created.out.find("created"), std::string::npos) << created.out;
  CliResult again = cli(mia, {"apply", "-f", v1, "-o", "json"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;
  CliResult changed = cli(mia, {"apply", "-f", v2, "-o", "json"});
  ASSERT_EQ(changed.code, 0) << changed.err;
  EXPECT_NE(changed.out.find("configured"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("\"version\": 2"), std::string::npos) << changed.out;

  CliResult listed = cli(mia, {"get", "secrets"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  for (const char* want : {"NAME", "SCOPE", "KEYS", "VERSION", "db-creds", "acme/ml", "password,user"}) {
    EXPECT_NE(listed.out.find(want), std::string::npos) << want << " is not in\n" << listed.out;
  }
  CliResult one = cli(mia, {"get", "secret", "db-creds", "-p", "acme/ml", "-o", "json"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(json::parse(one.out).value("version", 0), 2) << one.out;
  CliResult described = cli(mia, {"describe", "secret", "db-creds"});
  ASSERT_EQ(described.code, 0) << described.err;
  EXPECT_NE(described.out.find("password"), std::string::npos) << described.out;

  // Another tenant's member: apply, get and delete refused, the name in body, query and path.
  CliResult foreign = cli(bea, {"apply", "-f", v1});
  EXPECT_NE(foreign.code, 0);
  EXPECT_NE(foreign.err.find("may not"), std::string::npos) << foreign.err;
  cli::ApiClient as_bea({server.url(), bea});
  for (const std::string& body :
       {std::string("kind: Secret\nmetadata: {name: db-creds, tenant: acme, project: ml}\nstringData: {k: v}\n"),
        std::string("kind: Secret\nname: wide\ntenant: acme\nstringData: {k: v}\n"),
        std::string("kind: Secret\nname: x\nproject: acme/ml\ntenant: beta\nstringData: {k: v}\n")}) {
    auto r = as_bea.Post("/api/v1/apply", body, "application/yaml");
    EXPECT_TRUE(r.status == 400 || r.status == 403) << r.status << " " << r.text;
  }
  EXPECT_EQ(as_bea.Get("/api/v1/secrets/db-creds").status, 404);
  EXPECT_EQ(as_bea.Get("/api/v1/secrets/db-creds?project=acme/ml").status, 404);
  EXPECT_TRUE(as_bea.Get("/api/v1/secrets?project=acme/ml").body["items"].empty());
  EXPECT_EQ(as_bea.Delete("/api/v1/secrets/db-creds").status, 404);
  CliResult foreign_get = cli(bea, {"get", "secret", "db-creds", "-p", "acme/ml"});
  EXPECT_NE(foreign_get.code, 0);
  CliResult foreign_delete = cli(bea, {"delete", "secret", "db-creds", "-p", "acme/ml"});
  EXPECT_NE(foreign_delete.code, 0);
  EXPECT_EQ(admin.Get("/api/v1/secrets/db-creds?project=acme/ml").body.value("version", 0), 2);

  // Audited as the apply it was, naming the secret; no value anywhere.
  auto audit = admin.Get("/api/v1/audit");
  EXPECT_NE(audit.text.find("Secret/db-creds"), std::string::npos) << audit.text;
  CliResult deleted = cli(mia, {"delete", "secret", "db-creds", "-p", "acme/ml"});
  ASSERT_EQ(deleted.code, 0) << deleted.err;
  EXPECT_EQ(admin.Get("/api/v1/secrets/db-creds?project=acme/ml").status, 404);
  audit = admin.Get("/api/v1/audit");
  EXPECT_NE(audit.text.find("secret-delete"), std::string::npos) << audit.text;
  for (const std::string& value : {first, second}) {
    EXPECT_EQ(audit.text.find(value), std::string::npos);
    EXPECT_EQ(admin.Get("/api/v1/events").text.find(value), std::string::npos);
    std::string where;
    EXPECT_FALSE(FilesHold(server.data_dir(), value, "", &where)) << where;
    EXPECT_EQ(ReadFile(log_file).find(value), std::string::npos) << "the server's log holds a value";
  }
  EXPECT_FALSE(ReadFile(log_file).empty()) << "the log was not captured";
}

}  // namespace
}  // namespace abacus::testing

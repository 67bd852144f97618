// The CLI habits of kubectl and Slurm users (issue 23), each with the real binary: exit code 2 for
// every usage error, "did you mean", bare `abacus`, connection errors that say what to do,
// `abacus version` and GET /api/v1/version, the "listening on" line, shell completion, a
// validated --state, and -o wide|name|custom-columns.
#include <gtest/gtest.h>

#include <sstream>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

// Runs `script` under bash with the abacus binary as $ABACUS; returns exit code and stdout.
CliResult Bash(const std::string& script) {
  CliResult r;
  std::string cmd = "ABACUS='" + std::string(ABACUS_BINARY) + "' bash -c '" + script + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// No server needed: what the binary answers about its own command line.
TEST(CliHabitsTest, EveryUsageErrorExits2WithWhatToRead) {
  // Before: 106 (required), 109 (extras), 105 (conversion), 106 for an unknown command.
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"get"}, "error: KIND is required"},
           {{"get", "workloads", "extra", "args"}, "error: The following argument was not expected: args"},
           {{"get", "workloads", "--limit", "many"}, "error: Could not convert: --limit = many"},
           {{"get", "workloads", "-o", "xml"}, "unknown output format 'xml'"},
           {{"logs", "w", "--stream", "stdin"}, "error: --stream: stdin not in {stdout,stderr}"},
           {{"token"}, "error: 'abacus token' needs a command: create, list, revoke"},
           {{"--log-level", "loud", "version", "--client"}, "error: --log-level"}}) {
    auto r = RunCli(c.args);
    EXPECT_EQ(r.code, 2) << c.args[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, c.says)) << r.err;
    EXPECT_TRUE(Contains(r.err, "--help' for the usage")) << r.err;
  }
  auto typo = RunCli({"gte", "workloads"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err.substr(0, typo.err.find('\n')), "error: unknown command 'gte'; did you mean 'get'?");
  auto nested = RunCli({"token", "lsit"});
  EXPECT_EQ(nested.code, 2);
  EXPECT_TRUE(Contains(nested.err, "unknown command 'lsit' for 'abacus token'; did you mean 'list'?")) << nested.err;
  auto far = RunCli({"frobnicate"});
  EXPECT_EQ(far.code, 2);
  EXPECT_FALSE(Contains(far.err, "did you mean")) << far.err;
  // Bare `abacus`: the help, exit 0.
  auto bare = RunCli({});
  EXPECT_EQ(bare.code, 0) << bare.err;
  EXPECT_TRUE(Contains(bare.out, "Usage: abacus")) << bare.out;
  EXPECT_EQ(RunCli({"get", "--help"}).code, 0);
  auto kind = RunCli({"get", "workloda"});
  EXPECT_EQ(kind.code, 2);
  EXPECT_TRUE(Contains(kind.err, "unknown kind 'workloda'; did you mean 'workload'?")) << kind.err;
}

TEST(CliHabitsTest, ConnectionErrorsSayWhatHappenedAndWhatToDo) {
  auto refused = RunCli({"get", "nodes", "--server", "http://127.0.0.1:1"});
  EXPECT_EQ(refused.code, 3);
  // Before: "error: cannot reach the server: Connection (http://127.0.0.1:1)".
  EXPECT_EQ(refused.err,
            "error: cannot connect to http://127.0.0.1:1: connection refused or host not found — is `abacus server` "
            "running there? (set --server or $ABACUS_SERVER)\n");
  auto bad_url = RunCli({"get", "nodes", "--server", "ftp://x"});
  EXPECT_EQ(bad_url.code, 3);
  EXPECT_TRUE(Contains(bad_url.err, "invalid server URL 'ftp://x'")) << bad_url.err;

  // A self-signed HTTPS server: untrusted says --ca-cert; --ca-cert makes it work.
  TempDir dir;
  std::string cert = dir.path() + "/cert.pem", key = dir.path() + "/key.pem";
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key + " -out " + cert +
                    " -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a certificate";
  unsetenv("ABACUS_CA_CERT");
  ServerProcess server(dir.path() + "/data", {"--tls-cert", cert, "--tls-key", key});
  std::vector<std::string> env = {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + server.token()};
  auto untrusted = RunCli({"get", "nodes"}, env);
  EXPECT_EQ(untrusted.code, 3);
  // Before: "error: cannot reach the server: SSLServerVerification (https://...)".
  EXPECT_TRUE(Contains(untrusted.err, "the server's TLS certificate is not trusted; pass --ca-cert FILE or set "
                                      "$ABACUS_CA_CERT"))
      << untrusted.err;
  EXPECT_FALSE(Contains(untrusted.err, "SSLServerVerification")) << untrusted.err;
  auto trusted = RunCli({"get", "nodes", "--ca-cert", cert}, env);
  EXPECT_EQ(trusted.code, 0) << trusted.err;
  auto plain = RunCli({"get", "nodes", "--server", "http" + server.url().substr(5)}, env);
  EXPECT_EQ(plain.code, 3);
  EXPECT_TRUE(Contains(plain.err, "https:// URL")) << plain.err;
}

// The shared objects the dynamic loader started for one run of `args` (LD_DEBUG=libs).
std::vector<std::string> LoadedLibraries(const std::vector<std::string>& args) {
  auto r = RunCli(args, {"LD_DEBUG=libs"});
  std::vector<std::string> loaded;
  const std::string mark = "calling init: ";
  for (size_t at = r.err.find(mark); at != std::string::npos; at = r.err.find(mark, at + 1)) {
    const size_t start = at + mark.size();
    loaded.push_back(std::filesystem::path(r.err.substr(start, r.err.find('\n', start) - start)).filename().string());
  }
  return loaded;
}

// Start cost (docs/cli.md): a shell loop pays the dynamic loader per command, so a client verb
// loads libc alone — yaml-cpp and the C++ runtime are linked in, no logger, TLS or HTTP library.
TEST(CliHabitsTest, AClientVerbLoadsTheCLibraryAlone) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer builds link the client dynamically";
#else
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, {"get", "workloads", "--server", "http://127.0.0.1:1"},
        {"submit", "-f", "/nonexistent.yaml", "--server", "http://127.0.0.1:1"}}) {
    const std::vector<std::string> loaded = LoadedLibraries(args);
    ASSERT_FALSE(loaded.empty()) << args[0] << ": LD_DEBUG printed nothing";
    for (const std::string& lib : loaded) {
      EXPECT_TRUE(lib.starts_with("libc.so") || lib.starts_with("ld-linux")) << args[0] << " loads " << lib;
    }
  }
#endif
}

TEST(CliHabitsTest, VersionOfClientAndServerForEveryUser) {
  TempDir dir;
  ServerProcess server(dir.path());
  std::vector<std::string> env = {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + server.token()};
  auto v = RunCli({"version", "-o", "json"}, env);
  ASSERT_EQ(v.code, 0) << v.err;
  json doc = json::parse(v.out);
  EXPECT_EQ(doc["client"]["version"], doc["server"]["version"]);
  EXPECT_FALSE(doc["client"].value("gitCommit", "").empty());
  EXPECT_EQ(doc["client"].value("buildDate", "").size(), 10u) << doc.dump();  // YYYY-MM-DD
  EXPECT_GE(doc["server"].value("storeSchemaVersion", 0), 1);
  auto table = RunCli({"version"}, env);
  EXPECT_TRUE(Contains(table.out, "Client: abacus ")) << table.out;
  EXPECT_TRUE(Contains(table.out, "Server: abacus ")) << table.out;
  EXPECT_TRUE(Contains(RunCli({"--version"}).out, "(commit "));
  // No server: the client's version, exit 0, and why the server's is missing.
  auto alone = RunCli({"version", "--server", "http://127.0.0.1:1"});
  EXPECT_EQ(alone.code, 0);
  EXPECT_TRUE(Contains(alone.out, "Client: abacus ")) << alone.out;
  EXPECT_TRUE(Contains(alone.err, "Server: not shown: cannot connect")) << alone.err;

  // Any authenticated user may read it: a member of one project; without a token: 401.
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", "kind: Tenant\nname: t1\n---\nkind: Project\nname: p1\ntenant: t1\n---\n"
                                        "kind: User\nname: max\nroles: [{role: member, project: t1/p1}]\n",
                       "application/yaml")
                .status,
            200);
  auto made = admin.Post("/api/v1/tokens", json{{"user", "max"}}.dump(), "application/json");
  ASSERT_EQ(made.status, 201) << made.text;
  auto member = cli::ApiClient({server.url(), made.body["token"].get<std::string>()}).Get("/api/v1/version");
  EXPECT_EQ(member.status, 200) << member.text;
  EXPECT_EQ(member.body["version"], doc["server"]["version"]);
  EXPECT_EQ(cli::ApiClient({server.url(), ""}).Get("/api/v1/version").status, 401);
}

TEST(CliHabitsTest, ServerSaysWhereItListensOnce) {
  TempDir dir;
  std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  pid_t pid = SpawnChild({"/bin/sh", "-c",
                          "exec '" + std::string(ABACUS_BINARY) + "' server --data " + data +
                              " --listen 127.0.0.1:0 --config '' 2>" + dir.path() + "/stderr"},
                         false);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(data + "/server.url"); }));
  std::string url = ReadFile(data + "/server.url");
  url.pop_back();
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  std::string err = ReadFile(dir.path() + "/stderr");
  std::string line = "abacus server listening on " + url + " (";
  ASSERT_TRUE(Contains(err, line)) << err;
  EXPECT_EQ(err.find(line), err.rfind(line)) << err;
}

TEST(CliHabitsTest, BashCompletionCompletesVerbsFlagsAndValues) {
  auto complete = [](const std::string& words, int cword) {
    return Bash("source <(\"$ABACUS\" completion bash) && COMP_WORDS=(" + words + ") && COMP_CWORD=" +
                std::to_string(cword) + " && _abacus && echo \"${COMPREPLY[*]}\"");
  };
  auto verb = complete("abacus ge", 1);
  ASSERT_EQ(verb.code, 0) << verb.out;
  EXPECT_EQ(verb.out, "get\n");
  auto flag = complete("abacus get workloads --sta", 3);
  EXPECT_EQ(flag.out, "--state\n");
  auto value = complete("abacus --log-level debug get -o \"\"", 5);
  EXPECT_EQ(value.out, "table wide name json yaml custom-columns=\n");
  auto kind = complete("abacus describe no", 2);
  EXPECT_EQ(kind.out, "nodes\n");
  auto nested = complete("abacus token \"\"", 2);
  EXPECT_EQ(nested.out, "create list revoke rotate-admin\n");
  auto zsh = RunCli({"completion", "zsh"});
  EXPECT_EQ(zsh.code, 0);
  EXPECT_EQ(zsh.out.rfind("#compdef abacus\n", 0), 0u);
  EXPECT_TRUE(Contains(zsh.out, "'abacus get' '-h --help")) << zsh.out.substr(0, 2000);
  EXPECT_EQ(RunCli({"completion", "fish"}).code, 2);
}

class CliHabitsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    env_ = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
    ASSERT_EQ(Run({"apply", "-f", SourcePath("examples/org.yaml")}).code, 0);
    for (const char* name : {"h100-a", "h100-b"}) {
      json node = H100Node(name);
      node["labels"] = {{"rack", "r7"}};
      ASSERT_EQ(server_->Client().Post("/api/v1/nodes", node.dump(), "application/json").status, 201);
    }
    ASSERT_EQ(Run({"submit", "-f", SourcePath("examples/workloads/training.yaml"), "-f",
                   SourcePath("examples/workloads/training-npu.yaml")})
                  .code,
              0);
    ASSERT_TRUE(WaitFor([&] {
      auto r = Run({"get", "workloads", "llama-ft", "-o", "json"});
      return r.code == 0 && json::parse(r.out)["state"] == "Admitted";
    }));
  }
  CliResult Run(const std::vector<std::string>& args) { return RunCli(args, env_); }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> env_;
};

TEST_F(CliHabitsServerTest, StateFilterIsValidatedAndCaseInsensitive) {
  auto lower = Run({"get", "workloads", "--state", "admitted", "-o", "name"});
  ASSERT_EQ(lower.code, 0) << lower.err;
  // Before: "No workloads found." (the server compares the exact name).
  EXPECT_EQ(lower.out, "workload/llama-ft\n");
  EXPECT_EQ(Run({"get", "workloads", "--state", "PENDING", "-o", "name"}).out, "workload/pangu-pretrain\n");
  auto unknown = Run({"get", "workloads", "--state", "Runing"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(Contains(unknown.err, "unknown workload state 'Runing' (expected one of Pending, Admitted, Running, "
                                    "Preempting, Requeued, Succeeded, Failed, Cancelled"))
      << unknown.err;
  EXPECT_EQ(unknown.out, "");
}

// DEVICES is what a workload holds now: a finished one holds nothing, wherever it ran (the probe
// of 2026-12-07: a cancelled workload still showed its 16 GPUs).
TEST_F(CliHabitsServerTest, OutputWideShowsNoDevicesForAFinishedWorkload) {
  ASSERT_EQ(Run({"cancel", "llama-ft"}).code, 0);
  auto wide = Run({"get", "workloads", "-o", "wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  std::string row;
  std::istringstream lines(wide.out);
  for (std::string line; std::getline(lines, line);) {
    if (Contains(line, " llama-ft ")) row = line;
  }
  EXPECT_TRUE(Contains(row, "Cancelled")) << wide.out;
  EXPECT_FALSE(Contains(row, "H100")) << row;
  EXPECT_TRUE(Contains(row, "h100-a,h100-b")) << row;  // where it ran stays in NODES
}

TEST_F(CliHabitsServerTest, OutputWideNameAndCustomColumns) {
  auto wide = Run({"get", "workloads", "-o", "wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_EQ(wide.out.rfind("ID ", 0), 0u) << wide.out;
  for (const char* header : {"TENANT", "PROJECT", "PRIORITY", "DEVICES", "NODES"}) {
    EXPECT_TRUE(Contains(wide.out.substr(0, wide.out.find('\n')), header)) << header << "\n" << wide.out;
  }
  EXPECT_TRUE(Contains(wide.out, "nlp     nlp/llm")) << wide.out;
  EXPECT_TRUE(Contains(wide.out, "16x H100-80G  h100-a,h100-b")) << wide.out;
  auto nodes = Run({"get", "nodes", "-o", "wide"});
  ASSERT_EQ(nodes.code, 0) << nodes.err;
  EXPECT_TRUE(Contains(nodes.out, "CLUSTER")) << nodes.out;
  EXPECT_TRUE(Contains(nodes.out, "rack=r7")) << nodes.out;
  EXPECT_EQ(Run({"get", "nodes", "-o", "name"}).out, "node/h100-a\nnode/h100-b\n");
  auto columns = Run({"get", "workloads", "-o", "custom-columns=NAME:.name,NODE:.placements[0].node,X:.missing"});
  ASSERT_EQ(columns.code, 0) << columns.err;
  EXPECT_EQ(columns.out,
            "NAME            NODE    X\n"
            "llama-ft        h100-a  <none>\n"
            "pangu-pretrain  <none>  <none>\n");
  auto spec = Run({"get", "workloads", "llama-ft", "-o", "custom-columns=GROUP:.spec.spec.taskGroups[0].name"});
  EXPECT_EQ(spec.out, "GROUP\nworker\n") << spec.err;
  auto bad = Run({"get", "workloads", "-o", "custom-columns=NAME:.items[*].name"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(Contains(bad.err, "only .field and [N] are supported")) << bad.err;
}

}  // namespace
}  // namespace abacus::testing

// The .deb that `make package` builds (CPack, cmake/Packaging.cmake), installed into a scratch
// root: its files, conffiles, control fields and systemd units, the installed binary reading the
// shipped config files, and (as root) a real `dpkg --root` install and purge. Skips when no
// package was built (ctest builds one first: the `package.build` fixture).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string text;  // stdout and stderr
};

// Runs a shell command line; returns its exit code and output.
Output Sh(const std::string& command) {
  Output out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.text.append(buf, n);
  int status = ::pclose(p);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// The newest abacus_VERSION_*.deb in the package folder, or "".
std::string FindPackage() {
  std::error_code ec;
  fs::path best;
  fs::file_time_type best_time;
  for (const auto& e : fs::directory_iterator(ABACUS_PACKAGE_DIR, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(std::string("abacus_") + ABACUS_VERSION + "_", 0) != 0 || e.path().extension() != ".deb") continue;
    if (best.empty() || e.last_write_time() > best_time) {
      best = e.path();
      best_time = e.last_write_time();
    }
  }
  return best.string();
}

// A systemd unit file: section → key → values, in order.
using Unit = std::map<std::string, std::multimap<std::string, std::string>>;

// Parses systemd's unit syntax (sections, KEY=VALUE, # and ; comments); problems name the line.
Unit ParseUnit(const std::string& text, std::vector<std::string>& problems) {
  Unit unit;
  std::string section;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.back() == '\\') problems.push_back("line " + std::to_string(n) + ": continuation lines not expected");
    if (line.front() == '[') {
      if (line.back() != ']') problems.push_back("line " + std::to_string(n) + ": bad section header");
      section = line.substr(1, line.size() - 2);
      unit[section];
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0 || section.empty()) {
      problems.push_back("line " + std::to_string(n) + ": expected KEY=VALUE in a section: " + line);
      continue;
    }
    unit[section].emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  return unit;
}

// The directives the shipped units may use (systemd 252, Debian 12): a misspelt one is an error.
const std::map<std::string, std::set<std::string>> kKnownDirectives = {
    {"Unit", {"Description", "Documentation", "After", "Before", "Wants", "Requires", "PartOf", "StartLimitIntervalSec",
              "StartLimitBurst"}},
    {"Service",
     {"Type", "User", "Group", "ExecStart", "ExecReload", "KillSignal", "KillMode", "TimeoutStopSec", "Restart",
      "RestartSec", "StateDirectory", "StateDirectoryMode", "WorkingDirectory", "UMask", "LimitNOFILE",
      "StandardOutput", "StandardError", "SyslogIdentifier", "NoNewPrivileges", "ProtectSystem", "ProtectHome",
      "PrivateTmp", "PrivateDevices", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
      "ProtectControlGroups", "ProtectClock", "ProtectHostname", "RestrictAddressFamilies", "RestrictNamespaces",
      "RestrictRealtime", "RestrictSUIDSGID", "LockPersonality", "SystemCallArchitectures", "CapabilityBoundingSet",
      "AmbientCapabilities", "Delegate", "Environment", "EnvironmentFile", "ReadWritePaths"}},
    {"Install", {"WantedBy", "Alias"}},
};

std::string One(const Unit& u, const std::string& section, const std::string& key) {
  auto s = u.find(section);
  if (s == u.end()) return "";
  auto range = s->second.equal_range(key);
  if (range.first == range.second) return "";
  return std::prev(range.second)->second;  // the last assignment wins, as in systemd
}

class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    deb_ = FindPackage();
    if (deb_.empty()) GTEST_SKIP() << "no abacus_" << ABACUS_VERSION << "_*.deb in " << ABACUS_PACKAGE_DIR
                                   << " (make package, or ctest with the package.build fixture)";
    char tmpl[] = "/tmp/abacus-package-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    root_ = dir_ / "root";
    control_ = dir_ / "control";
    Output x = Sh("dpkg-deb -x " + Quote(deb_) + " " + Quote(root_.string()));
    ASSERT_EQ(x.code, 0) << x.text;
    Output e = Sh("dpkg-deb -e " + Quote(deb_) + " " + Quote(control_.string()));
    ASSERT_EQ(e.code, 0) << e.text;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // A control field of the package ("" when absent).
  std::string Field(const std::string& name) const {
    Output f = Sh("dpkg-deb -f " + Quote(deb_) + " " + name);
    while (!f.text.empty() && f.text.back() == '\n') f.text.pop_back();
    return f.code == 0 ? f.text : "";
  }

  Unit ReadUnit(const std::string& name) const {
    std::vector<std::string> problems;
    Unit u = ParseUnit(Slurp(root_ / "lib/systemd/system" / name), problems);
    for (const auto& p : problems) ADD_FAILURE() << name << ": " << p;
    return u;
  }

  std::string deb_;
  fs::path dir_, root_, control_;
};

TEST_F(PackageTest, InstallsTheBinaryUnitsConfigAndDocs) {
  for (const char* f : {"usr/bin/abacus", "lib/systemd/system/abacus-server.service",
                        "lib/systemd/system/abacus-agent.service", "etc/abacus/server.yaml", "etc/abacus/agent.yaml",
                        "usr/share/doc/abacus/copyright", "usr/share/doc/abacus/README.md",
                        "usr/share/doc/abacus/operations.md", "usr/share/doc/abacus/agent.md",
                        "usr/share/abacus/examples/org.yaml", "usr/share/bash-completion/completions/abacus",
                        "usr/share/zsh/vendor-completions/_abacus", "usr/lib/abacus/abacus-core"}) {
    EXPECT_TRUE(fs::is_regular_file(root_ / f)) << f;
  }
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "usr/bin/abacus").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  // The lean client execs the full binary for server, agent and simulator verbs (docs/cli.md).
  ASSERT_EQ(::stat((root_ / "usr/lib/abacus/abacus-core").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  // The completion bash-completion loads for `abacus`: generated from the binary's commands.
  std::string completion = Slurp(root_ / "usr/share/bash-completion/completions/abacus");
  EXPECT_NE(completion.find("complete -F _abacus abacus"), std::string::npos) << completion.substr(0, 500);
  EXPECT_NE(completion.find("['abacus get']="), std::string::npos);
}

// Debian's zsh has /usr/share/zsh/vendor-completions in its $fpath: compinit there binds `abacus` to
// the shipped _abacus, and the function loads and completes verbs.
TEST_F(PackageTest, ZshLoadsTheCompletion) {
  if (Sh("command -v zsh").code != 0) GTEST_SKIP() << "no zsh here (scripts/install-deps.sh installs it)";
  fs::path dir = root_ / "usr/share/zsh/vendor-completions";
  ASSERT_TRUE(fs::is_regular_file(dir / "_abacus"));
  std::string script = "fpath=(" + dir.string() + " $fpath); autoload -Uz compinit; compinit -u -d " +
                       (dir_ / "zcompdump").string() + "; print -r -- \"bound:${_comps[abacus]}\"; " +
                       "autoload -Uz +X _abacus && print -r -- \"loaded:${#functions[_abacus]}\"";
  Output zsh = Sh("HOME=" + Quote(dir_.string()) + " zsh -f -c " + Quote(script));
  ASSERT_EQ(zsh.code, 0) << zsh.text;
  EXPECT_NE(zsh.text.find("bound:_abacus"), std::string::npos) << zsh.text;
  // +X loads the function body from the file; a body of a few bytes would be the autoload stub.
  size_t at = zsh.text.find("loaded:");
  ASSERT_NE(at, std::string::npos) << zsh.text;
  EXPECT_GT(std::stoul(zsh.text.substr(at + 7)), 1000u) << zsh.text;
  std::string completion = Slurp(dir / "_abacus");
  EXPECT_EQ(completion.rfind("#compdef abacus\n", 0), 0u) << completion.substr(0, 200);
  EXPECT_NE(completion.find("'abacus get'"), std::string::npos);
}

TEST_F(PackageTest, TheConfigFilesAreConffiles) {
  std::set<std::string> conffiles;
  std::istringstream in(Slurp(control_ / "conffiles"));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) conffiles.insert(line);
  }
  EXPECT_EQ(conffiles, (std::set<std::string>{"/etc/abacus/agent.yaml", "/etc/abacus/server.yaml"}));
  for (const auto& f : conffiles) EXPECT_TRUE(fs::is_regular_file(root_ / f.substr(1))) << f;
}

TEST_F(PackageTest, ControlNamesTheVersionAndTheLibrariesItNeeds) {
  EXPECT_EQ(Field("Package"), "abacus");
  EXPECT_EQ(Field("Version").rfind(ABACUS_VERSION, 0), 0u) << Field("Version");
  std::string depends = Field("Depends");
  // From dpkg-shlibdeps (libpq5 named in cmake/Packaging.cmake: it is opened with dlopen): a fresh
  // Debian 12 pulls these in.
  for (const char* lib : {"adduser", "libc6", "libstdc++6", "libsqlite3-0", "libssl3", "libyaml-cpp", "libspdlog",
                          "libhwloc", "libcpp-httplib", "libpq5"}) {
    EXPECT_NE(depends.find(lib), std::string::npos) << lib << " not in Depends: " << depends;
  }
  for (const char* script : {"postinst", "prerm", "postrm"}) {
    fs::path p = control_ / script;
    ASSERT_TRUE(fs::is_regular_file(p)) << script;
    EXPECT_NE(fs::status(p).permissions() & fs::perms::owner_exec, fs::perms::none) << script;
    Output syntax = Sh("sh -n " + Quote(p.string()));
    EXPECT_EQ(syntax.code, 0) << script << ": " << syntax.text;
  }
}

TEST_F(PackageTest, UnitsRunTheInstalledBinaryWithAShippedConfig) {
  for (const std::string command : {"server", "agent"}) {
    std::string name = "abacus-" + command + ".service";
    Unit u = ReadUnit(name);
    for (const auto& [section, keys] : u) {
      auto known = kKnownDirectives.find(section);
      if (known == kKnownDirectives.end()) {
        ADD_FAILURE() << name << ": unknown section [" << section << "]";
        continue;
      }
      for (const auto& kv : keys) EXPECT_TRUE(known->second.count(kv.first)) << name << ": unknown " << kv.first;
    }
    std::string exec = One(u, "Service", "ExecStart");
    std::string config = "/etc/abacus/" + command + ".yaml";
    EXPECT_EQ(exec, "/usr/bin/abacus " + command + " --config " + config) << name;
    EXPECT_TRUE(fs::is_regular_file(root_ / config.substr(1))) << name;
    EXPECT_EQ(One(u, "Service", "Type"), "simple") << name;
    EXPECT_EQ(One(u, "Service", "Restart"), "on-failure") << name;
    EXPECT_EQ(One(u, "Service", "KillSignal"), "SIGTERM") << name;
    EXPECT_GE(std::atoi(One(u, "Service", "TimeoutStopSec").c_str()), 60) << name;
    EXPECT_EQ(One(u, "Service", "StandardError"), "journal") << name;
    EXPECT_EQ(One(u, "Install", "WantedBy"), "multi-user.target") << name;
  }
  Unit server = ReadUnit("abacus-server.service");
  EXPECT_EQ(One(server, "Service", "User"), "abacus");
  EXPECT_EQ(One(server, "Service", "StateDirectory"), "abacus");
  EXPECT_EQ(One(server, "Service", "NoNewPrivileges"), "yes");
  EXPECT_EQ(One(server, "Service", "ProtectSystem"), "strict");
  Unit agent = ReadUnit("abacus-agent.service");
  EXPECT_EQ(One(agent, "Service", "KillMode"), "mixed");  // the agent stops its tasks with their grace
  EXPECT_EQ(One(agent, "Service", "Delegate"), "yes");
}

TEST_F(PackageTest, SystemdAcceptsTheUnits) {
  if (Sh("command -v systemd-analyze").code != 0) GTEST_SKIP() << "no systemd-analyze here";
  // systemd-analyze verify works without a running systemd; it wants ExecStart's binary to exist,
  // so the copies point at the extracted one. It prints a line for every unknown or bad directive.
  std::string binary = (root_ / "usr/bin/abacus").string();
  std::string units;
  for (const std::string name : {"abacus-server.service", "abacus-agent.service"}) {
    std::string text = Slurp(root_ / "lib/systemd/system" / name);
    for (size_t at = text.find("=/usr/bin/abacus "); at != std::string::npos; at = text.find("=/usr/bin/abacus ", at)) {
      text.replace(at + 1, 15, binary);
      at += 1 + binary.size();
    }
    fs::path copy = dir_ / name;
    std::ofstream(copy) << text;
    units += " " + Quote(copy.string());
  }
  Output verify = Sh("cd " + Quote(dir_.string()) + " && systemd-analyze verify" + units);
  EXPECT_EQ(verify.code, 0) << verify.text;
  EXPECT_EQ(verify.text, "");
}

TEST_F(PackageTest, TheInstalledBinaryRunsAndReadsTheShippedConfig) {
  std::string abacus = Quote((root_ / "usr/bin/abacus").string());
  Output version = Sh(abacus + " --version");
  ASSERT_EQ(version.code, 0) << version.text;
  // "abacus 0.1.0 (commit 3f2a9c1d0b7e, built 2026-12-04)": docs/cli.md, `abacus version`.
  EXPECT_EQ(version.text.rfind(std::string("abacus ") + ABACUS_VERSION + " (commit ", 0), 0u) << version.text;

  Output server = Sh(abacus + " server --config " + Quote((root_ / "etc/abacus/server.yaml").string()) +
                     " --print-config");
  ASSERT_EQ(server.code, 0) << server.text;
  EXPECT_NE(server.text.find("\ndata: /var/lib/abacus\n"), std::string::npos) << server.text;
  EXPECT_NE(server.text.find("\nlisten: 127.0.0.1:8420\n"), std::string::npos) << server.text;

  Output agent = Sh(abacus + " agent --config " + Quote((root_ / "etc/abacus/agent.yaml").string()) +
                    " --print-config");
  ASSERT_EQ(agent.code, 0) << agent.text;
  EXPECT_NE(agent.text.find("\ntoken-file: /var/lib/abacus/join.token\n"), std::string::npos) << agent.text;
  EXPECT_NE(agent.text.find("\nwork-dir: /var/lib/abacus-agent\n"), std::string::npos) << agent.text;

  // Every commented-out key of the shipped files is a real key: uncommented, they still parse.
  for (const std::string command : {"server", "agent"}) {
    std::string text = Slurp(root_ / "etc/abacus" / (command + ".yaml"));
    std::string uncommented;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      // "# key: value" lines (a key right after "# ") become settings; prose stays a comment.
      size_t colon = line.find(": ");
      bool setting = line.rfind("# ", 0) == 0 && colon != std::string::npos &&
                     line.find_first_of(" ,.()`", 2) >= colon;
      if (setting) line = line.substr(2);
      // The TLS files must exist: point them at a file that does.
      if (line.rfind("tls-cert: ", 0) == 0 || line.rfind("tls-key: ", 0) == 0) {
        line = line.substr(0, line.find(' ') + 1) + (root_ / "etc/abacus/server.yaml").string();
      }
      uncommented += line + "\n";
    }
    fs::path all = dir_ / (command + "-all.yaml");
    std::ofstream(all) << uncommented;
    Output parsed = Sh(abacus + " " + command + " --config " + Quote(all.string()) + " --print-config");
    EXPECT_EQ(parsed.code, 0) << command << ": " << parsed.text << "\n" << uncommented;
  }
}

TEST_F(PackageTest, DpkgInstallsAndPurgesItInAScratchRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "dpkg --root needs root to set file owners";
  // The maintainer scripts run outside the scratch root: each must leave the host alone when
  // DPKG_ROOT is set.
  for (const char* script : {"postinst", "prerm", "postrm"}) {
    ASSERT_NE(Slurp(control_ / script).find("[ -z \"${DPKG_ROOT:-}\" ]"), std::string::npos) << script;
  }
  fs::path target = dir_ / "target";
  fs::create_directories(target / "var/lib/dpkg/info");
  fs::create_directories(target / "var/lib/dpkg/updates");
  std::ofstream(target / "var/lib/dpkg/status").flush();
  // Dependencies are not installed in the scratch root.
  std::string dpkg = "dpkg --root=" + Quote(target.string()) + " --force-script-chrootless --force-depends";
  Output install = Sh(dpkg + " -i " + Quote(deb_));
  ASSERT_EQ(install.code, 0) << install.text;
  EXPECT_TRUE(fs::is_regular_file(target / "usr/bin/abacus"));
  Output status = Sh("dpkg-query --root=" + Quote(target.string()) + " -W -f '${Status}\\n${Conffiles}\\n' abacus");
  ASSERT_EQ(status.code, 0) << status.text;
  EXPECT_EQ(status.text.rfind("install ok installed\n", 0), 0u) << status.text;
  EXPECT_NE(status.text.find(" /etc/abacus/server.yaml "), std::string::npos) << status.text;
  EXPECT_NE(status.text.find(" /etc/abacus/agent.yaml "), std::string::npos) << status.text;

  Output purge = Sh(dpkg + " --purge abacus");
  ASSERT_EQ(purge.code, 0) << purge.text;
  EXPECT_FALSE(fs::exists(target / "usr/bin/abacus"));
  EXPECT_FALSE(fs::exists(target / "etc/abacus/server.yaml"));
}

}  // namespace

// `abacus server` and `abacus up`.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/client.h"
#include "cli/command_config.h"
#include "cli/health_flags.h"
#include "cli/number_flags.h"
#include "cli/verbs.h"
#include "common/duration_parse.h"
#include "cli/local_agents.h"
#include "server/demo.h"
#include "server/run.h"

namespace abacus::cli {
namespace {

struct UpOptions {
  std::string data = ".abacus";
  std::string listen = "127.0.0.1:8420";
  bool demo = false;
  bool write_config = true;
  bool local_agent = true;
};

// "200", "200:400", "0" (no limit) → rate and burst (0: twice the rate).
bool ParseRateLimit(const std::string& text, double& rate, double& burst) {
  try {
    size_t colon = text.find(':');
    size_t used = 0;
    rate = std::stod(text.substr(0, colon), &used);
    if (used != (colon == std::string::npos ? text.size() : colon)) return false;
    burst = 0;
    if (colon != std::string::npos) {
      std::string b = text.substr(colon + 1);
      burst = std::stod(b, &used);
      if (used != b.size()) return false;
    }
  } catch (...) {
    return false;
  }
  return rate >= 0 && burst >= 0;
}

int RunUp(const UpOptions& o) {
  server::RunOptions ro;
  ro.data_dir = o.data;
  ro.listen = o.listen;
  std::string examples;
  if (o.demo) {
    auto dir = server::FindExamplesDir();
    if (!dir.ok()) {
      std::cerr << "abacus up --demo: " << dir.status().message() << "\n";
      return kExitUsage;
    }
    examples = *dir;
  }
  auto agents = std::make_shared<LocalAgents>();
  ro.on_stopping = [agents] { agents->Stop(); };
  ro.on_ready = [o, examples, agents](server::ControlPlane& cp, const std::string& url) -> Status {
    std::string data = std::filesystem::absolute(o.data).lexically_normal().string();
    std::string token_file = data + "/admin.token";
    std::string config = ClientConfigPath();
    std::string config_note = "not written";
    if (o.write_config && !config.empty()) {
      Status st = WriteClientConfig(config, url, token_file);
      config_note = st.ok() ? config : "not written: " + st.message();
    }
    if (o.demo) {
      Status st = server::LoadDemo(cp, examples);
      if (!st.ok()) return st;
    }
    std::string agent_note = "none (--no-agent)";
    if (o.local_agent) {
      auto names = agents->Start(url, data, o.demo);
      if (!names.ok()) return names.status();
      agent_note.clear();
      for (const auto& n : *names) agent_note += (agent_note.empty() ? "" : ", ") + n;
      agent_note += " (in this process; work under " + data + "/agents)";
      if (o.demo) {
        Status st = server::SubmitDemoHello(cp, examples);
        if (!st.ok()) return st;
      }
    }
    std::cout << "Abacus is up: " << url << "\n"
              << "  data:    " << data << " (SQLite " << data << "/abacus.db)\n"
              << "  token:   " << token_file << " (agents join with " << data << "/join.token)\n"
              << "  web UI:  " << url << "/ui/ (sign in with the token)\n"
              << "  config:  " << config_note << "\n"
              << "  agents:  " << agent_note << "\n";
    if (o.demo) {
      std::cout << "  demo:    12 simulated nodes (H100, A100, T4, Ascend 910B, CPU; placed, not run), "
                   "examples/org.yaml, examples/workloads/*.yaml, and examples/demo/hello.yaml running on the agents\n";
    }
    std::cout << "\nTry:\n"
              << "  abacus get nodes\n"
              << "  abacus get workloads\n"
              << (o.demo ? "  abacus explain pangu-pretrain\n  abacus logs hello-gpu\n" : "  abacus apply -f examples/org.yaml\n")
              << "\nPress Ctrl-C to stop.\n"
              << std::flush;
    return Status::OK();
  };
  return server::RunServer(ro);
}

}  // namespace

void AddServerCommands(CLI::App& app, int* exit_code) {
  {
    auto ro = std::make_shared<server::RunOptions>();
    auto store = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        "server", "Run the control plane: REST API, ledger and scheduler (until SIGTERM/SIGINT).\n"
                  "Example: abacus server --data /var/lib/abacus --listen 0.0.0.0:8420\n"
                  "Every option is also a key of the config file (--config, default /etc/abacus/server.yaml).");
    auto config = std::make_shared<CommandConfig>(cmd, "/etc/abacus/server.yaml");
    cmd->add_option("--data", ro->data_dir, "data directory (tokens, SQLite database)")->capture_default_str();
    cmd->add_option("--listen", ro->listen, "HOST:PORT to listen on (port 0: any free port, written to DATA/server.url)")
        ->check(CLI::Validator(
            [](std::string& text) {
              auto addr = server::ParseListen(text);
              return addr.ok() ? std::string() : addr.status().message();
            },
            "HOST:PORT"))
        ->capture_default_str();
    cmd->add_option("--store", *store, "store URL: sqlite://PATH (default DATA/abacus.db), postgres://USER@HOST:PORT/DB (docs/store.md)");
    cmd->add_option("--max-body", ro->max_body_bytes, "largest request body in bytes (else 413)")
        ->check(AtLeast(1))
        ->capture_default_str();
    cmd->add_option("--http-threads", ro->http_threads,
                    "HTTP worker threads, 1 to 4096 (each runs one request at a time, or waits in a long poll or for "
                    "its commit: with few, a watch or an agent's long poll holds one and /healthz waits)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd->add_option("--http-running", ro->http_running,
                    "of the HTTP workers, how many run on the CPU at once; the others wait their turn "
                    "(a worker waiting for a commit, the loop or a long poll does not count); 0: four per core")
        ->check(AtLeast(0))
        ->capture_default_str();
    cmd->add_option("--header-timeout", ro->header_timeout_seconds,
                    "seconds a request's head may take to arrive (else 408 and close)")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    cmd->add_option("--max-connections-per-client", ro->max_connections_per_client,
                    "open connections one client address may hold (else 503 and close); 0: no limit")
        ->check(AtLeast(0))
        ->capture_default_str();
    cmd->add_option("--tls-cert", ro->tls_cert_file, "PEM certificate (chain): serve HTTPS (with --tls-key)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--tls-key", ro->tls_key_file, "PEM private key of --tls-cert (unencrypted)")->check(CLI::ExistingFile);
    cmd->add_option("--heartbeat", ro->heartbeat_seconds, "seconds between agent heartbeats (told to agents)")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    cmd->add_option("--node-timeout", ro->node_timeout_seconds,
                    "seconds of agent silence after which a node is NotReady and its tasks are requeued")
        ->check(CLI::Range(1, 86400))
        ->capture_default_str();
    auto fencing = std::make_shared<std::string>("TrainingJob=30s");
    cmd->add_option("--fencing-grace", *fencing,
                    "KIND=DURATION,…: how long a cut-off agent's tasks of each kind may take to stop after the node "
                    "timeout before the server runs them elsewhere (other kinds 10s; a checkpoint's graceSeconds "
                    "wins; docs/agent-protocol.md)")
        ->capture_default_str();
    cmd->add_flag("--ha", ro->ha,
                  "high availability: share --store (PostgreSQL) with other servers; the one holding the scheduling "
                  "lease schedules, the others forward to it and take over when it dies (docs/operations.md)");
    cmd->add_option("--advertise", ro->advertise,
                    "with --ha: this server's URL for the other servers and the agents (default: http(s)://LISTEN)");
    cmd->add_option("--audit-key", ro->audit_key_file,
                    "file holding the key that signs audit anchors (created mode 0600; default DATA/audit.key); keep it "
                    "where whoever can write the database cannot read it");
    cmd->add_option("--audit-anchor", ro->audit_anchor_file,
                    "append-only file the signed audit chain heads go to (default DATA/audit.anchors); `abacus audit "
                    "--verify` checks the chain against it (docs/governance.md)");
    auto health = std::make_shared<HealthFlags>();
    AddHealthFlags(cmd, health);
    cmd->add_option("--secrets-key", ro->secrets_key_file,
                    "file holding the key Secret values are sealed with (AES-256-GCM; created mode 0600; default "
                    "DATA/secrets.key); keep it out of the store's backups (docs/governance.md, Secrets)");
    cmd->add_option("--secrets-keyring", ro->secrets_keyring_file,
                    "file of older secrets keys (64 hex a line, mode 0600) that still open values after a rotation "
                    "(default DATA/secrets.keyring; `abacus secret reencrypt` re-seals with the new key)");
    auto half_life = std::make_shared<std::string>("7d");
    cmd->add_option("--fair-share-half-life", *half_life,
                    "half-life of past usage for fair share over time (Slurm's PriorityDecayHalfLife): after nominal "
                    "quota, the queue with less decayed usage per share goes first for borrowed capacity and is "
                    "reclaimed last (docs/scheduler.md); 0: off, usage forgotten at once")
        ->capture_default_str();
    auto audit_check = std::make_shared<std::string>("30m");
    cmd->add_option("--audit-check-every", *audit_check,
                    "how often the server verifies the whole audit chain in the background (abacus_audit_chain_ok in "
                    "/metrics, alert AbacusAuditChainBroken); 0: never")
        ->capture_default_str();
    auto rate = std::make_shared<std::string>("200:400");
    cmd->add_option("--rate-limit", *rate,
                    "requests a second per token, RATE[:BURST] (token bucket, 429 with Retry-After beyond); 0: none")
        ->capture_default_str();
    auto tenant_rate = std::make_shared<std::string>("1000:2000");
    cmd->add_option("--tenant-rate-limit", *tenant_rate,
                    "requests a second per tenant, all its users together, RATE[:BURST]; 0: none "
                    "(--rate-limit holds per token and per user)")
        ->capture_default_str();
    cmd->add_option("--max-tokens-per-user", ro->max_tokens_per_user,
                    "active API tokens one user may hold (409 beyond; revoke one first); 0: no cap")
        ->capture_default_str();
    cmd->add_option("--max-task-log-bytes", ro->max_task_log_bytes,
                    "stored output of one task per stream (DATA/logs); beyond it shipped output is dropped; 0: no bound")
        ->check(AtLeast(0))
        ->capture_default_str();
    cmd->callback([=] {
      Status loaded = config->Apply();
      if (!loaded.ok()) {
        std::cerr << "abacus server: " << loaded.message() << "\n";
        *exit_code = kExitUsage;
        return;
      }
      if (config->print_only()) {
        std::cout << config->Effective();
        return;
      }
      ro->store_url = *store;
      auto fence = server::ParseFencingGrace(*fencing);
      if (!fence.ok()) {
        std::cerr << "error: " << config->Where("fencing-grace") << ": " << fence.status().message() << "\n";
        *exit_code = kExitUsage;
        return;
      }
      ro->fencing = *fence;
      auto check_every = ParseDurationSpec(*audit_check);
      if (!check_every.ok()) {
        std::cerr << "error: " << config->Where("audit-check-every") << ": " << check_every.status().message() << "\n";
        *exit_code = kExitUsage;
        return;
      }
      ro->audit_check_every = *check_every;
      auto half = ParseDurationSpec(*half_life);
      if (!half.ok()) {
        std::cerr << "error: " << config->Where("fair-share-half-life") << ": " << half.status().message()
                  << " (a duration such as 7d or 12h; 0 turns fair share off)\n";
        *exit_code = kExitUsage;
        return;
      }
      ro->fair_share_half_life = *half;
      auto policy = ResolveHealthFlags(*health, [&](const std::string& key) { return config->Where(key); });
      if (!policy.ok()) {
        std::cerr << "error: " << policy.status().message() << "\n";
        *exit_code = kExitUsage;
        return;
      }
      ro->health = *policy;
      if (!ParseRateLimit(*rate, ro->rate_limit, ro->rate_burst)) {
        std::cerr << "error: " << config->Where("rate-limit") << ": expected RATE[:BURST] with non-negative numbers, got '"
                  << *rate << "'\n";
        *exit_code = 2;
        return;
      }
      if (!ParseRateLimit(*tenant_rate, ro->tenant_rate_limit, ro->tenant_rate_burst)) {
        std::cerr << "error: " << config->Where("tenant-rate-limit")
                  << ": expected RATE[:BURST] with non-negative numbers, got '" << *tenant_rate
                  << "'\n";
        *exit_code = 2;
        return;
      }
      *exit_code = server::RunServer(*ro);
    });
  }
  {
    auto o = std::make_shared<UpOptions>();
    CLI::App* cmd = app.add_subcommand(
        "up", "Run Abacus on this machine: the server with SQLite in a data folder, and the CLI config so that the "
              "client verbs find it. Stays in the foreground until Ctrl-C.\n"
              "Example: abacus up --demo");
    cmd->add_option("--data", o->data, "data directory")->capture_default_str();
    cmd->add_option("--listen", o->listen, "HOST:PORT to listen on")->capture_default_str();
    cmd->add_flag("--demo", o->demo, "add simulated GPU/NPU/CPU nodes, examples/org.yaml and the example workloads");
    cmd->add_flag("!--no-config", o->write_config, "do not write the CLI config file");
    cmd->add_flag("!--no-agent", o->local_agent, "do not run the local agent (and, with --demo, the fake GPU/NPU agents)");
    cmd->callback([=] { *exit_code = RunUp(*o); });
  }
}

}  // namespace abacus::cli

// ControlPlane: opening (store, governance, ledger, usage, the loop thread) and shutting down.
#include "server/control_plane.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "common/log.h"
#include "common/mutex.h"
#include "common/nesting.h"
#include "common/thread_name.h"
#include "control/controller.h"
#include "govern/crypto.h"
#include "sched/claims.h"
#include "sched/explain.h"
#include "server/device_holders.h"
#include "server/elastic_units.h"
#include "server/fit_check.h"
#include "server/governance.h"
#include "server/node_history.h"
#include "server/node_liveness.h"
#include "server/quota_view.h"
#include "server/reservations.h"
#include "server/reserved_pool.h"
#include "server/workload_update.h"
#include "store/data_folder_lock.h"
#include "store/fenced_store.h"
#include "tenancy/priority_class.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/secret_doc.h"
#include "workload/workload_codec.h"

namespace abacus::server {

using nlohmann::json;

ControlPlane::ControlPlane(const ControlPlaneOptions& options)
    : options_(options),
      clock_(options.clock != nullptr ? *options.clock : SystemClock::Get()),
      ids_(options.ids != nullptr ? *options.ids : default_ids_),
      pacer_(options.min_cycle_gap, options.cycle_interval) {}

Result<std::string> PrepareDataDir(const std::string& data_dir, const std::string& store_url) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Unavailable("cannot create data directory " + data_dir + ": " + ec.message());
  std::filesystem::permissions(data_dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace,
                               ec);
  return store_url.empty() ? "sqlite://" + std::filesystem::absolute(data_dir).string() + "/abacus.db" : store_url;
}

Result<std::unique_ptr<ControlPlane>> ControlPlane::Open(const ControlPlaneOptions& options) {
  std::unique_ptr<ControlPlane> cp(new ControlPlane(options));
  ABACUS_ASSIGN_OR_RETURN(std::string url, PrepareDataDir(options.data_dir, options.store_url));
  if (options.lock_data_dir && !options.fence) {
    // One server per data folder (issue 20, point 11); under HA the lease decides instead.
    ABACUS_ASSIGN_OR_RETURN(cp->data_lock_, DataFolderLock::Acquire(options.data_dir, "server"));
    // A SQLite store named outside the data folder (--store sqlite:///other/abacus.db) is locked
    // at its own folder too: a second server whose store is this one's, or whose data folder
    // holds it, is refused at start (before, it started, and the first then failed every write).
    const std::string store_folder = SqliteDataFolder(url);
    std::error_code ec;
    if (!store_folder.empty() && !std::filesystem::equivalent(store_folder, options.data_dir, ec)) {
      std::filesystem::create_directories(store_folder, ec);
      auto locked = DataFolderLock::Acquire(store_folder, "server");
      if (!locked.ok()) return locked.status().WithContext("--store " + url);
      cp->store_lock_ = std::move(*locked);
    }
  }
  if (options.lock_data_dir && (url.starts_with("postgres://") || url.starts_with("postgresql://"))) {
    // One database, one writer: exclusive without --ha, shared by HA leaders (the lease decides
    // among them).
    ABACUS_ASSIGN_OR_RETURN(cp->pg_lock_, LockPostgresWriters(url, options.fence.has_value()));
  }
  StoreOptions so;
  so.clock = &cp->clock_;
  ABACUS_ASSIGN_OR_RETURN(cp->store_, OpenStore(url, so));
  if (options.fence) cp->store_ = std::make_unique<FencedStore>(std::move(cp->store_), *options.fence);
  if (options.wrap_store) cp->store_ = options.wrap_store(std::move(cp->store_));
  ABACUS_ASSIGN_OR_RETURN(auto auth, TokenAuthorizer::Open(*cp->store_, options.data_dir));
  cp->tokens_ = auth.get();
  cp->authorizer_ = std::move(auth);
  cp->governance_store_ = std::make_unique<StoreViaCommitter>(*cp->store_);
  Governance::Options go;
  const std::filesystem::path data(options.data_dir);
  go.audit_key_file = options.audit_key_file.empty() ? (data / "audit.key").string() : options.audit_key_file;
  go.audit_anchor_file =
      options.audit_anchor_file.empty() ? (data / "audit.anchors").string() : options.audit_anchor_file;
  ABACUS_ASSIGN_OR_RETURN(cp->governance_, Governance::Open(*cp->governance_store_, cp->clock_, *cp->tokens_, go));
  {
    const std::string key = options.secrets_key_file.empty() ? (data / "secrets.key").string() : options.secrets_key_file;
    const std::string ring =
        options.secrets_keyring_file.empty() ? (data / "secrets.keyring").string() : options.secrets_keyring_file;
    ABACUS_RETURN_IF_ERROR(CheckSecretsKeyAtStart(*cp->store_, key));
    ABACUS_ASSIGN_OR_RETURN(auto keyring, govern::LoadOrCreateSecretKeyring(key, ring));
    RegisterSecretKind();  // kind: Secret in apply (SecretVault::Prepare)
    cp->secrets_ = std::make_unique<SecretVault>(*cp->governance_store_, *cp->governance_, std::move(keyring));
    ABACUS_ASSIGN_OR_RETURN(std::vector<std::string> unopenable, cp->secrets_->SealedWithKeysNotHeld());
    if (!unopenable.empty()) {
      std::string list;
      for (size_t i = 0; i < unopenable.size() && i < 5; ++i) list += (i ? ", " : "") + unopenable[i];
      if (unopenable.size() > 5) list += ", …";
      ABACUS_LOG_WARN("{} secret(s) are sealed with a key that neither {} nor {} holds: {}; tasks naming them fail "
                      "until that key is put back, in the key file or the keyring (docs/governance.md, Secrets, Rotation)",
                      unopenable.size(), key, ring, list);
    }
  }
  cp->audit_watch_ = std::make_unique<AuditWatch>(*cp->governance_, cp->clock_, options.audit_check_every);
  ABACUS_RETURN_IF_ERROR(cp->ledger_.Load(*cp->store_));
  {
    // New workload ids come after every stored one, whatever this server's clock says.
    std::string last;
    for (const auto& [id, r] : cp->ledger_.workloads()) last = std::max(last, id);
    if (!last.empty()) cp->ids_.Resume(last);
  }
  // Agents: node credentials, and the assignments as they were (same task ids: nothing starts
  // twice); every agent node gets a full timeout from now to call again.
  cp->board_ = std::make_unique<AssignmentBoard>(static_cast<uint64_t>(ToMicros(cp->clock_.Now())));
  cp->feed_ = std::make_unique<ChangeFeed>(static_cast<uint64_t>(ToMicros(cp->clock_.Now())));
  // A credential that stops standing wakes the long polls (watches, log follows, assignments):
  // each asks whether its caller still stands and answers 401 at once if not.
  cp->governance_->OnCredentialsChanged([p = cp.get()] {
    p->feed_->WakeWaiters();
    p->board_->WakeAll();
  });
  for (const auto& [name, n] : cp->ledger_.nodes()) {
    if (n.agent && !n.credential_sha256.empty()) cp->tokens_->SetNodeCredential(name, n.credential_sha256);
    if (n.cordon.state == NodeState::kDraining) cp->steps_.draining_nodes.insert(name);  // a drain goes on
  }
  // Metering: the usage ledger reconciled with the records, and the fair share over time.
  ABACUS_ASSIGN_OR_RETURN(cp->usage_,
                          UsageSync::Open(*cp->store_, cp->clock_, cp->ledger_, options.scheduler.fair_share_half_life));
  // A failed commit of the loop's own (loop_commits.h): once everything in flight with it has
  // settled, the usage staged in memory is reloaded from what is durable, and the next cycle
  // decides again.
  cp->commits_.SetAfterFailure([p = cp.get()] {
    p->usage_->CommitFailed();
    p->pacer_.Changed();
  });
  ABACUS_RETURN_IF_ERROR(cp->LoadPriceLists());
  for (const auto& [id, r] : cp->ledger_.workloads()) {
    if (!IsTerminal(r.state)) {
      MutexLock names(cp->names_mu_);  // no other thread yet; taken for the analysis (uncontended)
      cp->active_names_[r.spec.project + "/" + r.spec.name] = id;
    }
    if (r.state == WorkloadState::kPreempting) cp->steps_.preempting.insert(id);
    if (!r.waiting() && !r.placements.empty()) cp->Publish(r);
  }
  ABACUS_LOG_INFO("ledger loaded from {}: {} nodes, {} workloads ({} active)", cp->store_->Describe(),
                  cp->ledger_.nodes().size(), cp->ledger_.workloads().size(), cp->ledger_.active_count());
  cp->governance_store_->Attach(&cp->governance_->committer());  // governance's writes join the one committer
  cp->loop_thread_ = std::thread([p = cp.get()] {
    NameThisThread("abacus-loop");
    p->Loop();
  });
  cp->ready_ = true;
  return cp;
}

ControlPlane::~ControlPlane() { Shutdown(); }

void ControlPlane::StopLoop() {
  inbox_.Close();
  MutexLock join(stop_loop_mu_);
  if (loop_thread_.joinable()) loop_thread_.join();
}

void ControlPlane::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    ready_ = false;
    if (board_) board_->Shutdown();
    if (feed_) feed_->Shutdown();
    StopLoop();
    if (audit_watch_) audit_watch_->Stop();
    // Everything queued commits; then governance's last writes (if any) go straight to the store.
    if (governance_) governance_->FlushAudit();
    if (governance_store_) governance_store_->Attach(nullptr);
    if (governance_) governance_->Shutdown();  // stops the committer: the queued entries are written
    store_.reset();
  });
}

}  // namespace abacus::server

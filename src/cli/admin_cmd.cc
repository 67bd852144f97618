// `abacus admin migrate`: moves an installation's state from one store to another (SQLite to
// PostgreSQL and back), then verifies the copy by counts and a SHA-256 on both sides
// (store/store_copy.h, docs/store.md).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/client.h"
#include "cli/number_flags.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "govern/crypto.h"
#include "server/auth.h"
#include "store/data_folder_lock.h"
#include "store/store.h"
#include "store/store_copy.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct MigrateOptions {
  std::string from, to, output = "table";
  bool force = false;
  bool quiet = false;
  size_t chunk = 2000;
};

json DigestJson(const StoreDigest& d) {
  return json{{"objects", d.objects}, {"journal", d.journal},   {"events", d.events},
              {"lastEventSeq", d.last_event_seq}, {"meta", d.meta}, {"sha256", d.sha256}};
}

int RunMigrate(const MigrateOptions& o) {
  if (o.from == o.to) {
    std::cerr << "error: --from and --to name the same store\n";
    return kExitUsage;
  }
  // Opening a SQLite url creates the file: a mistyped --from would "migrate" an empty store.
  if (o.from.starts_with("sqlite://")) {
    std::string path = o.from.substr(9, o.from.find('?') == std::string::npos ? std::string::npos
                                                                                : o.from.find('?') - 9);
    if (path != ":memory:" && !std::filesystem::exists(path)) {
      std::cerr << "error: --from: no SQLite database at " << path << "\n";
      return kExitUsage;
    }
  }
  // The target's data folder is ours while we write it: no server may run on it (issue 20).
  std::unique_ptr<DataFolderLock> target_lock;
  if (std::string folder = SqliteDataFolder(o.to); !folder.empty() && std::filesystem::is_directory(folder)) {
    auto lock = DataFolderLock::Acquire(folder, "admin migrate");
    if (!lock.ok()) {
      std::cerr << "error: --to: " << lock.status().message() << "\n";
      return kExitRefused;
    }
    target_lock = std::move(*lock);
  }
  // The source's too: a copy of a live store misses what its server writes meanwhile (the
  // verification would only fail at the end), and no server may start on it during the copy.
  std::unique_ptr<DataFolderLock> source_lock;
  if (std::string folder = SqliteDataFolder(o.from);
      !folder.empty() && std::filesystem::is_directory(folder) && folder != SqliteDataFolder(o.to)) {
    auto lock = DataFolderLock::Acquire(folder, "admin migrate", "data folder",
                                        "stop its server first: a copy of a live store misses what it writes meanwhile");
    if (!lock.ok()) {
      std::cerr << "error: --from: " << lock.status().message() << "\n";
      return kExitRefused;
    }
    source_lock = std::move(*lock);
  }
  auto from = OpenStore(o.from);
  if (!from.ok()) {
    std::cerr << "error: --from: " << from.status().ToString() << "\n";
    return kExitRefused;
  }
  auto to = OpenStore(o.to);
  if (!to.ok()) {
    std::cerr << "error: --to: " << to.status().ToString() << "\n";
    return kExitRefused;
  }
  if (!o.quiet) {
    std::cerr << "migrate: " << (*from)->Describe() << " -> " << (*to)->Describe() << "\n";
  }
  CopyOptions options;
  options.force = o.force;
  options.chunk = o.chunk;
  if (!o.quiet) options.progress = [](const std::string& line) { std::cerr << "migrate: " << line << "\n"; };
  auto report = CopyStore(**from, **to, options);
  if (!report.ok()) {
    std::cerr << "error: " << report.status().message() << "\n";
    return kExitRefused;
  }
  if (o.output == "json") {
    std::cout << json{{"from", (*from)->Describe()},
                      {"to", (*to)->Describe()},
                      {"verified", true},
                      {"source", DigestJson(report->source)},
                      {"target", DigestJson(report->target)}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [kind, n] : report->source.objects) {
    rows.push_back({"objects", kind, std::to_string(n), std::to_string(report->target.objects.at(kind))});
  }
  rows.push_back({"events", "-", std::to_string(report->source.events), std::to_string(report->target.events)});
  for (const auto& [stream, n] : report->source.journal) {
    rows.push_back({"journal", stream, std::to_string(n), std::to_string(report->target.journal.at(stream))});
  }
  rows.push_back({"meta", "-", std::to_string(report->source.meta), std::to_string(report->target.meta)});
  PrintTable(std::cout, {"RECORDS", "KIND/STREAM", "SOURCE", "TARGET"}, rows);
  std::cout << "sha256 " << report->source.sha256 << " (both sides)\n"
            << "verified: " << (*to)->Describe() << " holds the same records as "
            << (*from)->Describe() << "\n";
  return kExitOk;
}

struct ResetAdminOptions {
  std::string data, store;
};

// Break-glass (docs/operations.md): every admin token is lost and nobody can call the server as
// admin. With the server stopped, on its machine: a new admin token in the store and in
// DATA/admin.token (mode 0600). The data folder lock keeps a running server out.
int RunResetAdminToken(const ResetAdminOptions& o) {
  if (!std::filesystem::is_directory(o.data)) {
    std::cerr << "error: --data: no data folder at " << o.data << "\n";
    return kExitUsage;
  }
  auto lock = DataFolderLock::Acquire(o.data, "admin reset-admin-token");
  if (!lock.ok()) {
    std::cerr << "error: " << lock.status().message() << "\n";  // "in use by … (server): stop it first"
    return kExitRefused;
  }
  std::string url = o.store.empty() ? "sqlite://" + (std::filesystem::path(o.data) / "abacus.db").string() : o.store;
  if (url.starts_with("sqlite://") && !std::filesystem::exists(url.substr(9))) {
    std::cerr << "error: no store at " << url.substr(9) << " (is --data the server's data folder? else pass --store)\n";
    return kExitUsage;
  }
  auto store = OpenStore(url);
  if (!store.ok()) {
    std::cerr << "error: " << store.status().ToString() << "\n";
    return kExitRefused;
  }
  std::string token = govern::RandomHex(32);
  if (Status st = (*store)->Commit(WriteBatch().PutMeta(server::TokenAuthorizer::kAdminTokenMeta, govern::Sha256Hex(token)));
      !st.ok()) {
    std::cerr << "error: " << st.ToString() << "\n";
    return kExitRefused;
  }
  std::string path = (std::filesystem::path(o.data) / "admin.token").string();
  if (Status st = server::WritePrivateFile(path, token + "\n"); !st.ok()) {
    std::cerr << "error: " << st.message() << "; the new admin token is " << token << "\n";
    return kExitRefused;
  }
  std::cout << token << "\n";
  std::cerr << "admin token reset in " << (*store)->Describe() << " and written to " << path
            << " (mode 0600); the old one no longer works once the server starts\n";
  return kExitOk;
}

}  // namespace

void AddAdminCommand(CLI::App& app, int* exit_code) {
  CLI::App* admin =
      app.add_subcommand("admin", "Administration of an installation's store (migrate, reset-admin-token).");
  admin->require_subcommand(1);
  {
    auto r = std::make_shared<ResetAdminOptions>();
    CLI::App* cmd = admin->add_subcommand(
        "reset-admin-token",
        "Break-glass: a new admin token when every admin token is lost. Run on the server's machine with the server\n"
        "stopped (it holds the data folder); prints the token and writes DATA/admin.token (mode 0600). With a\n"
        "running server and a working admin token, use `abacus token rotate-admin` instead (audited).\n"
        "Example: abacus admin reset-admin-token --data /var/lib/abacus");
    cmd->add_option("--data", r->data, "the server's data folder")->required();
    cmd->add_option("--store", r->store, "the server's store URL when not DATA/abacus.db (postgres://…)");
    cmd->callback([r, exit_code] { *exit_code = RunResetAdminToken(*r); });
  }
  auto o = std::make_shared<MigrateOptions>();
  CLI::App* cmd = admin->add_subcommand(
      "migrate",
      "Copy every record of one store into another - objects with their versions, events and journal entries "
      "with their sequence numbers, store settings - then verify the copy: counts per kind and per journal "
      "stream, and a SHA-256 over all records in order, computed on both sides.\n"
      "Stop the server first (a record written during the copy fails the verification). The target must be "
      "empty unless --force, which erases it first. Progress goes to stderr, the verified counts to stdout.\n"
      "Store URLs: sqlite://PATH (the default store is DATA/abacus.db), postgres://USER:PASSWORD@HOST:PORT/DB "
      "(libpq options such as ?sslmode=require may follow).\n"
      "Example (move to PostgreSQL, then start the server on it):\n"
      "  abacus admin migrate --from sqlite://.abacus/abacus.db --to postgres://abacus@127.0.0.1:5432/abacus\n"
      "  abacus server --data .abacus --store postgres://abacus@127.0.0.1:5432/abacus\n"
      "Example (and back): abacus admin migrate --from postgres://abacus@db/abacus --to sqlite:///srv/abacus.db");
  cmd->add_option("--from", o->from, "the store to copy (its server stopped)")->required();
  cmd->add_option("--to", o->to, "the store to fill; created or migrated to the current schema if needed")->required();
  cmd->add_flag("--force", o->force, "erase a non-empty target first (everything in it is lost)");
  cmd->add_option("--chunk", o->chunk, "records per target transaction")->capture_default_str()->check(AtLeast(1));
  cmd->add_flag("-q,--quiet", o->quiet, "no progress on stderr");
  cmd->add_option("-o,--output", o->output, "table or json")->capture_default_str()->check(CLI::IsMember({"table", "json"}));
  cmd->callback([o, exit_code] { *exit_code = RunMigrate(*o); });
}

}  // namespace abacus::cli

// `abacus report KIND`: metering reports from the server (/api/v1/reports/*, docs/metering.md).
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "cli/client.h"
#include "cli/verbs.h"

namespace abacus::cli {
namespace {

struct ReportOptions {
  std::string kind, from, to, by, prices, output = "table", out_file, server, token, ca_cert;
  std::string selector;  // -l: workloads whose labels match
  double threshold = -1;
};

int RunReport(const ReportOptions& o) {
  ApiClient api(ResolveClientConfig(o.server, o.token, o.ca_cert));
  std::string format = o.output;
  if (o.kind == "evidence" && format == "table") format = "md";
  std::string path = "/api/v1/reports/" + UrlEncode(o.kind) + "?format=" + UrlEncode(format);
  if (!o.from.empty()) path += "&from=" + UrlEncode(o.from);
  if (!o.to.empty()) path += "&to=" + UrlEncode(o.to);
  if (!o.by.empty()) path += "&by=" + UrlEncode(o.by);
  if (!o.prices.empty()) path += "&prices=" + UrlEncode(o.prices);
  if (!o.selector.empty()) path += "&labelSelector=" + UrlEncode(o.selector);
  if (o.threshold >= 0) path += "&threshold=" + std::to_string(o.threshold);
  ApiResponse r = api.Get(path);
  if (!r.ok()) {
    std::cerr << "error: " << (r.status == 0 ? r.error : r.body.is_object() ? r.body["error"].value("message", r.text) : r.text)
              << "\n";
    return r.ExitCode();
  }
  if (!o.out_file.empty()) {
    std::ofstream out(o.out_file, std::ios::binary);
    out << r.text;
    if (!out) {
      std::cerr << "error: cannot write " << o.out_file << "\n";
      return kExitRefused;
    }
    std::cerr << "wrote " << o.out_file << " (" << r.text.size() << " bytes)\n";
    return kExitOk;
  }
  std::cout << r.text;
  if (!r.text.empty() && r.text.back() != '\n') std::cout << "\n";
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Usage, cost and service reports from the metering ledger.\n"
      "  usage      device-, core- and GiB-hours and cost, grouped (--by tenant,project,queue,flavor,model,\n"
      "             cluster,kind,priorityClass and one of day|week|month)\n"
      "  wait       queue wait p50/p95/p99 by queue and flavor\n"
      "  failures   failed workloads by reason and kind\n"
      "  idle       allocated device-hours whose measured utilization stayed below --threshold\n"
      "  shortages  time inference services wanted replicas they could not get\n"
      "  borrowing  who lent how much to whom inside each cohort\n"
      "  utilization  device-hours that existed, allocated, idle, down and drained, per flavor (--by pool,cluster), as\n"
      "             sreport cluster utilization counts them\n"
      "  evidence   one document for a POC or an audit (-o md|html|json)\n"
      "Examples: abacus report usage --by tenant,month -o csv\n"
      "          abacus report usage --by user --from 7d\n"
      "          abacus report usage --by project -l team=vision\n"
      "          abacus report wait --from yesterday --to today\n"
      "          abacus report evidence --from 2026-11-01 --to 2026-12-01 -o html --out evidence.html");
  cmd->add_option("KIND", o->kind, "usage, wait, failures, idle, shortages, borrowing, utilization or evidence")
      ->required()
      ->check(CLI::IsMember({"usage", "wait", "failures", "idle", "shortages", "borrowing", "utilization", "evidence"}));
  cmd->add_option("--from", o->from,
                  "start: an RFC 3339 time, a date, a duration ago (7d, 24h), today or yesterday, as audit --since "
                  "takes (default: 30 days ago)");
  cmd->add_option("--to", o->to, "end, exclusive, in the same forms (default: now)");
  cmd->add_option("--by", o->by, "grouping, comma-separated");
  cmd->add_option("-l,--selector", o->selector,
                  "only workloads whose labels match: k=v,k2!=v,k,!k (as get workloads -l); quotas and capacity stay "
                  "whole");
  cmd->add_option("--prices", o->prices, "price list name (default: 'default', or the only one)");
  cmd->add_option("--threshold", o->threshold, "idle: utilization below this ratio is idle (default 0.05)");
  cmd->add_option("-o,--output", o->output, "table, csv or json; evidence: md, html or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "csv", "json", "md", "html"}));
  cmd->add_option("--out", o->out_file, "write to this file instead of stdout");
  cmd->add_option("--server", o->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", o->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", o->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  cmd->callback([=] { *exit_code = RunReport(*o); });
}

}  // namespace abacus::cli

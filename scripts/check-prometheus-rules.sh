#!/usr/bin/env bash
# Checks and unit-tests the shipped Prometheus alerting rules with promtool (ctest
# prometheus_rules): `promtool check rules`, then `promtool test rules` on the series and expected
# alerts of packaging/prometheus/abacus-rules-test.yaml. Exit 77 (skipped) without promtool,
# unless ABACUS_REQUIRE_PROMTOOL is set (CI).
set -euo pipefail
cd "$(dirname "$0")/../packaging/prometheus"
if ! command -v promtool >/dev/null 2>&1; then
  echo "promtool not installed (scripts/install-deps.sh installs the prometheus package)" >&2
  [ -n "${ABACUS_REQUIRE_PROMTOOL:-}" ] && exit 1
  exit 77
fi
promtool check rules abacus-rules.yaml
promtool test rules abacus-rules-test.yaml

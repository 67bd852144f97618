#!/usr/bin/env bash
# Installs every Debian package that building and testing Abacus needs.
# Idempotent: prints nothing and exits 0 when all packages are already present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev
  libpq-dev libpqxx-dev libspdlog-dev libfmt-dev libcli11-dev libssl-dev
  zlib1g-dev libbrotli-dev libhwloc-dev libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev openssl
  nodejs chromium  # the web dashboard (npm ci, Vite) and its browser test (docs/ui.md)
  haproxy python3  # the data plane of `abacus gateway` (issue 24), started by its tests on loopback; python3 runs their replicas
  postgresql  # the PostgreSQL store's tests start a throwaway server (scripts/pg-test.sh)
  dpkg-dev file  # make package: dpkg-shlibdeps, and `file` for CPack's ELF detection
  podman runc catatonit busybox-static  # real containers in tests (issue 24, docs/agent.md "Containers"): runc, not crun, on hybrid cgroup hosts; catatonit for --init; the test image is a busybox-static root filesystem
  zsh  # the package's zsh completion is loaded by a real zsh in its test
  sqlite3  # the backup procedure of docs/operations.md (sqlite3 VACUUM INTO), run as written by its test
  prometheus  # promtool: `promtool check metrics` and `promtool test rules` in the tests (no daemon is started)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Debian's nodejs comes without npm; NodeSource's nodejs carries its own (and conflicts with Debian's npm).
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# No package may start its daemon here (prometheus, postgresql, haproxy): the tests start what they need,
# on loopback. Debian asks /usr/sbin/policy-rc.d before starting a service; 101 means "not now".
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
  $SUDO chmod 755 "$POLICY"
  trap '$SUDO rm -f "$POLICY"' EXIT
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: done" >&2

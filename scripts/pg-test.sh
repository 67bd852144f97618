#!/usr/bin/env bash
# Starts and stops a throwaway PostgreSQL cluster for tests and benchmarks (no Docker, no
# system service): initdb into DIR, a server that listens on a unix socket in DIR (and, with
# --tcp, on 127.0.0.1 at a free port), a database "abacus" owned by the superuser "abacus".
#
#   scripts/pg-test.sh start DIR [--tcp] [--durable]   prints the database URL, also in DIR/url
#   scripts/pg-test.sh stop DIR                         stops the server and removes DIR
#   scripts/pg-test.sh url DIR                          prints the URL of a running cluster
#   scripts/pg-test.sh createdb DIR NAME                creates database NAME, prints its URL
#   scripts/pg-test.sh fixture-start DIR                the ctest fixture: stops a cluster left
#                                                       in DIR, starts a fresh one; exits 0
#                                                       (and starts nothing) without binaries
#
# Without --durable the server runs with fsync=off (tests); --durable keeps PostgreSQL's
# defaults (benchmarks). As root, initdb and postgres run as the user "postgres" (created by the
# Debian package) or else "nobody": PostgreSQL refuses to run as root.
# Exit status 3: no PostgreSQL server binaries (install the Debian package "postgresql", or set
# ABACUS_PG_BIN to the folder holding initdb and pg_ctl).
set -euo pipefail

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2
shift 2
if [ "$cmd" = createdb ]; then
  [ $# -eq 1 ] || usage
  base=$(cat "$dir/url")
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r | head -1)
  [ -n "${ABACUS_PG_BIN:-}" ] && bin=$ABACUS_PG_BIN
  [ -x "$bin/psql" ] || bin=$(dirname "$(command -v psql)")
  "$bin/psql" -q "$base" -c "CREATE DATABASE \"$1\"" >/dev/null
  case $base in
    *\?*) echo "${base%%/abacus\?*}/$1?${base#*\?}" ;;
    *) echo "${base%/abacus}/$1" ;;
  esac
  exit 0
fi
tcp=0 durable=0
for a in "$@"; do
  case $a in
    --tcp) tcp=1 ;;
    --durable) durable=1 ;;
    *) usage ;;
  esac
done

find_bin() {
  if [ -n "${ABACUS_PG_BIN:-}" ]; then  # an explicit folder, and only it
    if [ -x "$ABACUS_PG_BIN/initdb" ]; then echo "$ABACUS_PG_BIN"; return; fi
    return 1
  fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return
  fi
  return 1
}

# Runs a command as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$owner" -- "$@"; else "$@"; fi
}

owner=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
  if id postgres >/dev/null 2>&1; then owner=postgres; else owner=nobody; fi
fi

if [ "$cmd" = fixture-start ]; then
  "$0" stop "$dir"
  rc=0
  "$0" start "$dir" "$@" >/dev/null || rc=$?
  if [ "$rc" -eq 3 ]; then
    echo "pg-test: PostgreSQL is not installed; the PostgreSQL tests will skip" >&2
    exit 0
  fi
  exit "$rc"
fi

case $cmd in
  start)
    bin=$(find_bin) || { echo "pg-test: no PostgreSQL server binaries (initdb, pg_ctl) found" >&2; exit 3; }
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/url" ]; then
      echo "pg-test: a cluster already runs in $dir; stop it first" >&2; exit 1
    fi
    rm -rf "$dir/data" "$dir/home"
    # HOME holds the cluster and its socket: DIR itself, unless the owner (as root: another
    # user) cannot reach DIR through its parents, or DIR is too long for a socket path; then a
    # private folder under /tmp, named in DIR/home.
    home=$dir
    if [ "$(id -u)" -eq 0 ]; then chown "$owner" "$dir"; fi
    if [ ${#dir} -gt 80 ] || ! as_owner test -x "$dir" -a -w "$dir"; then
      home=$(mktemp -d /tmp/abacus-pg-XXXXXX)
      if [ "$(id -u)" -eq 0 ]; then chown "$owner" "$home"; fi
      echo "$home" >"$dir/home"
    fi
    as_owner "$bin/initdb" -D "$home/data" -U abacus --auth=trust -E UTF8 --no-locale \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    opts="-c unix_socket_directories='$home' -c max_connections=200"
    [ "$durable" -eq 1 ] || opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    started=0
    for attempt in 1 2 3 4 5; do
      if [ "$tcp" -eq 1 ]; then
        port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        listen="-c listen_addresses=127.0.0.1 -p $port"
      else
        port=5432
        listen="-c listen_addresses='' -p $port"
      fi
      if as_owner "$bin/pg_ctl" -D "$home/data" -l "$home/server.log" -w -t 30 \
          -o "$opts $listen" start >/dev/null 2>&1; then
        started=1; break
      fi
      [ "$tcp" -eq 1 ] || break  # only a port clash is worth another try
    done
    [ "$started" -eq 1 ] || { echo "pg-test: the server did not start:" >&2; tail -5 "$home/server.log" >&2; exit 1; }
    "$bin/createdb" -h "$home" -p "$port" -U abacus abacus
    if [ "$tcp" -eq 1 ]; then
      url="postgresql://abacus@127.0.0.1:$port/abacus"
    else
      url="postgresql://abacus@/abacus?host=$home&port=$port"
    fi
    echo "$url" >"$dir/url"
    echo "$url"
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    home=$dir
    [ -f "$dir/home" ] && home=$(cat "$dir/home")
    if [ -f "$home/data/postmaster.pid" ]; then
      bin=$(find_bin) || { echo "pg-test: no PostgreSQL binaries to stop $dir" >&2; exit 3; }
      as_owner "$bin/pg_ctl" -D "$home/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    case $home in /tmp/abacus-pg-*) rm -rf "$home" ;; esac
    rm -rf "$dir"
    ;;
  url)
    cat "$dir/url"
    ;;
  *) usage ;;
esac

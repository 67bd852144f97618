#!/usr/bin/env bash
# Checks the clang thread-safety annotations (docs/concurrency.md) without building:
# scripts/tsa-check.sh [--all | PATH...]
#
# Runs `clang++ -fsyntax-only -Wthread-safety -Werror` on the non-test .cc files under each PATH
# (a folder or a file) that take or declare an annotated lock (common/mutex.h) or include a
# header that does. Default PATHs: src/agent src/gateway src/cli, the modules the clang fuzz
# build (scripts/fuzz.sh, -Werror=thread-safety) does not compile; --all: all of src/.
# First it checks itself: a snippet that writes guarded data without its mutex must be refused.
# Exits 1 on a finding (clang's message names the data and the mutex). `make test` runs it as
# the ctest tsa_check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CXX="${ABACUS_TSA_CXX:-clang++}"
JOBS="${ABACUS_TSA_JOBS:-2}"
cd "$ROOT"

flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Werror -Wthread-safety -Isrc -I/usr/include/postgresql
       -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT -DCPPHTTPLIB_BROTLI_SUPPORT)

# The check must catch an unlocked write, or a clean run proves nothing.
probe='#include "common/mutex.h"
struct Probe { abacus::Mutex mu; int n GUARDED_BY(mu) = 0; void Bump() { ++n; } };'
if out=$(printf '%s\n' "$probe" | "$CXX" "${flags[@]}" -x c++ - 2>&1); then
  echo "tsa-check: clang accepted an unlocked write: the analysis is not on" >&2
  exit 1
elif ! grep -q "requires holding mutex 'mu' exclusively" <<<"$out"; then
  echo "tsa-check: the probe failed for another reason:" >&2
  echo "$out" >&2
  exit 1
fi

paths=("$@")
if [ ${#paths[@]} -eq 0 ]; then
  paths=(src/agent src/gateway src/cli)
elif [ "${paths[0]}" = "--all" ]; then
  paths=(src)
fi
pattern='common/mutex\.h|common/thread_annotations\.h'
headers=$(grep -rlE "#include \"($pattern)\"" src --include='*.h' | sed 's|^src/||; s/\./\\./g' | paste -sd'|')
mapfile -t files < <(grep -rlE "#include \"($pattern|$headers)\"|MutexLock|ReaderLock|WriterLock" "${paths[@]}" \
  --include='*.cc' | grep -v '_test\.cc$' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "tsa-check: no annotated sources under ${paths[*]}" >&2
  exit 1
fi
# xargs stops at the first file that fails (exit 255 from the child).
printf '%s\n' "${files[@]}" | xargs -P "$JOBS" -n 1 sh -c '"$0" "$@" || exit 255' "$CXX" "${flags[@]}"
echo "tsa-check: ${#files[@]} files clean"

#!/usr/bin/env bash
# Runs every fuzz target for a bounded time: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# With clang (libFuzzer), builds the targets in build/fuzz with -fsanitize=fuzzer plus
# AddressSanitizer/UBSan and fuzzes each for SECONDS_PER_TARGET (default 60), starting from
# fuzz/corpus/<target>/. New interesting inputs go to build/fuzz/corpus/<target>/ (not the
# repository); a crash (or leak, timeout, out-of-memory) input is written to
# build/fuzz/artifacts/<target>/, copied into fuzz/corpus/<target>/ so that fuzz_replay_test keeps
# it as a regression case (ABACUS_FUZZ_KEEP_CRASHES=0: not copied), and the script exits 1.
# `make test` runs it as the ctest fuzz_bounded_run (label fuzz) with 25 s per target.
#
# Without clang, builds the replay executables with the default compiler and replays the corpus.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(quantity_fuzz workload_yaml_fuzz workload_json_fuzz http_request_fuzz)
fi
BUILD="${ABACUS_FUZZ_BUILD:-$ROOT/build/fuzz}"
JOBS="${ABACUS_FUZZ_JOBS:-2}"
KEEP_CRASHES="${ABACUS_FUZZ_KEEP_CRASHES:-1}"
# A fixed seed makes a run repeatable: the same seed and corpus give the same inputs in the same
# order, so a failure CI saw is found again here by running as long (ctest uses seed 1). Unset:
# libFuzzer picks a new seed each run (more ground covered over many runs).
SEED="${ABACUS_FUZZ_SEED:-}"

if command -v clang++ >/dev/null 2>&1; then
  # -O1 with line tables only: sanitizer stacks keep file:line, the cold build (the whole server
  # with ASan and coverage) takes far less time than -O2 -g.
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_COMPILER=clang++ -DABACUS_FUZZ=ON -DABACUS_SANITIZE=ON \
    -DABACUS_BUILD_TESTS=OFF -DABACUS_BUILD_BENCH=OFF >/dev/null
  ninja -C "$BUILD" -j "$JOBS" "${TARGETS[@]}"
  status=0
  for t in "${TARGETS[@]}"; do
    mkdir -p "$BUILD/corpus/$t" "$BUILD/artifacts/$t"
    rm -f "$BUILD/artifacts/$t"/*  # only this run's findings are kept below
    echo "== $t: ${SECONDS_PER_TARGET}s${SEED:+, seed $SEED}"
    log="$BUILD/logs/$t.log"
    mkdir -p "$BUILD/logs"
    if ! "$BUILD/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t/" ${SEED:+-seed=$SEED} \
        "$BUILD/corpus/$t" "$ROOT/fuzz/corpus/$t" >"$log" 2>&1; then
      # The finding first (sanitizer report and stack), then where its input is.
      grep -n -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:" "$log" >&2 || true
      sed -n '/==ERROR\|runtime error:\|ERROR: libFuzzer/,$p' "$log" | head -60 >&2
      echo "!! $t failed (full log: $log); crash inputs in $BUILD/artifacts/$t/" >&2
      if [ "$KEEP_CRASHES" = 1 ]; then
        for f in "$BUILD/artifacts/$t"/*; do
          [ -f "$f" ] || continue
          cp -n "$f" "$ROOT/fuzz/corpus/$t/$(basename "$f")"
          echo "!! kept as regression case: fuzz/corpus/$t/$(basename "$f")" >&2
        done
      fi
      status=1
    fi
    grep -E "^(Done|stat::(number_of_executed_units|peak_rss_mb|slowest_unit_time_sec))" "$log" || true
  done
  echo "fuzz: $([ $status = 0 ] && echo 'no crash' || echo 'FOUND A CRASH') in ${#TARGETS[@]} target(s)"

  exit $status
fi

echo "clang++ not found: replaying fuzz/corpus only (no libFuzzer search)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DABACUS_BUILD_TESTS=OFF \
  -DABACUS_BUILD_BENCH=OFF >/dev/null
ninja -C "$BUILD" -j "$JOBS" "${TARGETS[@]}"
for t in "${TARGETS[@]}"; do
  "$BUILD/fuzz/$t" "$ROOT/fuzz/corpus/$t"
done

#!/usr/bin/env bash
# Two compilers in one device call, alternated: builds the runtime and the
# Python extension against each bundle in turn (benchmarks/device.sh with
# GGC_BUNDLE, each bundle with its own JIT cache) and runs the same command
# under each, GGC_AB_ROUNDS times (default 2), the new bundle first in each
# round. Timings of two builds run one after the other drift by 2-5%
# (docs/performance-history.md, twenty-second session); alternating shows
# the drift, which each side's own rounds then bracket.
#
#   GGC_AB_OLD=.device/ggc-old.tar.xz bash benchmarks/device_ab.sh \
#       python3 benchmarks/bench_moe.py --shapes qwen3 --tokens 4096 --fp8
#
# GGC_AB_NEW: the new bundle (default .device/ggc-compiler.tar.xz).
# Logs: $OUT/ab-<new|old>-<round>.log and $OUT/ab-build-<new|old>.log.
set -uo pipefail
OUT=${OUT:-/tmp/ggc-out}
OLD=${GGC_AB_OLD:?GGC_AB_OLD must name the old bundle (a make device-bundle output)}
NEW=${GGC_AB_NEW:-.device/ggc-compiler.tar.xz}
ROUNDS=${GGC_AB_ROUNDS:-2}
[ $# -gt 0 ] || { echo "device_ab.sh: give the command to run under each bundle" >&2; exit 2; }
for bundle in "$NEW" "$OLD"; do
  [ -f "$bundle" ] || { echo "device_ab.sh: no bundle at $bundle" >&2; exit 2; }
done
mkdir -p "$OUT"
export PYTHONPATH=$PWD/python:$PWD/test/gpu PYTHONUNBUFFERED=1
status=0
for round in $(seq 1 "$ROUNDS"); do
  for side in new old; do
    bundle=$NEW; [ "$side" = old ] && bundle=$OLD
    GGC_CACHE_DIR=/tmp/ggc-ab-cache-$side GGC_BUNDLE=$bundle GGC_SKIP_TESTS=1 GGC_SKIP_BENCH=1 \
      OUT="$OUT" bash benchmarks/device.sh > "$OUT/ab-build-$side.log" 2>&1 ||
      { echo "device_ab.sh: the $side build failed"; tail -20 "$OUT/ab-build-$side.log"; exit 1; }
    echo "== $side, round $round ($bundle)"
    GGC_CACHE_DIR=/tmp/ggc-ab-cache-$side "$@" > "$OUT/ab-$side-$round.log" 2>&1 || status=$?
    tail -n "${GGC_AB_TAIL:-20}" "$OUT/ab-$side-$round.log"
  done
done
exit $status

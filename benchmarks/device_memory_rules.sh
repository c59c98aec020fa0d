#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): the narrow-memory rules'
# check, with the compiler bundle in .device/ and the peers in .peers/
# (carry both). The GPU tests of the rules and of contiguous kernels, then
# benchmarks/probes/memory_rules.py (each case's kernel planned for the
# card's DRAM bandwidth beside an unknown card's, in one process), then,
# where GGC_MEMORY_PEERS is set, bench_peers.py on its contiguous cases
# beside DeepGEMM. On an H200 the two plans are the same (a control). Logs
# go to $OUT (pytest-memory.log, memory-rules.log, bench-peers.log).
#   GGC_MEMORY_CASES    memory_rules.py --cases (default: its own)
#   GGC_MEMORY_PEERS    bench_peers.py --cases SUBSTRING (unset: skipped)
set -uo pipefail
source benchmarks/peers_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout "${GGC_TEST_TIMEOUT:-150}" $PY -m pytest -q -p no:cacheprovider \
  test/gpu/test_memory_rules.py test/gpu/test_fp8.py test/gpu/test_grouped_matmul.py \
  -k "memory or contiguous" > "$OUT/pytest-memory.log" 2>&1
grep -E "^(FAILED|ERROR)" "$OUT/pytest-memory.log"; tail -1 "$OUT/pytest-memory.log"
timeout 200 $PY benchmarks/probes/memory_rules.py ${GGC_MEMORY_CASES:+--cases "$GGC_MEMORY_CASES"} \
  > "$OUT/memory-rules.log" 2>&1
tail -30 "$OUT/memory-rules.log"
if [ -n "${GGC_MEMORY_PEERS:-}" ]; then
  timeout 240 $PY benchmarks/bench_peers.py --cases "$GGC_MEMORY_PEERS" --json "$OUT/peers.json" \
    > "$OUT/bench-peers.log" 2>&1
  grep -E "best peer|ceilings" "$OUT/bench-peers.log" | cut -c1-200
fi

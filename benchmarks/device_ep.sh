#!/usr/bin/env bash
# Runs on a device machine of several GPUs: builds ggc's extension (through
# benchmarks/device.sh, tests and benchmarks off), then the expert-parallel
# GPU tests and benchmarks/bench_expert_parallel.py at world sizes 1, 2
# and 4 (as many as the machine has). Logs, JSON and profiles go to $OUT
# (at most 8 files: what the device tool brings back).
set -uo pipefail
OUT=${OUT:-/tmp/ggc-out}
mkdir -p "$OUT"
GGC_SKIP_TESTS=1 GGC_SKIP_BENCH=1 bash benchmarks/device.sh || exit 1
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
GPUS=$(nvidia-smi -L | wc -l)
nvidia-smi topo -m 2>&1 | head -8
rm -f "$OUT/gpu.txt"
if [ "${GGC_EP_SKIP_TESTS:-0}" != 1 ]; then
  timeout 300 $PY -m pytest -q -x test/gpu/test_expert_parallel_gpu.py ${GGC_EP_PYTEST:-} 2>&1 |
    tee "$OUT/ep-tests.log" | tail -15
fi
for W in ${GGC_EP_WORLDS:-1 2 4}; do
  [ "$W" -le "$GPUS" ] || continue
  timeout 400 $PY -m torch.distributed.run --nproc-per-node "$W" benchmarks/bench_expert_parallel.py \
    --json "$OUT/ep-bench-$W.json" --profile "$OUT/ep-profile" ${GGC_EP_BENCH_ARGS:-} 2>&1 |
    tee -a "$OUT/ep-bench.log" | grep -v "^W1126\|^\*\*\*\*\|OMP_NUM" | tail -20
done

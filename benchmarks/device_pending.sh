#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): what landed on main without
# being run or measured on a GPU, most important first, so that a session
# lent a device can catch up in one call. Carry .device (the bundle from
# `make device-bundle`) and .peers (a copy of ../shared/peers). Logs go to
# $OUT; each step has its own time limit, so one slow step stops only
# itself. Edit the list as steps are done (the closing note says which).
#
#   GGC_PENDING_STEPS  which steps to run, by number (default: all; they
#                      take more than one call's 600 s: "0 1", then "2 3 4 5")
#   GGC_AB_OLD         an older bundle: step 5 then times the band rule as
#                      old against new compilers (benchmarks/device_ab.sh)
set -uo pipefail
source benchmarks/peers_env.sh
STEPS=${GGC_PENDING_STEPS:-0 1 2 3 4 5}
export PYTHONPATH=$PWD/python:$PWD/test/gpu:$PYTHONPATH
wants() { [[ " $STEPS " == *" $1 "* ]]; }
step() { echo "== step $1: $2" | tee -a "$OUT/pending.log"; }

if wants 0; then
  # The sixty-fourth session changed many entry points' checks without a
  # GPU: the whole GPU suite (8 processes) and the executor's GPU gtests.
  step 0 "the GPU suite and the executor's GPU tests"
  GGC_TEST_JOBS=8 GGC_TEST_TIMEOUT=300 GGC_SKIP_BENCH=1 bash benchmarks/device.sh 2>&1 |
    tail -40 | tee "$OUT/pending-0-suite.log"
  for t in /tmp/ggc-build-*/bin/ggc-executor-gpu-tests; do
    timeout 120 "$t" 2>&1 | tail -5 | tee -a "$OUT/pending-0-suite.log"
  done
fi
if wants 1; then
  # 1e89a21: one-level kernels with the epilogue deferred (never run on a
  # GPU), and the accumulate tests that share its k_loop lowering.
  step 1 "GPU tests of the deferred one-level epilogue"
  timeout 240 $PY -m pytest -q test/gpu/test_one_level_deferred_epilogue.py \
    test/gpu/test_accumulate.py 2>&1 | tail -15 | tee "$OUT/pending-1-tests.log"
fi
if wants 2; then
  # #40: bands for the FP8 weight gradient's static rows (the wave model
  # and ncu's 1.5x DRAM bytes point there), beside DeepGEMM.
  step 2 "FP8 weight gradient: walks and bands beside DeepGEMM"
  timeout 240 $PY benchmarks/probes/wgrad_schedule.py 2>&1 | tee "$OUT/pending-2-wgrad.log"
fi
if wants 3; then
  # #40: the deferred epilogue's speed on the BF16 training GEMMs.
  step 3 "BF16 training GEMMs: epilogue at each tile's end against deferred"
  timeout 200 $PY benchmarks/probes/deferred_one_level.py --cases " T" 2>&1 |
    tee "$OUT/pending-3-deferred.log"
fi
if wants 4; then
  # #39: 83e1486's bands of 8 (narrow memory) against DeepGEMM, kernel alone.
  step 4 "FP8 contiguous beside the peers"
  timeout 200 $PY benchmarks/bench_peers.py --cases "fp8 contiguous" \
    --json "$OUT/pending-4-peers.json" 2>&1 | tee "$OUT/pending-4-peers.log"
fi
if wants 5 && [ -n "${GGC_AB_OLD:-}" ]; then
  step 5 "the band rule, old against new compilers"
  GGC_AB_ROUNDS=2 timeout 300 bash benchmarks/device_ab.sh $PY benchmarks/bench_grouped_gemm.py \
    --suite fp8 --fp8-contiguous "8192,8,4096,7168;8192,8,4096,7168,1;16384,16,4096,7168" 2>&1 | tee "$OUT/pending-5-ab.log"
fi

#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): the sm_80 lowering (cp.async,
# ldmatrix, mma.sync) on the card in hand. Its kernels are PTX for sm_80
# that the driver assembles for the device. Needs the compiler bundle in
# .device/ (carry it). Logs go to $OUT.
#   1. test/gpu/test_sm80_path.py (the sm_80 kernels against fp64), planned
#      for the card's shared memory and again for an A100's 163 KiB
#      (GGC_SHARED_MEMORY_BYTES=166912: the kernels an A100 runs);
#   2. the GPU suite's kernel tests with GGC_TARGET=sm_80: what the sm_80
#      lowering refuses is reported as skipped with the compiler's reason
#      (conftest.py), every other failure fails;
#   3. the FP8 tests with GGC_TARGET=sm_89 (mma.sync m16n8k32), the same way,
#      planned for an Ada card's 99 KiB (GGC_SHARED_MEMORY_BYTES=101376);
#   4. benchmarks/bench_sm80.py: the sm_80 path against a mma.sync peak
#      micro-benchmark and the sm_90a path, in one run; then the path's
#      ceilings: sm80_mma_ceiling.py (ldmatrix + mma.sync at the kernel's
#      occupancy), cp_async_stream.py (cp.async through L2) and
#      sm80_handoff.py (the kernel with its waits or copies taken out).
#   GGC_SM80_SUITE, GGC_SM89_SUITE  the test files of steps 2 and 3 (default: below)
#   GGC_SKIP_BENCH=1  no step 4
set -uo pipefail
OUT=${OUT:-/tmp/ggc-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
GGC_SKIP_TESTS=1 GGC_SKIP_BENCH=1 bash benchmarks/device.sh || exit 1  # build only
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
timeout 300 $PY -m pytest -q -rs test/gpu/test_sm80_path.py 2>&1 | tee "$OUT/pytest-sm80-path.log" | tail -25
GGC_SHARED_MEMORY_BYTES=166912 timeout 300 $PY -m pytest -q -rs test/gpu/test_sm80_path.py 2>&1 |
  tee "$OUT/pytest-sm80-path-a100.log" | tail -25
SUITE=${GGC_SM80_SUITE:-"test/gpu/test_grouped_matmul.py test/gpu/test_ops.py test/gpu/test_validation.py
  test/gpu/test_moe_gpu.py test/gpu/test_stress.py"}
GGC_TARGET=sm_80 timeout 600 $PY -m pytest -q -rs $SUITE 2>&1 | tee "$OUT/pytest-sm80-suite.log" | tail -60
SUITE89=${GGC_SM89_SUITE:-"test/gpu/test_fp8.py test/gpu/test_ops.py test/gpu/test_moe_gpu.py"}
GGC_TARGET=sm_89 GGC_SHARED_MEMORY_BYTES=101376 timeout 600 $PY -m pytest -q -rs $SUITE89 2>&1 | tee "$OUT/pytest-sm89-suite.log" | tail -40
if [ "${GGC_SKIP_BENCH:-0}" != 1 ]; then
  timeout 300 $PY benchmarks/bench_sm80.py --json "$OUT/bench_sm80.json" 2>&1 | tee "$OUT/bench_sm80.log"
  timeout 120 $PY benchmarks/probes/sm80_mma_ceiling.py 2>&1 | tee "$OUT/sm80_mma_ceiling.log"
  timeout 120 $PY benchmarks/probes/cp_async_stream.py 2>&1 | tee "$OUT/cp_async_stream.log"
  timeout 400 $PY benchmarks/probes/sm80_handoff.py 2>&1 | tee "$OUT/sm80_handoff.log"
fi

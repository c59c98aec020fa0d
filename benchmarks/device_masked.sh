#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): the masked FP8 tilings check,
# with the compiler bundle in .device/ and the peers in .peers/ (carry
# both). The GPU tests of masked kernels and group tables, then
# benchmarks/probes/masked_idle.py on the batches of record, gg-select-
# config's choice beside every tiling it has given them (stated, so old
# defaults run beside the new one in one process) and DeepGEMM's masked
# kernel. Logs go to $OUT (pytest-masked.log, masked-tilings.log).
#   GGC_MASKED_CASES    masked_idle.py --cases (default: records)
#   GGC_MASKED_CONFIGS  masked_idle.py --configs (default: tilings; e.g.
#                       "tilings;split_knobs")
set -uo pipefail
source benchmarks/peers_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
timeout "${GGC_TEST_TIMEOUT:-240}" $PY -m pytest -q -p no:cacheprovider test/gpu/test_zero_ungrouped.py \
  test/gpu/test_fp8.py test/gpu/test_ops.py test/gpu/test_dropins_gpu.py \
  test/gpu/test_grouped_matmul.py -k "group_table or masked" > "$OUT/pytest-masked.log" 2>&1
grep -E "^(FAILED|ERROR)" "$OUT/pytest-masked.log"; tail -1 "$OUT/pytest-masked.log"
timeout "${GGC_MASKED_TIMEOUT:-360}" $PY benchmarks/probes/masked_idle.py --only-configs \
  --cases "${GGC_MASKED_CASES:-records}" --configs "${GGC_MASKED_CONFIGS:-tilings}" \
  > "$OUT/masked-tilings.log" 2>&1
grep -E "chosen:|WRONG|us .*TFLOPS|not compiled" "$OUT/masked-tilings.log"

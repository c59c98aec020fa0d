#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): the training checks and
# benchmark (#40), with the compiler bundle in .device/ and the peers in
# .peers/ (carry both). Logs and JSON go to $OUT.
#   GGC_TRAIN_TESTS  pytest arguments run first (default: the accumulate,
#                    weight-gradient and HF training tests)
#   GGC_TRAIN_CASES  only benchmark cases whose name contains this
set -uo pipefail
source benchmarks/peers_env.sh
TESTS=${GGC_TRAIN_TESTS:-test/gpu/test_accumulate.py test/gpu/test_ops.py test/gpu/test_hf_gpu.py test/gpu/test_dropins_gpu.py}
timeout "${GGC_TRAIN_TEST_TIMEOUT:-240}" $PY -m pytest -q $TESTS 2>&1 | tail -25 | tee "$OUT/training-tests.log"
timeout "${GGC_TRAIN_TIMEOUT:-300}" $PY benchmarks/bench_training.py --cases "${GGC_TRAIN_CASES:-}" \
  --json "$OUT/training.json" 2>&1 | tee "$OUT/training.log"

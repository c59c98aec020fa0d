#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): the tests of what other stacks
# call ggc through (Hugging Face blocks, vLLM's fused_experts, the DeepGEMM
# drop-in) against the peers themselves, and the drop-ins' host time beside
# deep_gemm's. Needs the compiler bundle in .device/ and the peers in
# .peers/ (a copy of ../shared/peers; carry both). Logs go to $OUT.
#   GGC_DROPIN_TESTS  the pytest files (default: the ones below)
set -uo pipefail
source benchmarks/peers_env.sh
$PY -c "import deep_gemm, transformers, triton; print('deep_gemm', deep_gemm.__version__, \
'transformers', transformers.__version__, 'triton', triton.__version__)" 2>&1 | tail -1 |
  tee "$OUT/versions.txt"
TESTS=${GGC_DROPIN_TESTS:-"test/gpu/test_hf_gpu.py test/gpu/test_vllm_gpu.py
  test/gpu/test_deepgemm_dense_gpu.py test/gpu/test_dropins_gpu.py test/gpu/test_moe_gpu.py"}
timeout 420 $PY -m pytest -q -rs $TESTS 2>&1 | tee "$OUT/pytest-dropins.log" | tail -25
timeout 200 $PY benchmarks/host_time.py --calls 3000 --json "$OUT/host_time.json" 2>&1 |
  tee "$OUT/host_time.log"

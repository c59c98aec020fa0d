#!/usr/bin/env bash
# Runs on the GPU machine (the device tool), with the compiler bundle in
# .device/ and the peers in .peers/ (carry both): whether gg-select-config
# should give long-K FP8 contiguous groups 128x192 tiles with constant ring
# stages (#39; fifty-sixth session: on equal groups they beat the chosen
# 128x128 pipelined kernel by 0.9% at K 7,168 and 5.1% at K 8,192, H100).
# Ragged groups (bench_grouped_gemm.py's Dirichlet shares): the chosen
# kernel beside 128x192 with constant and with counted stages, interleaved;
# then equal groups beside DeepGEMM (profile_fp8_contiguous.py). Logs and
# JSON go to $OUT.
#   GGC_CONSTANT_SHAPES  T,G,N,K;... (default: the FP8 contiguous shapes of
#                        record, short and long K)
set -uo pipefail
source benchmarks/peers_env.sh
SHAPES=${GGC_CONSTANT_SHAPES:-"8192,8,4096,7168;16384,32,3072,8192;32768,32,4096,7168;8192,8,7168,2048;32768,32,7168,2048;4096,64,2048,7168;2048,128,4096,7168"}
nvidia-smi --query-gpu=name --format=csv,noheader
timeout "${GGC_CONSTANT_TIMEOUT:-360}" $PY benchmarks/bench_grouped_gemm.py --suite fp8 \
  --fp8-contiguous "$SHAPES" --configs "128,192,128,0,constant;128,192,128,0,serial" \
  --json "$OUT/constant-stages.json" > "$OUT/constant-stages.log" 2>&1
grep -E "ggc|skipped" "$OUT/constant-stages.log"
IFS=';' read -ra EQUAL <<< "$SHAPES"
for shape in "${EQUAL[@]}"; do
  timeout 120 $PY benchmarks/profile_fp8_contiguous.py time "$shape" \
    "ggc,ggc 128x192,ggc 128x192 counted" 2>&1 | grep -E "^T=|rror" | tee -a "$OUT/constant-stages-equal.log"
done

#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): where ggc's FP8 contiguous
# kernel spends more instructions than DeepGEMM's at the same 128x192 tile
# (#39; fifty-third session: 15% more executed, the same L2 and DRAM
# traffic). With the compiler bundle in .device/ and the peers in .peers/
# (carry both): Nsight Compute's SourceCounters of one launch of each on
# equal groups (benchmarks/profile_fp8_contiguous.py), exported as SASS with
# per-instruction counts, then benchmarks/probes/instruction_mix.py (ggc
# against DeepGEMM by opcode) and stall_profile.py on each. Logs and the
# compressed exports go to $OUT.
#   GGC_SASS_SHAPE   T,G,N,K (default 8192,8,7168,2048: both take 128x192)
#   GGC_SASS_GGC     profile_fp8_contiguous.py's names of ggc's kernels,
#                    ';'-separated (default "ggc 128x192"); the first is the
#                    one compared with DeepGEMM by opcode
set -uo pipefail
source benchmarks/peers_env.sh
SHAPE=${GGC_SASS_SHAPE:-8192,8,7168,2048}
IFS=';' read -ra OURS <<< "${GGC_SASS_GGC:-ggc 128x192}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
for name in "${OURS[@]}" deep_gemm; do
  f=$(echo "$name" | tr ' ' '_')
  timeout 150 ncu --clock-control none --profile-from-start off --section SourceCounters \
    --section WarpStateStats --section LaunchStats --section Occupancy -o "/tmp/$f" $PY benchmarks/profile_fp8_contiguous.py "$name" "$SHAPE" \
    > "$OUT/ncu-source-$f.log" 2>&1 || { tail -5 "$OUT/ncu-source-$f.log"; exit 1; }
  ncu --import "/tmp/$f.ncu-rep" --page source --csv --print-source sass > "/tmp/$f.csv"
  xz -T4 -c "/tmp/$f.csv" > "$OUT/$f.csv.xz"
  # Grid, cluster size and the clusters the card can hold at once.
  ncu --import "/tmp/$f.ncu-rep" --page details --section LaunchStats --section Occupancy \
    > "$OUT/launch-$f.log" 2>&1
  grep -i -E "cluster|grid size|waves" "$OUT/launch-$f.log"
  $PY benchmarks/probes/stall_profile.py "/tmp/$f.csv" > "$OUT/stalls-$f.log" 2>&1
  head -16 "$OUT/stalls-$f.log"
done
$PY benchmarks/probes/instruction_mix.py "/tmp/$(echo "${OURS[0]}" | tr ' ' '_').csv" /tmp/deep_gemm.csv \
  --top 24 --hot 16 | tee "$OUT/instruction-mix.log"

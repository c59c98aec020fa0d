#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck and synccheck over a representative
# subset of test/gpu (each layout, bf16/tf32/fp8, block and MX scales,
# split_n, clusters) and a short stress run. Run on the GPU machine from
# the repository root with ggc built (device.sh does this with
# GGC_COMPUTE_SANITIZER=1). Each tool's output goes to $OUT/sanitize-<tool>.log; the
# last line sums each tool's "ERROR SUMMARY" counts.
#
#   GGC_SANITIZE_TOOLS     tools to run (default "memcheck racecheck synccheck")
#   GGC_SANITIZE_TIMEOUT   seconds per tool and run (default 150: three tools
#                          and a build fit the device tool's 10 minutes)
#   COMPUTE_SANITIZER      the binary, when not on PATH or under /usr/local/cuda*
set -uo pipefail
OUT=${OUT:-/tmp/ggc-out}
PY=${PYTHON:-python3}
TOOLS=${GGC_SANITIZE_TOOLS:-memcheck racecheck synccheck}
LIMIT=${GGC_SANITIZE_TIMEOUT:-150}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || ls -d /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | tail -1)}
if [ -z "$SAN" ] || [ ! -x "$SAN" ]; then
  echo "sanitize: compute-sanitizer not found (set COMPUTE_SANITIZER)" | tee "$OUT/sanitize-summary.txt"
  exit 1
fi
"$SAN" --version | tail -1

# The caching allocator pools tensors in large blocks, where an access past
# a tensor's end is still inside an allocation: give each tensor its own.
export PYTORCH_NO_CUDA_MEMORY_CACHING=1

M=test/gpu/test_grouped_matmul.py F=test/gpu/test_fp8.py
WIDE=(  # memcheck and synccheck
  "$M::test_contiguous_ragged_groups[bf16-nk]"
  "$M::test_contiguous_ragged_groups[f32-kn]"
  "$M::test_masked_uneven_counts[bf16-kn]"
  "$M::test_padded_contiguous_skips_padding_rows[bf16-nk]"
  "$M::test_k_grouped_weight_gradient[f32-kn-bf16-mn]"
  "$M::test_k_grouped_weight_gradient[f32-nk-f8E4M3FN-mn]"
  "$M::test_contiguous_split_n[block0-False-nk]"
  "$M::test_cluster_pairs_share_b_by_multicast[nk]"
  "$F::test_contiguous_scale_kinds[block_mn-block]"
  "$F::test_masked_deepgemm_layout[block_mn-block-None]"
  "$F::test_padded_contiguous_deepgemm_layout"
  "$F::test_k_grouped_scaled_weight_gradient[block-block1x128]"
  "$F::test_flashinfer_mxfp8_zero_padding[32]"
)
NARROW=(  # racecheck instruments every shared-memory access: a few only
  "$M::test_contiguous_ragged_groups[bf16-nk]"
  "$M::test_k_grouped_weight_gradient[f32-kn-bf16-mn]"
  "$M::test_cluster_pairs_share_b_by_multicast[nk]"
  "$F::test_masked_deepgemm_layout[block_mn-block-None]"
)
STRESS_SPECS='^(c_bf16|c_bf16_split64|c_bf16_cluster|c_f8_blockmn_block|c_f8_mx32_f32out|m_f8_blockmn_block|p_f8_blockmn_block|k_f8_block_1x128|k_bf16_kn)$'

# Keep the tests that exist (a renamed one must not stop the rest).
COLLECTED=$($PY -m pytest -q --co -p no:cacheprovider test/gpu 2>/dev/null | grep '::')
present() { for id in "$@"; do grep -qxF -- "$id" <<<"$COLLECTED" && printf '%s\n' "$id"; done; }

run_tool() {  # tool, stress cases, test ids...
  local tool=$1 cases=$2 log="$OUT/sanitize-$1.log"
  shift 2
  local ids
  mapfile -t ids < <(present "$@")
  local san=("$SAN" --tool "$tool" --target-processes all --report-api-errors no --print-limit 50)
  echo "== $tool: ${#ids[@]} tests, then $cases stress cases" | tee "$log"
  timeout "$LIMIT" "${san[@]}" $PY -m pytest -q -p no:cacheprovider "${ids[@]}" >>"$log" 2>&1
  echo "== $tool pytest exit $?" >>"$log"
  timeout "$LIMIT" "${san[@]}" $PY benchmarks/stress.py --cases "$cases" --seconds $((LIMIT / 2)) \
    --specs "$STRESS_SPECS" >>"$log" 2>&1
  echo "== $tool stress exit $?" >>"$log"
}

summary="sanitize:"
for tool in $TOOLS; do
  case $tool in
    racecheck) run_tool racecheck 18 "${NARROW[@]}" ;;
    memcheck|synccheck) run_tool "$tool" 90 "${WIDE[@]}" ;;
    *) echo "sanitize: unknown tool $tool"; continue ;;
  esac
  log="$OUT/sanitize-$tool.log"
  # One summary line per finished run ("N errors were not printed" lines
  # repeat the word, not the count): racecheck says RACECHECK SUMMARY and
  # counts hazards; a run cut short by the timeout prints none.
  lines=$(grep -E "(ERROR|RACECHECK) SUMMARY: [0-9]+ (errors|hazards)" "$log" | grep -v "not printed")
  runs=$(grep -c . <<<"$lines")
  errors=$(grep -oE "SUMMARY: [0-9]+" <<<"$lines" | awk '{s += $2} END {print s + 0}')
  summary+=" $tool $errors errors ($runs/2 runs finished);"
  grep -E "SUMMARY|exit [0-9]+$" "$log" | sed "s/^/  $tool: /"
done
echo "$summary" | tee "$OUT/sanitize-summary.txt"

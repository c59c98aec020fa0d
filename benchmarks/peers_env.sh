# Sourced (not run) by the device scripts that run ggc beside the peers,
# from the repository root on the GPU machine: builds the peers from
# .peers/ (a copy of ../shared/peers) when it is there, builds ggc's
# extension against the bundle in .device/ (benchmarks/device.sh), and
# exports the Python path that finds ggc, deep_gemm and deep_gemm_v1.
# Sets OUT (default /tmp/ggc-out) and PY.
OUT=${OUT:-/tmp/ggc-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
if [ -f .peers/setup-on-device.sh ]; then
  (time bash .peers/setup-on-device.sh) >"$OUT/peers.log" 2>&1 || tail -5 "$OUT/peers.log"
fi
GGC_SKIP_TESTS=1 GGC_SKIP_BENCH=1 bash benchmarks/device.sh || exit 1
export PYTHONPATH=$PWD/python:/tmp/peers/DeepGEMM:/tmp/v1pkg:${PYTHONPATH:-} PYTHONUNBUFFERED=1
export DG_JIT_CACHE_DIR=${DG_JIT_CACHE_DIR:-/tmp/dgcache} DG_CACHE_DIR=${DG_CACHE_DIR:-/tmp/dg1cache}

#!/usr/bin/env bash
# Runs on the GPU machine (the device tool), from the repository root, with
# the compiler bundle made by `make device-bundle` carried in .device/:
# unpack it, build the runtime and the Python extension for this machine's
# Python against it (the split build), then run the GPU tests and the
# benchmarks. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/ggc-out}
# GGC_BENCH_SUITE, GGC_BENCH_CONFIGS, GGC_BENCH_FP8_CASES and
# GGC_BENCH_CONTIGUOUS narrow the benchmark (see bench_grouped_gemm.py --help).
# GGC_BUNDLE picks another bundle (an A/B experiment); each gets its own
# unpacked compiler and build folder.
# GGC_STRESS=1 adds the full random-stress run (benchmarks/stress.py, $OUT/stress.log);
# GGC_COMPUTE_SANITIZER=1 adds compute-sanitizer's memcheck, racecheck and synccheck
# (benchmarks/sanitize.sh, $OUT/sanitize-*.log). Both are off by default.
BUNDLE=${GGC_BUNDLE:-.device/ggc-compiler.tar.xz}
TAG=$(basename "$BUNDLE" .tar.xz)
mkdir -p "$OUT" "/tmp/ggc-prebuilt-$TAG"
tar -xJf "$BUNDLE" -C "/tmp/ggc-prebuilt-$TAG"
PY=${PYTHON:-python3}
# The extension is linked into python/ggc/, which every bundle's build
# shares: drop it so this bundle's build links it again (a warm machine
# keeps the previous call's files).
rm -f python/ggc/_ggc*.so python/ggc/_executor*.so python/ggc/_signature*.so
cmake -S . -B "/tmp/ggc-build-$TAG" -DGGC_PREBUILT_COMPILER="/tmp/ggc-prebuilt-$TAG" \
  -DPython3_EXECUTABLE="$(command -v $PY)" -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "/tmp/ggc-build-$TAG" -j16 >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "${GGC_SKIP_TESTS:-0}" != 1 ]; then
  timeout 300 $PY benchmarks/run_examples.py 2>&1 | tee "$OUT/examples.log"
  JOBS=${GGC_TEST_JOBS:-1}
  LIMIT=${GGC_TEST_TIMEOUT:-400}
  [[ "$JOBS" =~ ^[0-9]+$ && "$LIMIT" =~ ^[0-9]+$ ]] ||
    { echo "device.sh: GGC_TEST_JOBS and GGC_TEST_TIMEOUT must be whole numbers," \
        "got '$JOBS' and '$LIMIT'" >&2; exit 2; }
  if [ "$JOBS" -le 1 ]; then
    timeout "$LIMIT" $PY -m pytest -q -x test/gpu ${GGC_PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest-gpu.log" | tail -40
  else
    # The test files dealt round-robin to JOBS pytest processes at once:
    # the suite's time is mostly kernels compiling on the host, one core
    # each (the kernel cache is safe to share between processes). Each
    # runs its files to the end (no -x), so that one failure hides none of
    # another file's.
    FILES=(test/gpu/test_*.py)
    PIDS=()
    for ((j = 0; j < JOBS && j < ${#FILES[@]}; j++)); do
      BUCKET=()
      for ((i = j; i < ${#FILES[@]}; i += JOBS)); do BUCKET+=("${FILES[$i]}"); done
      timeout "$LIMIT" $PY -m pytest -q -p no:cacheprovider "${BUCKET[@]}" \
        ${GGC_PYTEST_ARGS:-} >"$OUT/pytest-gpu-$j.log" 2>&1 &
      PIDS+=($!)
    done
    for ((j = 0; j < ${#PIDS[@]}; j++)); do
      wait "${PIDS[$j]}"
      status=$?
      grep -E "^(FAILED|ERROR)" "$OUT/pytest-gpu-$j.log"
      case $status in
        0) tail -1 "$OUT/pytest-gpu-$j.log" ;;
        124) echo "pytest-gpu-$j: stopped at the $LIMIT s limit (GGC_TEST_TIMEOUT)" ;;
        *) echo "pytest-gpu-$j: exit status $status: $(tail -1 "$OUT/pytest-gpu-$j.log")" ;;
      esac
    done
  fi
fi
if [ "${GGC_STRESS:-0}" = 1 ]; then
  timeout 330 $PY benchmarks/stress.py 2>&1 | tee "$OUT/stress.log" | tail -25
fi
if [ "${GGC_COMPUTE_SANITIZER:-0}" = 1 ]; then
  OUT="$OUT" PYTHON="$PY" bash benchmarks/sanitize.sh 2>&1 | tail -40
fi
if [ "${GGC_SKIP_BENCH:-0}" != 1 ]; then
  timeout 400 $PY benchmarks/bench_grouped_gemm.py --json "$OUT/bench.json" --suite "${GGC_BENCH_SUITE:-all}" \
    --configs "${GGC_BENCH_CONFIGS:-}" --fp8-cases "${GGC_BENCH_FP8_CASES:-}" \
    --contiguous "${GGC_BENCH_CONTIGUOUS:-}" 2>&1 | tee "$OUT/bench.log"
fi

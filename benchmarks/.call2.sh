set -u
GGC_SKIP_TESTS=1 GGC_SKIP_BENCH=1 bash benchmarks/device.sh > $OUT/device.log 2>&1 || { tail -30 $OUT/device.log; exit 1; }
export PYTHONPATH=$PWD/python:$PWD/test/gpu PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 -m pytest -q test/gpu/test_combine_routes.py test/gpu/test_swiglu_rows.py test/gpu/test_quantize_rows.py test/gpu/test_moe_gpu.py 2>&1 | tee $OUT/pytest.log | tail -8
timeout 150 python3 benchmarks/probes/fp8_gather.py --shapes qwen3 --tokens 1024,4096,16384 --rounds 8 2>&1 | tee $OUT/probe.log
timeout 200 python3 benchmarks/bench_moe.py --shapes qwen3,mixtral --tokens 1,1024,4096,16384 --fp8 --rounds 8 --vllm .peers/vllm_fused_moe.py 2>&1 | tee $OUT/bench.log | tail -30

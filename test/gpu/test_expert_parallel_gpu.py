"""Expert parallelism on several GPUs (NCCL, one process a GPU): the
distributed layer against the single-GPU layer on the same inputs and
weights. Skips with fewer than 2 GPUs."""

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))

GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
pytestmark = pytest.mark.skipif(GPUS < 2, reason=f"needs 2 GPUs, this machine has {GPUS}")

from test_expert_parallel import run_group  # noqa: E402


@pytest.mark.parametrize("world", sorted({2, min(GPUS, 4)}))
def test_distributed_layer_matches_single_gpu_layer(world, tmp_path):
    for rank, report in enumerate(run_group(world, "ep_gpu_workers:matches_single_gpu_layer",
                                            tmp_path, "nccl")):
        print(rank, report)
        assert report["deterministic"], rank
        assert report["bf16"] < 1e-2, (rank, report)
        for key in ("x_grad", "w13_grad", "w2_grad"):
            assert report[key] < 2e-2, (rank, key, report)
        for key in ("fp8_bf16_1", "fp8_bf16_3", "fp8_fp8_1", "fp8_fp8_3"):
            assert report[key] < 1e-2, (rank, key, report)
            # The routing plan replayed from a CUDA graph gives the same bits.
            assert report["replays_" + key[len("fp8_"):]], (rank, key, report)


def test_shared_experts_and_biases_match_the_single_gpu_layer(tmp_path):
    for rank, report in enumerate(run_group(2, "ep_gpu_workers:shared_experts_and_biases",
                                            tmp_path, "nccl")):
        for key in ("bf16", "w13_bias_grad", "w2_bias_grad", "fp8"):
            assert report[key] < 2e-2, (rank, key, report)


def test_bad_input_is_an_error_on_every_gpu_rank(tmp_path):
    reports = run_group(2, "ep_gpu_workers:bad_input_everywhere", tmp_path, "nccl")
    for rank, (half, cpu, after) in enumerate(reports):
        assert half.startswith(f"rank {rank}: ") and cpu.startswith(f"rank {rank}: ")
        if rank == 1:
            assert "got [5, 256] torch.float16 on cuda:1" in half, half
            assert "got [5, 256] torch.bfloat16 on cpu" in cpu, cpu
        else:
            assert "rank(s) [1] rejected their input" in half and "rank(s) [1]" in cpu
        assert after < 1e-2


def test_layer_captured_in_a_cuda_graph(tmp_path):
    for rank, report in enumerate(run_group(2, "ep_gpu_workers:captured_in_a_graph", tmp_path,
                                            "nccl")):
        for name, case in report.items():
            assert case["same"] and case["err"] < 1e-2, (rank, name, case)

"""PyTorch integration without a GPU: custom op registration, fake tensors
(what torch.compile traces with), and the checks of ggc.ops."""

import contextlib

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ops, torch_ops  # noqa: E402,F401
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402


def test_custom_ops_are_registered():
    for name in ("grouped_mm", "grouped_mm_grad_x", "grouped_mm_grad_w"):
        assert hasattr(torch.ops.ggc, name)


def test_fake_tensors_give_output_shapes_without_running():
    with FakeTensorMode():
        x = torch.empty(100, 512, dtype=torch.bfloat16)
        w = torch.empty(8, 256, 512, dtype=torch.bfloat16)
        offsets = torch.empty(9, dtype=torch.int32)
        y = torch.ops.ggc.grouped_mm(x, w, offsets)
        assert y.shape == (100, 256) and y.dtype == torch.bfloat16
        assert torch.ops.ggc.grouped_mm_grad_x(y, w, offsets).shape == (100, 512)
        assert torch.ops.ggc.grouped_mm_grad_w(y, x, offsets).shape == (8, 256, 512)


def test_a_misaligned_k_major_scale_view_is_copied_under_fake_tensors_too():
    """A K-major block scale that is a view not starting 16-byte aligned
    (every kernel argument must) is copied to a fresh tensor, as an eager
    call copies it, also for a fake tensor (whose storage offset the
    traced call's checks read as its address); aligned ones pass as they
    are."""
    for fake in (False, True):
        mode = FakeTensorMode() if fake else contextlib.nullcontext()
        with mode:
            storage = torch.empty(256 * 8 + 4)
            shifted, physical_kind = ops._physical_block_scale(storage[1:1 + 256 * 8].view(256, 8))
            assert physical_kind == "block"
            assert shifted.storage_offset() == 0 and shifted.shape == (256, 8)
            view = storage[4:].view(256, 8)  # 16 bytes in: aligned
            assert ops._physical_block_scale(view)[0] is view


def test_fake_checks_reject_bad_shapes():
    with FakeTensorMode():
        x = torch.empty(100, 512, dtype=torch.bfloat16)
        w = torch.empty(8, 256, 500, dtype=torch.bfloat16)
        with pytest.raises(ValueError, match="x has K = 512 but w has K = 500"):
            torch.ops.ggc.grouped_mm(x, w, torch.empty(9, dtype=torch.int32))
        with pytest.raises(ValueError, match=r"offsets must be \[G\+1\] = \[9\], got \[8\]"):
            torch.ops.ggc.grouped_mm(x, torch.empty(8, 256, 512, dtype=torch.bfloat16),
                                     torch.empty(8, dtype=torch.int32))
        # No groups: named here, not by the compiler's verifier later.
        with pytest.raises(ValueError, match=r"G, N and K at least 1, got \[0, 256, 512\]"):
            torch.ops.ggc.grouped_mm(x, torch.empty(0, 256, 512, dtype=torch.bfloat16),
                                     torch.empty(1, dtype=torch.int32))


def test_forward_and_backward_trace_into_the_graph():
    x = torch.randn(64, 128, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(4, 32, 128, dtype=torch.bfloat16, requires_grad=True)
    offsets = torch.tensor([0, 10, 10, 40, 64], dtype=torch.int32)

    def step(x, w, offsets):
        y = torch.ops.ggc.grouped_mm(x, w, offsets)
        return torch.autograd.grad(y.float().sum(), (x, w))

    graph = make_fx(step, tracing_mode="fake")(x, w, offsets)
    targets = {str(n.target) for n in graph.graph.nodes if n.op == "call_function"}
    assert {"ggc.grouped_mm.default", "ggc.grouped_mm_grad_x.default",
            "ggc.grouped_mm_grad_w.default"} <= targets


def test_grouped_gemm_needs_exactly_one_group_description():
    a, b = torch.empty(4, 64), torch.empty(2, 64, 64)
    with pytest.raises(ValueError, match="exactly one of offsets, masked_m, m_indices, "
                                         "k_offsets; got none"):
        ops.grouped_gemm(a, b)
    with pytest.raises(ValueError, match=r"got \['offsets', 'masked_m'\]"):
        ops.grouped_gemm(a, b, offsets=torch.empty(3), masked_m=torch.empty(2))
    with pytest.raises(ValueError, match="b_layout must be 'nk' or 'kn'"):
        ops.grouped_gemm(a, b, offsets=torch.empty(3), b_layout="t")


def test_deepgemm_m_major_scales_are_read_through_their_storage():
    # DeepGEMM's get_col_major_tma_aligned_tensor: [M, K/128] with strides
    # (1, align4(M)); its storage is [K/128, align4(M)].
    m, kb = 10, 3
    storage = torch.arange(kb * 12, dtype=torch.float32).reshape(kb, 12)
    view = storage.as_strided((m, kb), (1, 12))
    physical, kind = ops._physical_block_scale(view)
    assert kind == "block_mn" and physical.shape == (kb, 12)
    assert torch.equal(physical, storage)
    row_major, kind = ops._physical_block_scale(torch.ones(m, kb))
    assert kind == "block" and row_major.shape == (m, kb)
    # No rows: torch calls the M-major view contiguous, the launch would not.
    empty, kind = ops._physical_block_scale(torch.empty(kb, 0).t())
    assert kind == "block" and empty.shape == (0, kb) and empty.stride() == (kb, 1)


def test_scale_kinds_follow_rank_and_say_when_ambiguous():
    a, b = torch.empty(4, 256), torch.empty(4, 128, 256)
    assert ops._scale_kind("b", torch.empty(4, 128), a, b, "contiguous", None)[1] == "channel"
    assert ops._scale_kind("a", torch.empty(4, 2), a, b, "contiguous", None)[1] == "block"
    with pytest.raises(ValueError, match="ambiguous"):
        ops._scale_kind("a", torch.empty(4), a, b, "contiguous", None)
    assert ops._scale_kind("a", torch.empty(4), a, b, "contiguous", "channel")[1] == "channel"


def test_weight_gradient_scale_kinds_and_operand_checks():
    # k_grouped: 1x128 blocks over the concatenated K ([rows, ceil(K/128)],
    # or a transposed view of its M-major storage); B may take 128x128.
    kind = ops._k_grouped_scale_kind
    assert kind("a", torch.empty(200, 3), 200, 4, None)[1] == "block"
    assert kind("a", torch.empty(3, 200).T, 200, 4, None)[1] == "block_mn"
    assert kind("b", torch.empty(136, 3), 136, 4, None)[1] == "block1x128"
    assert kind("b", torch.empty(3, 136).T, 136, 4, None)[1] == "block1x128_mn"
    assert kind("b", torch.empty(2, 3), 136, 4, None)[1] == "block"
    assert kind("a", torch.empty(4), 200, 4, None)[1] == "tensor"
    assert kind("a", torch.empty(200), 200, 4, None)[1] == "channel"
    with pytest.raises(ValueError, match=r"a_scale of length G = 4 = its rows is ambiguous"):
        kind("a", torch.empty(4), 4, 4, None)
    with pytest.raises(ValueError, match=r"b_scale of shape \[5, 3\] matches no block scale "
                                         r"of 136 rows: 1x128 blocks are \[136, ceil\(K/128\)\], "
                                         r"128x128 blocks \[2, ceil\(K/128\)\]"):
        kind("b", torch.empty(5, 3), 136, 4, None)
    with pytest.raises(ValueError, match="rank 3"):
        kind("a", torch.empty(2, 2, 2), 200, 4, None)
    with pytest.raises(ValueError, match=r"b_scale holds packed UE8M0 exponents \(int32\): "
                                         r"pass b_scale_kind='mx32' or 'mx128'"):
        kind("b", torch.empty(136, 3, dtype=torch.int32), 136, 4, None)
    f8 = torch.float8_e4m3fn
    offsets = torch.tensor([0, 100, 256], dtype=torch.int32)
    with pytest.raises(ValueError, match="an f8 weight gradient needs K-major operands"):
        ops.grouped_gemm(torch.empty(256, 64, dtype=f8), torch.empty(256, 32, dtype=f8),
                         k_offsets=offsets)
    with pytest.raises(ValueError, match=r"with k_offsets, k_major=True, a \[M, K\] and "
                                         r"b \[N, K\] span the same tokens"):
        ops.grouped_gemm(torch.empty(64, 256, dtype=f8), torch.empty(32, 128, dtype=f8),
                         k_offsets=offsets, k_major=True)
    with pytest.raises(ValueError, match=r"expected_m must be an int in \[1, 2\^31 - 1\], "
                                         r"got 0"):
        ops.grouped_gemm(torch.empty(256, 64), torch.empty(256, 32), k_offsets=offsets,
                         expected_m=0)

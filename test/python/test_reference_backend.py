"""ggc's reference backend (ggc.reference): every public entry point on CPU
tensors, with nothing monkeypatched, against fp64 computed here from the
definitions (the scale layouts dequantised as ggc.ops and ggc.groups
document them). Rows outside every group keep their NaN; a launch mixing
devices, or on a device ggc has no backend for, is refused by name."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ops, reference  # noqa: E402
from ggc.groups import GroupMetadataError  # noqa: E402
from moe_reference import layer_inputs, reference_moe, rel_err  # noqa: E402

BF16, F8, I32, F32 = torch.bfloat16, torch.float8_e4m3fn, torch.int32, torch.float32
SIZES = [33, 0, 70, 1, 24]  # 128 rows in groups, an empty and a one-row group
NAN = float("nan")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))
    torch._dynamo.reset()


def randn(*shape, dtype=BF16, scale=1.0, seed=0):
    gen = torch.Generator().manual_seed(seed + sum(shape))
    return (torch.randn(*shape, generator=gen) * scale).to(dtype)


def offsets_of(sizes):
    return torch.tensor([0] + torch.tensor(sizes).cumsum(0).tolist(), dtype=I32)


def spans(offsets):
    bounds = offsets.tolist()
    return list(enumerate(zip(bounds, bounds[1:])))


def nans(*shape, dtype=BF16):
    return torch.full(shape, NAN, dtype=dtype)


def close(out, want, tol=1e-2):
    """Within bf16 rounding of the fp64 result, relative to its norm."""
    assert rel_err(out, want) < tol, rel_err(out, want)


def expand(scale, block, dim, size):
    return scale.double().repeat_interleave(block, dim=dim).narrow(dim, 0, size)


# ---------------------------------------------------------------------------
# ggc.ops.grouped_gemm: layouts, scales, accumulate, what stays unwritten
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("b_layout", ["nk", "kn"])
def test_contiguous_groups_and_untouched_rows(b_layout):
    """Groups cover rows [0, 128) of 140: the last 12 rows keep their NaN."""
    a, w = randn(140, 64), randn(len(SIZES), 96, 64, seed=1)
    b = w if b_layout == "nk" else w.transpose(1, 2).contiguous()
    out = nans(140, 96)
    assert ops.grouped_gemm(a, b, offsets=offsets_of(SIZES), out=out, b_layout=b_layout) is out
    for g, (s, e) in spans(offsets_of(SIZES)):
        if e > s:
            close(out[s:e], a[s:e].double() @ w[g].double().T)
    assert out[128:].isnan().all()


def test_masked_rows_past_the_count_stay_unwritten():
    counts = [5, 0, 16, 9]
    a, b = randn(4, 16, 64), randn(4, 32, 64, seed=1)
    out = nans(4, 16, 32)
    ops.grouped_gemm(a, b, masked_m=torch.tensor(counts, dtype=I32), out=out)
    for g, count in enumerate(counts):
        if count:
            close(out[g, :count], a[g, :count].double() @ b[g].double().T)
        assert out[g, count:].isnan().all()


def test_k_grouped_weight_gradient_accumulates_in_f32():
    """dW[g] = dY_g^T X_g over each group's tokens (an empty group: zeros);
    accumulate=True adds to what out holds."""
    dy, x = randn(128, 48), randn(128, 40, seed=1)
    offsets = offsets_of(SIZES)
    grad = ops.grouped_gemm(dy, x, k_offsets=offsets)
    assert grad.dtype == F32 and grad.shape == (len(SIZES), 48, 40)
    for g, (s, e) in spans(offsets):
        close(grad[g], dy[s:e].double().T @ x[s:e].double(), 1e-6) if e > s else None
    assert (grad[1] == 0).all()
    start = torch.randn(len(SIZES), 48, 40)
    summed = ops.grouped_gemm(dy, x, k_offsets=offsets, out=start.clone(), accumulate=True)
    torch.testing.assert_close(summed, start + grad, rtol=1e-6, atol=1e-5)


def fp8_rows(m, k, seed):
    """e4m3 rows and their 1x128 scales [M, ceil(K/128)], as f64 values."""
    q = randn(m, k, dtype=F32, scale=2, seed=seed).to(F8)
    s = torch.rand(m, -(-k // 128), generator=torch.Generator().manual_seed(seed)) + 0.5
    return q, s, q.double() * expand(s, 128, 1, k)


def fp8_weights(g, n, k, seed):
    """e4m3 weights and their 128x128 scales [G, ceil(N/128), ceil(K/128)]."""
    q = randn(g, n, k, dtype=F32, scale=2, seed=seed).to(F8)
    s = torch.rand(g, -(-n // 128), -(-k // 128),
                   generator=torch.Generator().manual_seed(seed)) + 0.5
    return q, s, q.double() * expand(expand(s, 128, 1, n), 128, 2, k)


@pytest.mark.parametrize("a_major", ["k", "mn"])
def test_fp8_block_scales(a_major):
    """A's 1x128 scales K-major, or DeepGEMM's M-major 4-aligned view
    (block_mn); B's 128x128 blocks; N and K end inside a block."""
    m, n, k = 128, 200, 320
    x, sx, x64 = fp8_rows(m, k, seed=3)
    w, sw, w64 = fp8_weights(len(SIZES), n, k, seed=4)
    if a_major == "mn":  # [ceil(K/128), align4(M)] storage, viewed [M, K/128]
        storage = torch.zeros(sx.shape[1], (m + 3) // 4 * 4)
        storage[:, :m] = sx.T
        sx = storage.T[:m]
    out = nans(m + 4, n)
    offsets = offsets_of(SIZES)
    ops.grouped_gemm(torch.cat([x, x[:4]]), w, offsets=offsets, out=out,
                     a_scale=torch.cat([sx, sx[:4]]) if a_major == "k" else
                     _mn_view(sx, m + 4), b_scale=sw)
    for g, (s, e) in spans(offsets):
        if e > s:
            close(out[s:e], x64[s:e] @ w64[g].T)
    assert out[m:].isnan().all()


def _mn_view(sx, rows):
    """The M-major view of `rows` rows (the first ones repeated) of scales."""
    full = torch.cat([sx, sx[:rows - sx.shape[0]]])
    storage = torch.zeros(full.shape[1], (rows + 3) // 4 * 4)
    storage[:, :rows] = full.T
    return storage.T[:rows]


def test_validate_checks_the_group_metadata_on_the_cpu():
    a, b = randn(10, 64), randn(2, 32, 64)
    with pytest.raises(GroupMetadataError, match=r"argument 2 \(groups\): offsets must not "
                                                  r"decrease"):
        ops.grouped_gemm(a, b, offsets=torch.tensor([0, 6, 4], dtype=I32), validate=True)
    with pytest.raises(GroupMetadataError, match="the groups cover rows \\[0, 8\\) of 10"):
        ops.grouped_gemm(a, b, offsets=torch.tensor([0, 4, 8], dtype=I32), validate=True)


def test_nothing_is_compiled(monkeypatch):
    """The CPU path traces and verifies; it never compiles a kernel."""
    from ggc import runtime

    def refuse(*args, **kwargs):
        raise AssertionError("a kernel was compiled for a CPU launch")
    monkeypatch.setattr(runtime, "compile_for_launch", refuse)
    a, b = randn(30, 64), randn(2, 32, 64)
    out = ops.grouped_gemm(a, b, offsets=torch.tensor([0, 10, 30], dtype=I32))
    close(out[10:], a[10:].double() @ b[1].double().T)


# ---------------------------------------------------------------------------
# @ggc.jit kernels: epilogues, column pairs and halves
# ---------------------------------------------------------------------------

@ggc.jit
def epilogue_kernel(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector,
                    bias: gl.ColVector, scale: gl.GroupScalar, y: gl.Out):
    acc = gl.grouped_dot(x, w, offs)
    gl.store(y, gl.maximum(acc * route + bias, -1.0) * scale + gl.group_id())


@ggc.jit
def pairs_kernel(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
    gate, up = gl.column_pairs(gl.grouped_dot(x, w, offs))
    gl.store(y, gl.silu(gate) * up)


@ggc.jit
def halves_kernel(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector, y: gl.Out):
    gate, up = gl.column_halves(gl.grouped_dot(x, w, offs))
    gl.store(y, gl.exp(gate) / (1.0 + up * up) * route, accumulate=True)


def test_jit_epilogue_of_row_and_column_vectors_and_group_scalars():
    x, w, offsets = randn(140, 64), randn(len(SIZES), 48, 64, seed=1), offsets_of(SIZES)
    route, bias = torch.rand(140), torch.randn(len(SIZES), 48)
    scale = torch.rand(len(SIZES)) + 0.5
    y = nans(140, 48)
    epilogue_kernel(x, w, offsets, route, bias, scale, y)
    for g, (s, e) in spans(offsets):
        if e > s:
            acc = x[s:e].double() @ w[g].double().T
            want = (acc * route[s:e, None].double() + bias[g].double()).clamp(min=-1.0)
            close(y[s:e], want * scale[g].double() + g)
    assert y[128:].isnan().all()


def test_jit_column_pairs_and_halves():
    """column_pairs combines product columns 2j and 2j+1, column_halves j
    and j + N/2; accumulate adds to out in f32, rounded once."""
    x, w, offsets = randn(140, 64), randn(len(SIZES), 64, 64, seed=2, scale=0.2), \
        offsets_of(SIZES)
    y = nans(140, 32)
    pairs_kernel(x, w, offsets, y)
    route, start = torch.rand(140), randn(140, 32, seed=5)
    z = start.clone()
    halves_kernel(x, w, offsets, route, z)
    for g, (s, e) in spans(offsets):
        if e > s:
            h = x[s:e].double() @ w[g].double().T
            gate, up = h[:, 0::2], h[:, 1::2]
            close(y[s:e], gate * torch.sigmoid(gate) * up)
            gate, up = h[:, :32], h[:, 32:]
            close(z[s:e], start[s:e].double() + gate.exp() / (1 + up * up) * route[s:e, None])
    assert y[128:].isnan().all() and torch.equal(z[128:], start[128:])


def test_jit_arguments_the_reference_does_not_take_are_named():
    x, w, offsets = randn(140, 64), randn(len(SIZES), 64, 64), offsets_of(SIZES)
    with pytest.raises(TypeError, match="argument 'x' has dtype torch.float64, which ggc "
                                        "does not take"):
        pairs_kernel(x.double(), w, offsets, nans(140, 32))
    with pytest.raises(ValueError, match="argument 'y' must be contiguous"):
        pairs_kernel(x, w, offsets, nans(32, 140).T)
    with pytest.raises(ggc.CompilationError, match="'out'"):  # the verifier's rules
        pairs_kernel(x, w, offsets, nans(140, 64))


# ---------------------------------------------------------------------------
# Devices: one of CUDA or the CPU per launch, named otherwise
# ---------------------------------------------------------------------------

def test_a_launch_on_two_devices_is_refused_by_name():
    from torch._subclasses.fake_tensor import FakeTensorMode
    w, offsets = randn(len(SIZES), 64, 64), offsets_of(SIZES)  # CPU tensors
    with FakeTensorMode(allow_non_fake_inputs=True):  # CUDA ones, without a GPU
        x = torch.empty(140, 64, dtype=BF16, device="cuda")
        y = torch.empty(140, 32, dtype=BF16, device="cuda")
        with pytest.raises(ValueError, match="argument 'w' is on cpu but argument 'x' on cuda: "
                                             "a launch's tensors must all be on one device"):
            pairs_kernel(x, w, offsets, y)
    with pytest.raises(ValueError, match="argument 'b' must be on a CUDA device, or on the CPU "
                                         "for ggc's reference backend, but is on meta"):
        ops.grouped_gemm(randn(140, 64), randn(len(SIZES), 64, 64).to("meta"),
                         offsets=offsets_of(SIZES))


# ---------------------------------------------------------------------------
# torch.ops.ggc.grouped_mm: forward and backward
# ---------------------------------------------------------------------------

def test_grouped_mm_forward_and_backward_against_fp64():
    x = randn(128, 64).requires_grad_()
    w = randn(len(SIZES), 48, 64, seed=1, scale=0.1).requires_grad_()
    offsets = offsets_of(SIZES)
    y = torch.ops.ggc.grouped_mm(x, w, offsets)
    grad_y = randn(128, 48, seed=2)
    grad_x, grad_w = torch.autograd.grad(y, (x, w), grad_y)
    x64, w64, gy64 = x.detach().double(), w.detach().double(), grad_y.double()
    for g, (s, e) in spans(offsets):
        if e > s:
            close(y[s:e], x64[s:e] @ w64[g].T)
            close(grad_x[s:e], gy64[s:e] @ w64[g])
            close(grad_w[g], gy64[s:e].T @ x64[s:e])
    assert (grad_w[1] == 0).all()


# ---------------------------------------------------------------------------
# ggc.moe, ggc.vllm, the Hugging Face swap
# ---------------------------------------------------------------------------

def test_fused_moe_bf16_and_fp8(monkeypatch):
    """ggc.moe's PTX helper kernels (routes, SwiGLU, combine) are never
    launched on the CPU: their torch fallbacks run."""
    from ggc import moe
    from ggc.moe import ptx
    from ggc.moe.quant import quantize_weights

    def refuse(name, *args, **kwargs):
        raise AssertionError(f"PTX kernel {name} launched on CPU tensors")
    monkeypatch.setattr(ptx, "launch", refuse)
    x, w13, w2, weights, ids = layer_inputs(48, 256, 128, 6, 2, seed=3)
    want = reference_moe(x.double(), w13.double(), w2.double(), weights.double(), ids)
    out = moe.fused_moe(x, w13, w2, weights, ids)
    assert out.dtype == BF16 and rel_err(out, want) < 1e-2
    (q13, s13), (q2, s2) = quantize_weights(w13, "w13"), quantize_weights(w2, "w2")
    fp8 = moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2)
    assert rel_err(fp8, want) < 8e-2  # e4m3 weights and activations


@pytest.mark.parametrize("dtype", [BF16, F32])
def test_moe_module_in_bf16_and_float32(dtype):
    """A float32 layer runs on the CPU in float32 (f32 accumulation
    throughout: near fp64), and trains."""
    from ggc.moe import MoE
    torch.manual_seed(0)
    layer = MoE(128, 64, 6, 2, dtype=dtype)
    x = randn(3, 7, 128, dtype=dtype)
    out, weights, ids = layer.forward_routed(x)
    tokens = x.reshape(-1, 128).double()
    want = reference_moe(tokens, layer.w13.double(), layer.w2.double(), weights.double(),
                         ids).view(x.shape)
    assert out.dtype == dtype and rel_err(out, want) < (1e-2 if dtype == BF16 else 1e-5)
    out.float().square().mean().backward()
    assert layer.w13.grad.dtype == dtype and layer.w13.grad.abs().sum() > 0


def test_vllm_fused_experts():
    from ggc import vllm
    x, w13, w2, weights, ids = layer_inputs(40, 256, 128, 5, 2, seed=4)
    want = reference_moe(x.double(), w13.double(), w2.double(), weights.double(), ids)
    assert rel_err(vllm.fused_experts(x, w13, w2, weights, ids), want) < 1e-2


def test_hf_swap_of_a_float32_cpu_model():
    """A tiny float32 Mixtral on the CPU, its MoE blocks swapped: the same
    logits as transformers' float32 blocks, to float32 rounding."""
    pytest.importorskip("transformers")
    import hf_models
    from ggc.moe import hf
    model = hf_models.model("mixtral", seed=7).float()
    ids = torch.randint(0, hf_models.VOCAB, (2, 9), generator=torch.Generator().manual_seed(8))
    blocks = len(hf_models.moe_blocks(model, "mixtral"))
    with torch.no_grad():
        want = model(ids).logits.double()
        assert hf.swap_moe_blocks(model) == blocks > 0
        got = model(ids).logits
    assert got.dtype == F32 and rel_err(got, want) < 1e-4
    assert all(layer.w13.dtype == F32 for layer in hf.swapped_layers(model))


# ---------------------------------------------------------------------------
# DeepGEMM's and FlashInfer's names
# ---------------------------------------------------------------------------

def test_deepgemm_fp8_contiguous_with_padding_rows():
    """m_indices: each group's rows start on a multiple of 128, padding rows
    (-1) between them keep what d held."""
    from ggc import deepgemm
    tags = [0] * 100 + [-1] * 28 + [2] * 5 + [-1] * 123
    m, n, k = len(tags), 256, 256
    x, sx, x64 = fp8_rows(m, k, seed=6)
    w, sw, w64 = fp8_weights(3, n, k, seed=7)
    d = nans(m, n)
    deepgemm.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d,
                                              torch.tensor(tags, dtype=I32))
    rows = torch.tensor(tags)
    for g in (0, 2):
        close(d[rows == g], x64[rows == g] @ w64[g].T)
    assert d[rows == -1].isnan().all()


def ue8m0_words(rows, blocks, seed):
    """Random UE8M0 exponents [rows, blocks] (scales 2^-4 .. 2^4) packed
    four to an int32, byte 0 the low one; and the scales they mean."""
    gen = torch.Generator().manual_seed(seed)
    e = torch.randint(123, 132, (rows, blocks), generator=gen)
    padded = torch.zeros(rows, -(-blocks // 4) * 4, dtype=torch.int64)
    padded[:, :blocks] = e
    by_word = padded.view(rows, -1, 4)
    value = sum(by_word[..., i] << (8 * i) for i in range(4))
    words = torch.where(value >= 2**31, value - 2**32, value).to(I32)  # two's complement
    return words, torch.exp2(e.double() - 127)


@pytest.mark.parametrize("bk", [32, 128])
def test_flashinfer_mxfp8_zero_padding(bk):
    """moe_gemm_mxfp8_nt_groupwise: group g's scale rows start at (its
    first row + 3g) / 4 * 4, as the kernels read FlashInfer's layout."""
    from ggc import flashinfer
    sizes, n, k = [3, 0, 6, 1, 9], 64, 256
    g, m = len(sizes), sum(sizes)
    a = randn(m, k, dtype=F32, seed=8).to(F8)
    b = randn(g, n, k, dtype=F32, seed=9).to(F8)
    rows = (m + 3 * g) // 4 * 4
    a_words, a_scales = ue8m0_words(rows, k // bk, seed=10)
    b_words, b_scales = ue8m0_words(g * n, k // bk, seed=11)
    offsets = offsets_of(sizes)
    out = flashinfer.moe_gemm_mxfp8_nt_groupwise(
        a, b, a_words, b_words.view(g, n, -1), offsets, scale_granularity_mnk=(1, 1, bk),
        out_dtype=F32)
    b64 = b.double() * expand(b_scales.view(g, n, -1), bk, 2, k)
    for gi, (s, e) in spans(offsets):
        if e > s:
            base = (s + 3 * gi) // 4 * 4
            a64 = a[s:e].double() * expand(a_scales[base:base + e - s], bk, 1, k)
            close(out[s:e], a64 @ b64[gi].T, 1e-6)


def test_reference_is_importable_as_a_documented_module():
    assert "reference backend" in reference.__doc__ and callable(reference.run)

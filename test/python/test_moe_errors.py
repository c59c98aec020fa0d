"""Every bad argument of ggc.moe.fused_moe and ggc.moe.MoE is an error that
names it and says what was expected, raised before anything is launched."""

import pytest

torch = pytest.importorskip("torch")

from ggc import moe  # noqa: E402
from moe_reference import use_reference_kernels  # noqa: E402

BF16, FP8 = torch.bfloat16, torch.float8_e4m3fn
T, H, I, E, K = 5, 256, 128, 6, 2


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def args(fp8=False, gated=True):
    x = torch.randn(T, H).to(BF16)
    dtype = FP8 if fp8 else BF16
    w13 = torch.randn(E, I * (2 if gated else 1), H).to(dtype)
    w2 = torch.randn(E, H, I).to(dtype)
    call = dict(x=x, w13=w13, w2=w2, topk_weights=torch.rand(T, K),
                topk_ids=torch.randint(0, E, (T, K), dtype=torch.int32))
    if fp8:
        call.update(w13_scale=torch.ones(E, 2 * I // 128, H // 128),
                    w2_scale=torch.ones(E, H // 128, I // 128))
    return call


def changed(fp8=False, **changes):
    call = args(fp8)
    call.update({k: (v(call) if callable(v) else v) for k, v in changes.items()})
    return call


CASES = {
    "activation": (changed(activation="tanh"), "activation must be one of"),
    "x_type": (changed(x=[1.0]), "x must be a torch.Tensor"),
    "x_rank": (changed(x=lambda c: c["x"][0]), r"x must be \[T, H\], got shape \[256\]"),
    "w13_hidden": (changed(w13=lambda c: c["w13"][:, :, :128]),
                   r"w13 must be \[E, N, H\] with H = 256 \(x.shape\[1\]\)"),
    "w13_odd": (changed(w13=lambda c: c["w13"][:, :255].contiguous()),
                "gated: w13 must be .* odd N = 255"),
    "w2_shape": (changed(w2=lambda c: c["w2"][:, :, :64]),
                 r"w2 must be \[E, H, I\] = \[6, 256, 128\]"),
    "ids_rows": (changed(topk_ids=lambda c: c["topk_ids"][:4]),
                 r"topk_ids must be \[T, top_k\] with T = 5"),
    "weights_shape": (changed(topk_weights=lambda c: c["topk_weights"][:, :1]),
                      r"topk_weights must have topk_ids' shape \[5, 2\], got \[5, 1\]"),
    "x_dtype": (changed(x=lambda c: c["x"].float()), "x must be bfloat16"),
    "w13_dtype": (changed(w13=lambda c: c["w13"].half(), w2=lambda c: c["w2"].half()),
                  r"w13 must be bfloat16 or float8_e4m3fn \(float32 on the CPU\), got "
                  r"torch.float16"),
    "w2_dtype": (changed(w2=lambda c: c["w2"].to(FP8)), "w2 must have w13's dtype"),
    "ids_dtype": (changed(topk_ids=lambda c: c["topk_ids"].float()),
                  "topk_ids must be int32 or int64"),
    "weights_dtype": (changed(topk_weights=lambda c: c["topk_ids"]),
                      "topk_weights must be floating point"),
    "bf16_scale": (changed(w13_scale=torch.ones(E, 2, 2)), "w13_scale is given but"),
    "fp8_no_scale": (changed(True, w2_scale=None), "w2_scale must be the f32 128x128"),
    "fp8_scale_shape": (changed(True, w2_scale=torch.ones(E, 1, 1)),
                        r"w2_scale must be \[E, ceil\(N/128\), ceil\(K/128\)\] = \[6, 2, 1\]"),
    "fp8_scale_dtype": (changed(True, w13_scale=lambda c: c["w13_scale"].double()),
                        "w13_scale must be float32"),
    "device": (changed(topk_ids=lambda c: c["topk_ids"].to("meta")),
               "topk_ids is on meta but x on cpu"),
    "contiguous": (changed(w2=lambda c: c["w2"].transpose(1, 2).contiguous().transpose(1, 2)),
                   "w2 must be contiguous"),
    "fp8_rows": (changed(True, w2=torch.zeros(E, H, 72, dtype=FP8),
                         w13=torch.zeros(E, 144, H, dtype=FP8),
                         w13_scale=torch.ones(E, 2, 2), w2_scale=torch.ones(E, 2, 1)),
                 r"I \(w2.shape\[2\]\) = 72 must be a multiple of 16 \(e4m3 rows"),
    "fp8_grad": (changed(True, x=lambda c: c["x"].requires_grad_()),
                 "FP8 fused_moe is inference only"),
    "graph": (changed(graph="yes"), "graph must be None, True or False, got 'yes'"),
    "validate": (changed(validate="no"), "validate must be None, True or False, got 'no'"),
    "graph_fp8_compute": (changed(graph="yes", compute_dtype=FP8),
                          "graph must be None, True or False, got 'yes'"),
    # The biases that quantize_fp8 leaves as parameters: FP8 has no backward
    # for them either (it crashed inside the quantisation).
    "fp8_bias_grad": (changed(True, w13_bias=torch.zeros(E, 2 * I, requires_grad=True)),
                      "FP8 fused_moe is inference only"),
    # A zero size passed the multiple-of-8 check and failed in the compiler.
    "no_experts": (changed(w13=lambda c: c["w13"][:0], w2=lambda c: c["w2"][:0],
                           topk_ids=lambda c: torch.zeros(T, K, dtype=torch.int32)),
                   r"E \(w13.shape\[0\]\) must be at least 1, got 0"),
    "no_hidden": (changed(x=torch.zeros(T, 0, dtype=BF16), w13=torch.zeros(E, 2 * I, 0,
                                                                            dtype=BF16),
                          w2=torch.zeros(E, 0, I, dtype=BF16)),
                  r"H \(x.shape\[1\]\) must be at least 1, got 0"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_moe_errors_name_the_argument(case):
    call, message = CASES[case]
    with pytest.raises((ValueError, TypeError), match=message):
        moe.fused_moe(**call)


def test_unaligned_hidden_size():
    call = args()
    call.update(x=torch.randn(T, 260).to(BF16), w13=torch.zeros(E, 2 * I, 260, dtype=BF16),
                w2=torch.zeros(E, 260, I, dtype=BF16))
    with pytest.raises(ValueError, match=r"H \(x.shape\[1\]\) = 260 must be a multiple of 8"):
        moe.fused_moe(**call)


def test_tensors_on_neither_a_gpu_nor_the_cpu():
    """CUDA runs the kernels, the CPU ggc's reference backend; anything
    else (meta here) is refused by name."""
    call = {k: v.to("meta") if isinstance(v, torch.Tensor) else v for k, v in args().items()}
    with pytest.raises(ValueError, match="x must be on a CUDA device, or on the CPU for "
                                         "ggc's reference backend, but is on meta"):
        moe.fused_moe(**call)


def test_float32_layers_run_on_the_cpu_only():
    """float32 x and weights run on the CPU (test_reference_backend.py);
    on CUDA (fake CUDA tensors here) ggc's kernels are bf16 and FP8."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        call = {k: torch.empty(v.shape, device="cuda", dtype=torch.float32
                               if v.is_floating_point() else v.dtype)
                for k, v in args().items()}
        with pytest.raises(TypeError, match="a float32 layer runs on the CPU only .*on cuda "
                                            "ggc's MoE kernels are bfloat16 and FP8"):
            moe.fused_moe(**call)
    with pytest.raises(TypeError, match="x must be float32 for float32 weights, got "
                                        "torch.bfloat16"):
        moe.fused_moe(**{**args(), "w13": args()["w13"].float(), "w2": args()["w2"].float()})


def test_validate_under_torch_compile_is_refused():
    call = args()

    def step(x):
        return moe.fused_moe(x, call["w13"], call["w2"], call["topk_weights"],
                             call["topk_ids"], validate=True)

    with pytest.raises(Exception, match="validate=True reads topk_ids back to the host"):
        torch.compile(step, backend="eager", fullgraph=True)(call["x"])


MODULE_CASES = [
    (dict(hidden_size=0), "hidden_size must be a positive int, got 0"),
    (dict(top_k=2.0), "top_k must be a positive int"),
    (dict(activation="tanh"), "activation must be one of"),
    (dict(dtype=torch.float16), "dtype must be torch.bfloat16"),
    (dict(top_k=7), r"top_k must be an int in \[1, E = 6\]"),
    (dict(n_group=4, topk_group=1), "n_group = 4 must divide the expert count E = 6"),
]


@pytest.mark.parametrize("changes, message", MODULE_CASES)
def test_module_errors_name_the_argument(changes, message):
    kwargs = dict(hidden_size=H, intermediate_size=I, num_experts=E, top_k=K)
    kwargs.update(changes)
    with pytest.raises((ValueError, TypeError), match=message):
        moe.MoE(**kwargs)


def test_module_input_and_quantisation_errors():
    layer = moe.MoE(H, 96, E, K)
    with pytest.raises(ValueError, match=r"x must be a \[..., H = 256\] torch.bfloat16 tensor "
                                         r"on cpu, got \[3, 128\] torch.bfloat16 on cpu"):
        layer(torch.zeros(3, 128, dtype=BF16))
    with pytest.raises(ValueError, match=r"got \[3, 256\] torch.float32 on cpu"):
        layer(torch.zeros(3, 256))  # was torch's dtype error from inside the router
    w13 = torch.zeros(E - 1, 192, H, dtype=FP8)  # an expert short
    with pytest.raises(ValueError, match=r"set_fp8_weights: w13 must be a float8_e4m3fn "
                                         r"\[6, 192, 256\] tensor, got \[5, 192, 256\]"):
        layer.set_fp8_weights(w13, layer.w2.to(FP8), torch.ones(E - 1, 2, 2),
                              torch.ones(E, 2, 1))
    with pytest.raises(TypeError, match="set_fp8_weights: w2_scale must be a tensor"):
        layer.set_fp8_weights(layer.w13.to(FP8), layer.w2.to(FP8), torch.ones(E, 2, 2), None)
    layer.quantize_fp8()  # I = 96: w13's 192 rows are a whole and a partial block
    assert layer.w13_scale.shape == (E, 2, 2) and layer.w2_scale.shape == (E, 2, 1)


def test_graph_token_limit_from_the_environment(monkeypatch):
    from ggc.moe import graphs
    monkeypatch.setenv("GGC_MOE_GRAPH_TOKENS", "lots")
    with pytest.raises(ValueError, match="GGC_MOE_GRAPH_TOKENS must be an int"):
        graphs.max_tokens()
    monkeypatch.setenv("GGC_MOE_GRAPH_TOKENS", "-5")
    assert graphs.max_tokens() == 0
    monkeypatch.delenv("GGC_MOE_GRAPH_TOKENS")
    assert graphs.max_tokens() == graphs.DEFAULT_MAX_TOKENS


def test_no_graph_off_the_gpu():
    """On CPU tensors (the reference kernels here) the call runs eagerly,
    whatever `graph` says: nothing is cached."""
    from ggc.moe import graphs
    graphs.clear()
    for _ in range(3):
        moe.fused_moe(**args(), graph=True)
    assert graphs.cached() == 0


def test_prequantised_x_and_its_scale():
    q, scale = moe.quantize_rows(torch.randn(T, H).to(BF16))
    with pytest.raises(TypeError, match="x_scale is given, so x must be float8_e4m3fn"):
        moe.fused_moe(**changed(x_scale=scale))            # bf16 weights
    with pytest.raises(TypeError, match="x_scale is given, so x must be float8_e4m3fn"):
        moe.fused_moe(**changed(fp8=True, x_scale=scale))  # bf16 x
    with pytest.raises(ValueError, match=r"x_scale must be x's f32 1x128 block scales "
                                         r"\[T, ceil\(H/128\)\] = \[5, 2\], got \[5, 1\]"):
        moe.fused_moe(**changed(fp8=True, x=q, x_scale=scale[:, :1]))
    with pytest.raises(TypeError, match="x_scale must be float32, got torch.float64"):
        moe.fused_moe(**changed(fp8=True, x=q, x_scale=scale.double()))
    with pytest.raises(TypeError, match="or take x in float8_e4m3fn with its x_scale"):
        moe.fused_moe(**changed(fp8=True, x=q))            # FP8 x without its scales

"""torch.compile, make_fx and opcheck over ggc's custom ops, without a GPU.

Nothing launches here: the inputs are fake tensors, on which the ops' fake
implementations (the real bodies, which trace and compile the kernel and
check the arguments against it instead of launching) give the output. So
these tests prove that every entry point traces into a graph of
torch.ops.ggc.* nodes with fullgraph=True, that the fakes give the right
shapes and dtypes and reject what the kernels would, and that the schemas,
autograd registration and fake implementations pass opcheck's fake-only
checks. What only the GPU shows (outputs, gradients, opcheck against real
runs) is in test/gpu/test_torch_compile_gpu.py.
"""

import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import flashinfer, ops, torch_ops  # noqa: E402
from torch._dynamo.backends.common import aot_autograd  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

PYTHON_DIR = os.path.dirname(os.path.dirname(ggc.__file__))
BF16, F8, I32, F32 = torch.bfloat16, torch.float8_e4m3fn, torch.int32, torch.float32


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def cpu_as_gpu(monkeypatch):
    """CPU tensors stand in for CUDA ones (fake CUDA tensors need a CUDA
    build of torch for views, copies and autograd): their launches are
    taken for CUDA ones (not ggc's reference backend), so the fakes hold
    them to the GPU kernels' contract; every check but the device runs."""
    monkeypatch.setattr(sys.modules["ggc.jit"], "_runs_on_cpu", lambda tensors: False)


@pytest.fixture
def cpu_fakes(cpu_as_gpu):
    torch._dynamo.reset()
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        yield mode
    torch._dynamo.reset()


def empty(*shape, dtype=BF16, **kw):
    return torch.empty(*shape, dtype=dtype, **kw)


@ggc.jit
def swiglu_routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector,
                  y: gl.Out, BLOCK_N: gl.constexpr = None):
    acc = gl.grouped_dot(x, w, offs)
    gl.store(y, gl.silu(acc) * route)


class Graphs:
    """A backend that keeps every graph it is given (Dynamo's, or AOT's
    forward and backward) and runs it as it is."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, inputs):
        self.graphs.append(gm)
        return gm.forward

    def aot(self):
        return aot_autograd(fw_compiler=self, bw_compiler=self)

    def targets(self):
        """What the graphs call (an op, or AOT's overload of it, by name)."""
        return {str(n.target).removesuffix(".default") for g in self.graphs
                for n in g.graph.nodes if n.op == "call_function"}


# One call per layout, dtype and scale kind; each returns the output.
def contiguous(a, b, offsets):
    return ops.grouped_gemm(a, b, offsets=offsets)


def contiguous_kn_f16(a, b, offsets):
    return ops.grouped_gemm(a, b, offsets=offsets, b_layout="kn", out_dtype=torch.float16)


def torch_offsets(a, b, offs):
    return ops.grouped_gemm(a, b, offs=offs)


def masked_fp8_block(a, b, sa, sb, masked_m):
    return ops.grouped_gemm(a, b, masked_m=masked_m, a_scale=sa, b_scale=sb, expected_m=64)


def k_grouped(dy, x, k_offsets):
    return ops.grouped_gemm(dy, x, k_offsets=k_offsets)


def k_grouped_fp8(dy_t, x_t, sa, sb, k_offsets):
    return ops.grouped_gemm(dy_t, x_t, k_offsets=k_offsets, k_major=True, a_scale=sa,
                            b_scale=sb)


def into_out(a, b, offsets, out):
    ops.grouped_gemm(a, b, offsets=offsets, out=out)
    return out


def jit_kernel(x, w, offsets, route, y):
    swiglu_routed(x, w, offsets, route, y, BLOCK_N=64)
    return y


CASES = {  # name: (function, inputs, output shape and dtype, the op it becomes)
    "contiguous": (contiguous, lambda: (empty(100, 512), empty(8, 256, 512), empty(9, dtype=I32)),
                   ((100, 256), BF16), "ggc.grouped_gemm"),
    "contiguous_kn_f16": (contiguous_kn_f16,
                          lambda: (empty(100, 512, dtype=torch.float16),
                                   empty(8, 512, 256, dtype=torch.float16),
                                   empty(9, dtype=torch.int64)),
                          ((100, 256), torch.float16), "ggc.grouped_gemm"),
    "offs": (torch_offsets, lambda: (empty(100, 512), empty(8, 256, 512), empty(8, dtype=I32)),
             ((100, 256), BF16), "ggc.grouped_gemm"),
    "masked_fp8_block": (masked_fp8_block,
                         lambda: (empty(4, 128, 512, dtype=F8), empty(4, 256, 512, dtype=F8),
                                  empty(4, 128, 4, dtype=F32), empty(4, 2, 4, dtype=F32),
                                  empty(4, dtype=I32)),
                         ((4, 128, 256), BF16), "ggc.grouped_gemm"),
    "k_grouped": (k_grouped, lambda: (empty(300, 64), empty(300, 96), empty(4, dtype=I32)),
                  ((3, 64, 96), F32), "ggc.grouped_gemm"),
    "k_grouped_fp8": (k_grouped_fp8,
                      lambda: (empty(64, 304, dtype=F8), empty(136, 304, dtype=F8),
                               empty(64, 3, dtype=F32), empty(136, 3, dtype=F32),
                               empty(4, dtype=I32)),
                      ((3, 64, 136), F32), "ggc.grouped_gemm"),
    "out": (into_out, lambda: (empty(100, 512), empty(8, 256, 512), empty(9, dtype=I32),
                               empty(100, 256)),
            ((100, 256), BF16), "ggc.grouped_gemm_out"),
    "jit": (jit_kernel, lambda: (empty(100, 512), empty(8, 256, 512), empty(9, dtype=I32),
                                 empty(100, dtype=F32), empty(100, 256)),
            ((100, 256), BF16), "ggc.jit_swiglu_routed_"),
}


@pytest.mark.parametrize("backend", ["eager", "aot"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_entry_point_compiles_with_fullgraph(cpu_fakes, case, backend):
    fn, inputs, (shape, dtype), target = CASES[case]
    graphs = Graphs()
    compiled = torch.compile(fn, backend=graphs if backend == "eager" else graphs.aot(),
                             fullgraph=True)
    out = compiled(*inputs())
    assert tuple(out.shape) == shape and out.dtype == dtype
    found = graphs.targets()
    # Mutating ops reach AOT's graph functionalised.
    if backend == "aot" and case in ("out", "jit"):
        target = "auto_functionalized"
    assert any(t == target or t.startswith(target) and target != "ggc.grouped_gemm"
               for t in found), found


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_backends_by_name(cpu_fakes, backend):
    out = torch.compile(contiguous, backend=backend, fullgraph=True)(*CASES["contiguous"][1]())
    assert out.shape == (100, 256)


def test_fake_cuda_tensors_trace_without_lifting_the_device_rule():
    torch._dynamo.reset()
    graphs = Graphs()
    with FakeTensorMode(allow_non_fake_inputs=True):
        a, b = empty(100, 512, device="cuda"), empty(8, 256, 512, device="cuda")
        out = torch.compile(contiguous, backend=graphs, fullgraph=True)(
            a, b, empty(9, dtype=I32, device="cuda"))
        assert out.device.type == "cuda" and out.shape == (100, 256)
        with pytest.raises(ValueError, match="argument 'b' is on cpu but argument 'a' on "
                                             "cuda: a launch's tensors must all be on one "
                                             "device"):
            contiguous(a, empty(8, 256, 512), empty(9, dtype=I32, device="cuda"))
    assert "ggc.grouped_gemm" in graphs.targets()


def test_a_dim_of_extent_one_takes_any_stride(cpu_fakes):
    """A transposed [G, 2, 1] block scale is [G, 1, 2] with strides
    (2, 1, 1): torch calls it contiguous and the kernel reads it row-major
    (the extent-1 dim's stride addresses nothing), so the launch's checks
    take it; a real stride mismatch is still refused."""
    fp8 = torch.float8_e4m3fn
    a, b = empty(64, 256, dtype=fp8), empty(4, 128, 256, dtype=fp8)
    a_scale = empty(64, 2, dtype=torch.float32)
    offsets = empty(5, dtype=I32)
    b_scale = empty(4, 2, 1, dtype=torch.float32).transpose(1, 2)
    assert b_scale.stride() == (2, 1, 1) and b_scale.is_contiguous()
    out = ops.grouped_gemm(a, b, offsets=offsets, a_scale=a_scale, b_scale=b_scale)
    assert out.shape == (64, 128)
    with pytest.raises(ValueError, match=r"argument 0 \(a\) must be contiguous"):
        ops.grouped_gemm(empty(256, 64, dtype=fp8).t(), b, offsets=offsets, a_scale=a_scale,
                         b_scale=b_scale)


def test_drop_ins_trace_through_grouped_gemm(cpu_fakes):
    def deepgemm(x, sx, w, sw, out, masked_m, xc, sxc, tags, outc):
        ops.m_grouped_gemm_fp8_fp8_bf16_nt_masked((x, sx), (w, sw), out, masked_m, 64)
        ops.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous((xc, sxc), (w, sw), outc, tags)
        return out, outc

    def mxfp8(a, b, sa, sb, m_indptr):
        return flashinfer.moe_gemm_mxfp8_nt_groupwise(a, b, sa, sb, m_indptr)

    g, m, n, k = 4, 128, 256, 512
    # DeepGEMM's A scales: the M-major view of [.., K/128, align4(M)] storage.
    sx = empty(g, k // 128, m, dtype=F32).transpose(1, 2)
    sxc = empty(k // 128, 256, dtype=F32).T
    graphs = Graphs()
    out, outc = torch.compile(deepgemm, backend=graphs, fullgraph=True)(
        empty(g, m, k, dtype=F8), sx, empty(g, n, k, dtype=F8),
        empty(g, n // 128, k // 128, dtype=F32), empty(g, m, n), empty(g, dtype=I32),
        empty(256, k, dtype=F8), sxc, empty(256, dtype=I32), empty(256, n))
    assert out.shape == (g, m, n) and outc.shape == (256, n)
    y = torch.compile(mxfp8, backend=graphs, fullgraph=True)(
        empty(100, k, dtype=F8), empty(g, n, k, dtype=F8),
        empty((100 + 3 * g) // 4 * 4, k // 512, dtype=I32), empty(g, n, k // 512, dtype=I32),
        empty(g + 1, dtype=I32))
    assert y.shape == (100, n) and y.dtype == BF16
    assert {"ggc.grouped_gemm_out", "ggc.grouped_gemm"} <= graphs.targets()


@pytest.mark.parametrize("strict", [False, True])
def test_torch_export(cpu_as_gpu, strict):
    class Layer(torch.nn.Module):
        def forward(self, x, w, offs, route):
            h = ops.grouped_gemm(x, w, offs=offs)
            y = torch.zeros_like(h)
            swiglu_routed(h, w, torch.cat([offs.new_zeros(1), offs]), route, y)
            return y

    args = (empty(100, 256), empty(4, 256, 256), torch.tensor([10, 50, 60, 100], dtype=I32),
            torch.rand(100))
    graph = torch.export.export(Layer(), args, strict=strict).graph
    calls = [str(n.target) for n in graph.nodes if n.op == "call_function"]
    assert "ggc.grouped_gemm.default" in calls
    assert any(c.startswith("ggc.jit_swiglu_routed_") for c in calls), calls


def test_dynamic_token_counts_share_one_graph(cpu_fakes):
    graphs = Graphs()
    compiled = torch.compile(contiguous, backend=graphs, fullgraph=True, dynamic=True)
    for m in (100, 300, 1000):
        assert compiled(empty(m, 512), empty(8, 256, 512), empty(9, dtype=I32)).shape == (m, 256)
    assert len(graphs.graphs) == 1


def test_forward_and_backward_trace_into_ggc_ops(cpu_fakes):
    def step(a, b, offs):
        y = ops.grouped_gemm(a, b, offs=offs)
        return torch.autograd.grad(y.float().sum(), (a, b))

    a = empty(100, 512, requires_grad=True)
    b = empty(8, 256, 512, requires_grad=True)
    graph = make_fx(step)(a, b, empty(8, dtype=I32))
    calls = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    # Forward, grad_a (rows outside the groups zeroed by its kernel), grad_b
    # (k_grouped, in b's dtype): three calls of the functional op.
    assert calls.count("ggc.grouped_gemm.default") == 3
    assert "ggc.grouped_gemm_out.default" not in calls
    grads = step(a, b, empty(8, dtype=I32))
    assert grads[0].shape == a.shape and grads[0].dtype == BF16
    assert grads[1].shape == b.shape and grads[1].dtype == BF16


def test_backward_of_the_kn_form_swaps_the_weight_layout(cpu_fakes):
    a = empty(100, 512, dtype=torch.float16, requires_grad=True)
    b = empty(8, 512, 256, dtype=torch.float16, requires_grad=True)
    y = ops.grouped_gemm(a, b, offsets=empty(9, dtype=I32), b_layout="kn",
                         out_dtype=torch.float16)
    grad_a, grad_b = torch.autograd.grad(y.sum(), (a, b))
    assert grad_a.shape == a.shape and grad_b.shape == b.shape
    assert grad_b.dtype == torch.float16


@pytest.mark.parametrize("case", ["masked_fp8_block", "k_grouped"])
def test_layouts_without_backward_say_so(cpu_fakes, case):
    fn, inputs, _, _ = CASES[case]
    args = inputs()
    if case == "masked_fp8_block":  # bf16 masked: a layout with no backward
        args = (empty(4, 128, 512, requires_grad=True), empty(4, 256, 512), args[4])
        fn = lambda a, b, m: ops.grouped_gemm(a, b, masked_m=m)  # noqa: E731
    else:
        args = (args[0].requires_grad_(), args[1], args[2])
    y = fn(*args)
    with pytest.raises(RuntimeError, match="ggc.grouped_gemm: no backward for this layout"):
        y.sum().backward()


@pytest.mark.parametrize("op, args, kwargs", [
    ("grouped_gemm", lambda: (empty(100, 512), empty(8, 256, 512)),
     lambda: dict(offsets=empty(9, dtype=I32))),
    ("grouped_gemm", lambda: (empty(100, 512, requires_grad=True),
                              empty(8, 256, 512, requires_grad=True)),
     lambda: dict(offs=empty(8, dtype=I32))),
    ("grouped_gemm", lambda: CASES["masked_fp8_block"][1]()[:2],
     lambda: dict(zip(("a_scale", "b_scale", "masked_m"), CASES["masked_fp8_block"][1]()[2:]))),
    ("grouped_gemm", lambda: (empty(300, 64), empty(300, 96)),
     lambda: dict(k_offsets=empty(4, dtype=I32))),
    ("grouped_gemm_out", lambda: (empty(100, 512), empty(8, 256, 512), empty(100, 256)),
     lambda: dict(offsets=empty(9, dtype=I32))),
])
def test_opcheck_on_fake_tensors(cpu_fakes, op, args, kwargs):
    """opcheck's every test, with fakes for the real run too: the schema
    (aliasing, what is mutated), the autograd registration, and the fake
    implementations under dynamic shapes (test_aot_dispatch_dynamic)."""
    result = torch.library.opcheck(getattr(torch.ops.ggc, op).default, args(), kwargs())
    assert set(result.values()) == {"SUCCESS"}, result


def test_jit_kernels_become_custom_ops(cpu_fakes):
    graphs = Graphs()
    inputs = CASES["jit"][1]()
    torch.compile(jit_kernel, backend=graphs, fullgraph=True)(*inputs)
    (name,) = [t for t in graphs.targets() if t.startswith("ggc.jit_swiglu_routed_")]
    op = getattr(torch.ops.ggc, name.split(".")[1])
    assert str(op.default._schema).endswith(
        "(Tensor x, Tensor w, Tensor offs, Tensor route, Tensor(a!) y, str BLOCK_N, "
        "str? ggc_validate) -> ()")
    # Its fake checks the arguments against the compiled kernel.
    x, w, offsets, route, y = inputs
    with pytest.raises(ValueError, match=r"argument 4 \(out\) dimension 0 must be M = 100"):
        op(x, w, offsets, route, empty(99, 256), "None", None)
    result = torch.library.opcheck(op.default, inputs + ("64", None))
    assert set(result.values()) == {"SUCCESS"}, result


def test_jit_kernels_of_one_name_get_their_own_ops(cpu_fakes):
    def make():
        @ggc.jit
        def twin(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
            gl.store(y, gl.grouped_dot(x, w, offs))
        return twin

    first, second = make(), make()
    names = {str(torch_ops.jit_op(first)), str(torch_ops.jit_op(second))}
    assert len(names) == 2 and all(n.startswith("ggc.jit_twin_") for n in names), names
    assert str(torch_ops.jit_op(first)) in names  # registered once


@pytest.mark.parametrize("call, error", [
    (lambda: contiguous(empty(100, 504), empty(8, 256, 512), empty(9, dtype=I32)),
     r"'a' must have shape \[\?, 512\]"),
    (lambda: contiguous(empty(512, 100).T, empty(8, 256, 512), empty(9, dtype=I32)),
     r"argument 0 \(a\) must be contiguous"),
    (lambda: contiguous(empty(100, 500), empty(8, 256, 500), empty(9, dtype=I32)),
     "TMA needs a multiple of 16"),
    (lambda: contiguous(empty(100, 512), empty(8, 256, 512), empty(8, dtype=I32)),
     r"'groups' must have shape \[9\]"),
    (lambda: into_out(empty(100, 512), empty(8, 256, 512), empty(9, dtype=I32),
                      empty(99, 256)), r"argument 3 \(out\) dimension 0 must be M = 100"),
    (lambda: into_out(empty(100, 512), empty(8, 256, 512), empty(9, dtype=I32),
                      empty(100 * 256 + 1)[1:].view(100, 256)), "must be 16-byte aligned"),
    (lambda: ops.grouped_gemm(empty(304, 64, dtype=F8), empty(304, 136, dtype=F8),
                              k_offsets=empty(4, dtype=I32)), "needs K-major operands"),
    (lambda: ops.grouped_gemm(empty(100, 512), empty(8, 256, 512), offsets=empty(9, dtype=I32),
                              offs=empty(8, dtype=I32)), "pass one of them"),
    (lambda: ops.grouped_gemm(empty(4, 64, 512), empty(4, 256, 512), masked_m=empty(4, dtype=I32),
                              expected_m=0), r"expected_m must be an int in \[1, 2\^31 - 1\]"),
])
def test_fakes_reject_what_the_kernels_reject(cpu_fakes, call, error):
    """The same errors as a real call, raised while tracing: the compiler's
    verifier, the launch's checks and ggc.ops' own."""
    with pytest.raises((ValueError, TypeError, ggc.CompilationError), match=error):
        call()  # fake tensors: through the op, checked by its fake
    with pytest.raises(Exception) as raised:  # Dynamo wraps it, message and all
        torch.compile(call, backend="eager", fullgraph=True)()
    assert re.search(error, str(raised.value))


def test_torch_offsets_become_csr_offsets_on_the_device():
    offs = torch.tensor([3, 3, 10], dtype=I32)
    b3, b2 = torch.empty(3, 8, 8), torch.empty(10, 8)
    offsets, k_offsets = ops._from_torch_offsets(offs, b3, None, None)
    assert k_offsets is None and offsets.dtype == I32
    assert offsets.tolist() == [0, 3, 3, 10]
    offsets, k_offsets = ops._from_torch_offsets(offs.long(), b2, None, None)
    assert offsets is None and k_offsets.tolist() == [0, 3, 3, 10]
    assert k_offsets.dtype == torch.int64
    with pytest.raises(ValueError, match=r"offs must be \[G\]"):
        ops._from_torch_offsets(offs[None], b3, None, None)


def test_calls_go_through_the_ops_only_when_traced():
    a, b = torch.empty(4, 8), torch.empty(2, 8, 8)
    assert not torch_ops.wants_op((a, b))
    assert torch_ops.wants_op((a.requires_grad_(), b), grad=True)
    with torch.no_grad():
        assert not torch_ops.wants_op((a, b), grad=True)
    with FakeTensorMode():
        assert torch_ops.wants_op((torch.empty(4, 8), b))
    assert torch_ops.wants_op((torch.empty(4, 8, device="meta"), b))
    with torch_ops._op_body():  # inside an op's body: always direct
        assert not torch_ops.wants_op((torch.empty(4, 8, device="meta"), b))


def test_unit_scales_made_while_tracing_are_not_kept(cpu_fakes):
    ones = ops._ones(7, "cpu")
    assert (7, "cpu") not in ops._ONES and ones.shape == (7,)


def fresh_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True)


def test_import_ggc_registers_the_ops_in_a_fresh_process():
    done = fresh_python("import sys, ggc, torch; assert 'ggc.torch_ops' in sys.modules; "
                        "print(torch.ops.ggc.grouped_gemm.default._schema.name, "
                        "torch.ops.ggc.grouped_gemm_out.default._schema.name)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ggc::grouped_gemm", "ggc::grouped_gemm_out"]


def test_import_ggc_without_torch():
    done = fresh_python("import sys; sys.modules['torch'] = None; import ggc; "
                        "assert 'ggc.torch_ops' not in sys.modules; print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_schemas():
    schemas = {name: str(getattr(torch.ops.ggc, name).default._schema)
               for name in ("grouped_gemm", "grouped_gemm_out")}
    layout = ("Tensor? offsets=None, Tensor? masked_m=None, Tensor? m_indices=None, "
              "Tensor? k_offsets=None, Tensor? offs=None, Tensor? a_scale=None, "
              "Tensor? b_scale=None, ")
    options = ('str b_layout="nk", SymInt? expected_m=None, str? a_scale_kind=None, '
               'str? b_scale_kind=None, bool k_major=False, bool? validate=None')
    assert schemas["grouped_gemm"] == (
        "ggc::grouped_gemm(Tensor a, Tensor b, " + layout + "ScalarType? out_dtype=None, "
        + options + ", bool zero_ungrouped=False) -> Tensor")
    assert schemas["grouped_gemm_out"] == (
        "ggc::grouped_gemm_out(Tensor a, Tensor b, Tensor(a2!) out, " + layout
        + options + ", bool accumulate=False, bool zero_ungrouped=False) -> ()")

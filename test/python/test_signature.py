"""ggc.signature: the key every cached launch is found by. Two calls get
equal keys exactly when their arguments agree in everything a check reads;
the C++ packing (ggc._signature) and Python's tuple agree on that."""

import glob
import os

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import signature  # noqa: E402

BUILT = bool(glob.glob(os.path.join(os.path.dirname(ggc.__file__), "_signature*.so")))


@pytest.fixture(params=["native", "python"])
def of(request, monkeypatch):
    """signature.of with ggc._signature, and with Python's tuple alone."""
    monkeypatch.setattr(signature, "_native_addresses", signature._native_addresses)
    monkeypatch.setattr(signature, "_native_empty", signature._native_empty)
    if request.param == "native":
        if not BUILT:
            pytest.skip("ggc._signature not built (no torch at configure time)")
        monkeypatch.setattr(signature, "_native", ())
        assert signature._load_native() is not None
    else:
        monkeypatch.setattr(signature, "_native", None)
    return signature.of


def test_the_native_packing_is_loaded_when_built():
    if not BUILT:
        pytest.skip("ggc._signature not built")
    signature.of([torch.zeros(1)])
    assert signature._native is not None
    assert isinstance(signature.of([torch.zeros(1)]), bytes)


def test_another_torch_version_keeps_pythons_keys(monkeypatch):
    if not BUILT:
        pytest.skip("ggc._signature not built")
    monkeypatch.setattr(signature, "_native", ())
    monkeypatch.setattr(signature, "_native_addresses", None)
    monkeypatch.setattr(signature, "_native_empty", None)
    monkeypatch.setattr(torch, "__version__", "0.0.0-other")
    assert signature._load_native() is None
    assert isinstance(signature.of([torch.zeros(1)]), tuple)


class PassingMode(torch.overrides.TorchFunctionMode):
    """A TorchFunctionMode that changes nothing: with one active, the C++
    readers step aside for Python's."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def base():
    return torch.randn(4, 6)


# Each variant differs from base() in one thing a check reads.
VARIANTS = {
    "dtype": lambda: torch.randn(4, 6).to(torch.bfloat16),
    "shape": lambda: torch.randn(4, 7),
    "rank": lambda: torch.randn(4, 6, 1),
    "strides": lambda: torch.randn(6, 4).t(),
    "device": lambda: torch.empty(4, 6, device="meta"),
    "requires_grad": lambda: torch.randn(4, 6, requires_grad=True),
    "parameter": lambda: torch.nn.Parameter(torch.randn(4, 6), requires_grad=False),
    "negative bit": lambda: torch._neg_view(torch.randn(4, 6)),
    "none": lambda: None,
    "constant": lambda: 4,
}


@pytest.mark.parametrize("field", sorted(VARIANTS))
def test_keys_differ_in_each_field(of, field):
    other = VARIANTS[field]()
    assert of([base(), 1]) != of([other, 1])
    assert of([base(), 1]) == of([base(), 1])  # fresh data, same signature


def test_a_parameter_is_not_a_tensor_needing_a_gradient(of):
    grad = torch.randn(4, 6, requires_grad=True)
    param = torch.nn.Parameter(torch.randn(4, 6))
    assert of([grad]) != of([param])


def test_a_view_at_another_address_keeps_the_key(of):
    whole = torch.randn(8, 6)
    assert of([whole[:4]]) == of([whole[4:]])


@pytest.mark.parametrize("a, b", [(1, True), (1, 1.0), (0, None), ("a", "b"), (2, 3),
                                  (1.5, 2.5), ("1", 1), ("ab", "a"), ("\ud800", "\ud801")])
def test_constants_differ_by_type_and_value(of, a, b):
    assert of([a]) != of([b])
    assert of([a]) == of([a])


def test_a_tensor_subclass_is_keyed_by_its_type(of):
    class Tagged(torch.Tensor):
        pass

    plain = torch.randn(4, 6)
    tagged = plain.as_subclass(Tagged)
    assert of([tagged]) != of([plain])
    assert of([tagged]) == of([torch.randn(4, 6).as_subclass(Tagged)])


@pytest.mark.parametrize("arg", [object(), [torch.zeros(1)], 2**70])
def test_other_arguments_have_no_key_or_their_own(of, arg):
    # An object without tensor fields: no key (the checked path every
    # time); a big int is a constant Python keys by value.
    key = of([arg])
    if isinstance(arg, int):
        assert key is not None and key != of([2**70 + 1])
    else:
        assert key is None


def test_a_sparse_tensor_is_not_a_dense_one(of):
    sparse = torch.eye(3).to_sparse()
    broadcast = torch.zeros(1, 1).expand(3, 3)  # the strides torch gives sparse: (0, 0)
    assert of([sparse]) != of([broadcast])


def test_a_jit_calls_keyword_arguments_are_keyed_by_name(of):
    jit = __import__("sys").modules["ggc.jit"]
    if jit._torch_ops is None or jit._torch_ops.tracing():
        pytest.skip("no torch bridge")
    x, y = base(), torch.randn(4, 6)
    by_position = jit._call_key((x, y), {}, False)
    assert by_position != jit._call_key((x,), {"y": y}, False)
    assert jit._call_key((x,), {"y": y}, False) != jit._call_key((x,), {"z": y}, False)
    assert jit._call_key((x,), {"y": y}, False) == jit._call_key((base(),), {"y": y}, False)


def test_a_negated_view_is_refused_by_name():
    from ggc import ir
    kernel = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=2, n=128,
                                          k=128))
    a = torch._neg_view(torch.randn(8, 128).to(torch.bfloat16))
    b = torch.randn(2, 128, 128).to(torch.bfloat16)
    offsets = torch.tensor([0, 4, 8], dtype=torch.int32)
    out = torch.empty(8, 128, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"argument 0 \(a\) is a negated view"):
        kernel(a, b, offsets, out)


def random_arguments(rng):
    """A few arguments of the kinds a call passes, drawn so that equal and
    unequal signatures both occur often."""
    def tensor():
        dtype = rng.choice([torch.float32, torch.bfloat16, torch.int32])
        shape = [rng.choice([1, 2, 3]) for _ in range(rng.choice([1, 2]))]
        t = torch.zeros(shape, dtype=dtype)
        if t.dim() == 2 and rng.random() < 0.3:
            t = t.t()
        if rng.random() < 0.2 and dtype.is_floating_point:
            t = t.requires_grad_()
        if rng.random() < 0.1 and dtype.is_floating_point:
            t = torch.nn.Parameter(t.detach(), requires_grad=False)
        return t
    kinds = [tensor, lambda: None, lambda: rng.choice([0, 1, True, False, 1.0, "a"])]
    return [rng.choice(kinds)() for _ in range(rng.choice([1, 2]))]


def test_the_native_and_python_keys_agree_on_which_calls_match():
    if not BUILT:
        pytest.skip("ggc._signature not built")
    import random
    signature._native = ()
    native = signature._load_native()
    rng = random.Random(7)
    calls = [random_arguments(rng) for _ in range(300)]
    native_keys = [native(c) for c in calls]
    python_keys = [signature._python_signature(c) for c in calls]
    assert all(k is not None for k in native_keys + python_keys)
    for i in range(len(calls)):
        for j in range(i + 1, len(calls)):
            assert (native_keys[i] == native_keys[j]) == (python_keys[i] == python_keys[j]), \
                (calls[i], calls[j])
    assert len(set(python_keys)) > 30 and len(set(python_keys)) < len(calls)  # both occur


def test_addresses_are_the_tensors_data_pointers(monkeypatch):
    base_tensor = torch.randn(16, 8)
    values = [base_tensor[3:], None, torch.randn(4), base_tensor.t(), 7,
              torch.empty(0, 8), torch.nn.Parameter(torch.randn(2)),
              torch.randn(4).to(torch.float8_e4m3fn)]
    positions = [0, 3, 2, 5, 6, 7]
    expected = [values[i].data_ptr() for i in positions]
    if BUILT:
        signature.of([torch.zeros(1)])  # loads the module
        assert signature._native_addresses is not None
        assert signature._native_addresses(values, positions) == expected
        assert signature._native_addresses(values, iter(positions)) is None  # kept for Python
    assert signature.addresses(values, positions) == expected
    monkeypatch.setattr(signature, "_native_addresses", None)
    assert signature.addresses(values, positions) == expected  # Python's path


def test_a_torch_function_mode_takes_pythons_path():
    if not BUILT:
        pytest.skip("ggc._signature not built")
    signature.of([torch.zeros(1)])
    t = torch.zeros(3)
    with PassingMode():
        assert signature._native([t]) is None
        assert signature._native_addresses([t], [0]) is None
        assert isinstance(signature.of([t]), tuple)


def test_addresses_of_other_values_take_pythons_path():
    if not BUILT:
        pytest.skip("ggc._signature not built")
    signature.of([torch.zeros(1)])  # loads the module
    native = signature._native_addresses
    assert native is not None
    assert native([7], [0]) is None  # not a tensor: Python's data_ptr() raises
    meta = torch.empty(4, device="meta")
    assert native([meta], [0]) == [meta.data_ptr()]  # as Python reads it
    assert native([torch.zeros(2)], [3]) is None  # out of range
    with pytest.raises(AttributeError):
        signature.addresses([7], [0])


LIKES = [torch.empty(0, dtype=torch.bfloat16), torch.empty(0, dtype=torch.float8_e4m3fn),
         torch.empty(0, dtype=torch.int32), torch.empty(0, device="meta"),
         torch.ones(1, requires_grad=True)]


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("like", LIKES, ids=lambda t: f"{t.dtype}-{t.device}")
@pytest.mark.parametrize("shape", [(3, 5), (0,), (), (2, 0, 7)])
def test_empty_is_torch_empty_like_its_model(monkeypatch, native, like, shape):
    """signature.empty(shape, like): a cached launch's new output, as
    torch.empty(shape, dtype=like.dtype, device=like.device) makes it,
    from C++ or Python alike."""
    if native:
        if not BUILT:
            pytest.skip("ggc._signature not built")
        signature.of([torch.zeros(1)])  # loads the module
        assert signature._native_empty is not None
        assert signature._native_empty(shape, like) is not None  # C++ made it
    else:
        monkeypatch.setattr(signature, "_native_empty", None)
    made = signature.empty(shape, like)
    want = torch.empty(shape, dtype=like.dtype, device=like.device)
    assert type(made) is torch.Tensor
    assert (made.shape, made.dtype, made.device, made.stride()) == \
        (want.shape, want.dtype, want.device, want.stride())
    assert not made.requires_grad
    if made.numel() and made.device.type == "cpu":
        assert made.data_ptr() != signature.empty(shape, like).data_ptr()  # a new buffer


def test_empty_leaves_other_sizes_and_modes_to_python():
    if not BUILT:
        pytest.skip("ggc._signature not built")
    signature.of([torch.zeros(1)])
    native, like = signature._native_empty, torch.empty(0)
    for sizes, model in (((2, -1), like), ([2, 3], like), ((2, True), like), ((2, 3), 5)):
        assert native(sizes, model) is None, sizes
    made = native((2, 3), torch.nn.Parameter(torch.zeros(1)))  # a Parameter's options
    assert type(made) is torch.Tensor and not made.requires_grad
    with PassingMode():
        assert native((2, 3), like) is None
    with pytest.raises(RuntimeError):
        signature.empty((2, -1), like)  # torch.empty's own error

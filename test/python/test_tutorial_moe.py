"""docs/python.md's permute-free MoE tutorial, run as the page writes it
(its code block, executed) on CPU tensors through the reference backend,
against an fp64 layer computed token by token. (test/gpu/test_out_rows.py
runs the kernels on a GPU.)"""

import os
import re

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tutorial_namespace():
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        text = f.read()
    section = text.split("## Tutorial: a permute-free MoE layer", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {}
    exec(compile(code, "docs/python.md (permute-free MoE)", "exec"), namespace)
    return namespace


def dense_layer(x, w13, w2, logits, top_k):
    inter = w13.shape[1] // 2
    weights, experts = torch.topk(torch.softmax(logits.double(), -1), top_k)
    out = torch.zeros(x.shape[0], w2.shape[1], dtype=torch.float64)
    for t in range(x.shape[0]):
        for j in range(top_k):
            e = int(experts[t, j])
            gate, up = (x[t].double() @ w13[e].double().T).split(inter)
            out[t] += weights[t, j] * ((torch.nn.functional.silu(gate) * up)
                                       @ w2[e].double().T)
    return out


@pytest.mark.parametrize("tokens, experts, top_k", [(24, 4, 2), (7, 8, 1), (40, 6, 3)])
def test_the_tutorial_layer_matches_fp64(tokens, experts, top_k):
    torch.manual_seed(tokens)
    hidden, inter = 64, 32
    x = torch.randn(tokens, hidden).bfloat16()
    w13 = (torch.randn(experts, 2 * inter, hidden) / 8).bfloat16()
    w2 = (torch.randn(experts, hidden, inter) / 8).bfloat16()
    logits = torch.randn(tokens, experts)
    out = tutorial_namespace()["moe"](x, w13, w2, logits, top_k)
    ref = dense_layer(x, w13, w2, logits, top_k)
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2
    again = tutorial_namespace()["moe"](x, w13, w2, logits, top_k)
    assert torch.equal(out, again)  # the same bits on a second run

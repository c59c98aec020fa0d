"""gpt-oss's MXFP4 checkpoints in ggc.moe.hf, on the CPU (reference
kernels, as test_hf.py): ggc's dequantiser against transformers' own
(transformers.integrations.mxfp4.convert_moe_packed_tensors, what
from_pretrained runs when it dequantises), bit for bit; a tiny gpt-oss
state dict in the released MXFP4 layout (`experts.*_blocks` [E, rows,
cols/32, 16] and `*_scales` [E, rows, cols/32], uint8) loading to the
same layer as its bf16 dequantisation, and as the model transformers
loads from the same checkpoint on disk; the errors."""

import json
import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
mxfp4 = pytest.importorskip("transformers.integrations.mxfp4")

from ggc.moe import hf  # noqa: E402
import hf_models  # noqa: E402
from hf_models import E, H, I  # noqa: E402
from moe_reference import rel_err, use_reference_kernels  # noqa: E402

PROJS = ("gate_up_proj", "down_proj")


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def transformers_dequantized(blocks, scales):
    """transformers' dequantisation: [E, cols, rows] bf16, the layout of
    GptOssExperts' gate_up_proj and down_proj."""
    return mxfp4.convert_moe_packed_tensors(blocks, scales, dtype=torch.bfloat16)


def bits(t):
    return t.contiguous().view(torch.int16)


def quantize_mxfp4(w):
    """A test-side MXFP4 quantiser (OCP MX: the shared exponent is
    floor(log2(amax)) minus e2m1's largest exponent, 2; magnitudes rounded
    to the nearest e2m1 value, 6 at most): w [E, rows, cols] -> blocks
    [E, rows, cols/32, 16] (low nibble first), scales [E, rows, cols/32]."""
    groups = w.float().unflatten(-1, (-1, 32))
    amax = groups.abs().amax(-1, keepdim=True).clamp(min=2.0 ** -100)
    exponent = (torch.floor(torch.log2(amax)) - 2).clamp(-127, 127)
    scaled = groups / torch.exp2(exponent)
    magnitudes = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6])
    code = (scaled.abs().unsqueeze(-1) - magnitudes).abs().argmin(-1)
    code = (code | ((scaled < 0).long() << 3)).to(torch.uint8)
    blocks = code[..., 0::2] | (code[..., 1::2] << 4)
    return blocks.contiguous(), (exponent.squeeze(-1) + 127).to(torch.uint8)


def mxfp4_checkpoint(model):
    """The model's state dict as gpt-oss is released: each MoE block's
    expert weights in MXFP4 (quantised from the model's random bf16
    ones), the rest (router, biases) bf16."""
    state = {}
    for key, value in model.state_dict().items():
        if key.endswith(PROJS) and ".experts." in key:
            # transformers' [E, cols, rows] is stored as [E, rows, cols] in MXFP4.
            blocks, scales = quantize_mxfp4(value.transpose(1, 2))
            state[key + "_blocks"], state[key + "_scales"] = blocks, scales
        else:
            state[key] = value.detach().clone()
    return state


def dequantized_checkpoint(state):
    """The bf16 checkpoint transformers makes of an MXFP4 one."""
    out = {}
    for key, value in state.items():
        if key.endswith("_blocks"):
            base = key[:-len("_blocks")]
            out[base] = transformers_dequantized(value, state[base + "_scales"])
        elif not key.endswith("_scales"):
            out[key] = value
    return out


def test_dequantize_matches_transformers_bit_for_bit():
    """Every byte of blocks (both nibbles: the 16 e2m1 codes, -0 too) with
    every scale byte but 255 (2**-127 to 2**127, some products overflowing
    to inf), in chunks that split rows and experts: the same bf16 bits as
    transformers' dequantisation, transposed (ggc's [E, rows, cols])."""
    codes = torch.arange(256, dtype=torch.uint8).view(16, 16)
    blocks = codes.expand(255, 3, 16, 16).contiguous()  # [E, rows, G, 16]
    scales = torch.arange(255, dtype=torch.uint8).view(255, 1, 1).expand(255, 3, 16).contiguous()
    want = transformers_dequantized(blocks, scales)
    assert want.shape == (255, 512, 3)
    for chunk in (1 << 22, 1000, 1):
        got = hf.dequantize_mxfp4(blocks, scales, chunk=chunk)
        assert got.dtype == torch.bfloat16 and got.shape == (255, 3, 512)
        assert torch.equal(bits(got.transpose(1, 2)), bits(want)), chunk
    assert torch.isinf(got).any() and (bits(got) == bits(torch.tensor(-0.0).bfloat16())).any()
    # Bytes 0..15 at scale 2**0: the e2m1 values of codes 0..15 from their
    # low nibbles, first; zeros from their high nibbles.
    one = hf.dequantize_mxfp4(codes[:1], torch.tensor([127], dtype=torch.uint8))
    assert one.flatten()[0:32:2].tolist() == [0, .5, 1, 1.5, 2, 3, 4, 6,
                                              -0., -.5, -1, -1.5, -2, -3, -4, -6]
    assert one.flatten()[1:32:2].tolist() == [0.0] * 16
    # UE8M0's 255 is NaN (the OCP MX spec).
    nan = hf.dequantize_mxfp4(blocks[:1, :1], torch.full((1, 1, 16), 255, dtype=torch.uint8))
    assert torch.isnan(nan).all()


def test_mxfp4_checkpoint_loads_as_its_bf16_dequantisation():
    """A whole model's MXFP4 state dict (the released key layout) gives,
    block by block, the layer of the bf16 checkpoint transformers
    dequantises it to, tensor for tensor; that layer runs the block
    holding those weights."""
    model = hf_models.model("gpt_oss", seed=21)
    state = mxfp4_checkpoint(model)
    bf16 = dequantized_checkpoint(state)
    blocks = hf_models.moe_blocks(model, "gpt_oss")
    assert blocks
    for index, block in blocks:
        prefix = f"model.layers.{index}.mlp."
        assert state[prefix + "experts.gate_up_proj_blocks"].shape == (E, 2 * I, H // 32, 16)
        assert state[prefix + "experts.down_proj_scales"].shape == (E, H, I // 32)
        loaded = hf.from_hf(state, model.config, prefix=prefix)
        want = hf.from_hf(bf16, model.config, prefix=prefix)
        assert loaded.w13.dtype == torch.bfloat16 and loaded.w13.is_contiguous()
        for name, tensor in want.state_dict().items():
            assert torch.equal(loaded.state_dict()[name], tensor), name
        # The test's quantiser is near the weights it quantised (e2m1: ~10%):
        # a nibble or dimension order mixed up would be far.
        assert rel_err(loaded.w13.transpose(1, 2), block.experts.gate_up_proj.double()) < 0.2
        assert rel_err(loaded.w2.transpose(1, 2), block.experts.down_proj.double()) < 0.2
        with torch.no_grad():
            block.experts.gate_up_proj.copy_(bf16[prefix + "experts.gate_up_proj"])
            block.experts.down_proj.copy_(bf16[prefix + "experts.down_proj"])
            x = torch.randn(3, 7, H, generator=torch.Generator().manual_seed(index))
            x = x.to(torch.bfloat16)
            assert rel_err(loaded(x), hf_models.block_output(block, x).double()) < 2e-2


def test_checkpoint_on_disk_loads_as_transformers_loads_it(tmp_path):
    """The MXFP4 checkpoint saved as safetensors with gpt-oss's
    quantization_config: transformers' from_pretrained dequantises it on
    the CPU; from_hf on the file's tensors gives the layers
    swap_moe_blocks takes from that model, and the swapped model's logits
    are the loaded model's."""
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM
    model = hf_models.model("gpt_oss", seed=22)
    save_file(mxfp4_checkpoint(model), str(tmp_path / "model.safetensors"),
              metadata={"format": "pt"})
    model.config.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "mxfp4", "dequantize": True,
                                     "modules_to_not_convert": ["model.layers.*.self_attn",
                                                                "model.layers.*.mlp.router",
                                                                "model.embed_tokens", "lm_head"]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    theirs = AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.bfloat16).eval()
    state = load_file(str(tmp_path / "model.safetensors"))
    ids = torch.randint(0, hf_models.VOCAB, (2, 9), generator=torch.Generator().manual_seed(23))
    with torch.no_grad():
        want = theirs(ids).logits.double()
    indices = [i for i, _ in hf_models.moe_blocks(theirs, "gpt_oss")]
    assert hf.swap_moe_blocks(theirs) == len(indices) > 0
    for index, swapped in zip(indices, hf.swapped_layers(theirs)):
        loaded = hf.from_hf(state, theirs.config, prefix=f"model.layers.{index}.mlp.")
        for name, tensor in swapped.state_dict().items():
            assert torch.equal(loaded.state_dict()[name], tensor), name
    with torch.no_grad():
        assert rel_err(theirs(ids).logits, want) < 3e-2


def block_state(seed=24):
    model = hf_models.model("gpt_oss", seed=seed)
    block = hf_models.moe_blocks(model, "gpt_oss")[0][1]
    state = {k: v for k, v in block.state_dict().items() if k.startswith("router.") or
             k.endswith("_bias")}
    for proj in PROJS:
        blocks, scales = quantize_mxfp4(getattr(block.experts, proj).detach().transpose(1, 2))
        state[f"experts.{proj}_blocks"], state[f"experts.{proj}_scales"] = blocks, scales
    return model.config, block, state


def test_mxfp4_errors_name_the_checkpoint_key():
    config, block, state = block_state()
    assert hf.from_hf(state, config).w13.shape == (E, 2 * I, H)

    def fails(error, pattern, **changes):
        broken = {k: v for k, v in {**state, **changes}.items() if v is not None}
        with pytest.raises(error, match=pattern):
            hf.from_hf(broken, config)
    fails(KeyError, r"has 'experts.down_proj_blocks' but no 'experts.down_proj_scales': an "
                    r"MXFP4 checkpoint gives each expert weight its blocks",
          **{"experts.down_proj_scales": None})
    fails(KeyError, r"has 'experts.gate_up_proj_scales' but no 'experts.gate_up_proj_blocks'",
          **{"experts.gate_up_proj_blocks": None})
    fails(KeyError, r"no 'experts.down_proj' \(bf16\) nor its MXFP4 "
                    r"'experts.down_proj_blocks' and 'experts.down_proj_scales'",
          **{"experts.down_proj_blocks": None, "experts.down_proj_scales": None})
    fails(TypeError, r"^the state dict's 'experts.gate_up_proj_blocks' is torch.int8: MXFP4 "
                     r"blocks and scales are uint8$",
          **{"experts.gate_up_proj_blocks": state["experts.gate_up_proj_blocks"].view(torch.int8)})
    fails(TypeError, r"'experts.down_proj_scales' is torch.float32",
          **{"experts.down_proj_scales": state["experts.down_proj_scales"].float()})
    fails(ValueError, re.escape(
        f"the state dict's 'experts.gate_up_proj_blocks' must be [{E}, {2 * I}, {H // 32}, 16] "
        f"(MXFP4 of the [E, {2 * I}, {H}] weight: E = {E} experts, hidden size H = {H} and "
        f"intermediate size I = {I} from the config), got [{E}, {2 * I}, {H // 32 - 1}, 16]"),
        **{"experts.gate_up_proj_blocks": quantize_mxfp4(torch.randn(E, 2 * I, H - 32))[0]})
    fails(ValueError, re.escape(f"the state dict's 'experts.down_proj_scales' must be "
                                f"[{E}, {H}, {I // 32}]"),
          **{"experts.down_proj_scales": state["experts.down_proj_scales"][:, :, :-1]})
    fails(ValueError, r"has both 'experts.gate_up_proj' and its MXFP4 "
                      r"'experts.gate_up_proj_blocks': give one of the two",
          **{"experts.gate_up_proj": block.experts.gate_up_proj.detach()})
    # One weight bf16, the other MXFP4: each is read as it is stored.
    mixed = {**state, "experts.down_proj": block.experts.down_proj.detach(),
             "experts.down_proj_blocks": None, "experts.down_proj_scales": None}
    layer = hf.from_hf({k: v for k, v in mixed.items() if v is not None}, config)
    assert torch.equal(layer.w2, block.experts.down_proj.detach().transpose(1, 2))
    # No expert weights at all (transformers' Triton MXFP4 experts keep
    # theirs out of the state dict): what to do instead.
    fails(KeyError, r"no 'experts.gate_up_proj' \(bf16\) nor gpt-oss's MXFP4 .*"
                    r"Mxfp4Config\(dequantize=True\)",
          **{f"experts.{p}_{part}": None for p in PROJS for part in ("blocks", "scales")})
    odd = hf_models.config("gpt_oss")
    odd.hidden_size = H + 16
    with pytest.raises(ValueError, match=r"'experts.gate_up_proj_blocks': MXFP4 experts need "
                                         r"their input dimension \(272, from the config\) a "
                                         r"multiple of 32"):
        hf.from_hf(state, odd)


def test_dequantize_mxfp4_checks_its_arguments():
    blocks = torch.zeros(2, 3, 4, 16, dtype=torch.uint8)
    scales = torch.zeros(2, 3, 4, dtype=torch.uint8)
    assert hf.dequantize_mxfp4(blocks, scales).shape == (2, 3, 128)
    with pytest.raises(TypeError, match=r"uint8, got torch.int8 and torch.uint8"):
        hf.dequantize_mxfp4(blocks.view(torch.int8), scales)
    with pytest.raises(ValueError, match=re.escape("blocks [..., G, 16] take scales [..., G]: "
                                                   "got blocks [2, 3, 4, 16] and scales "
                                                   "[2, 3, 5]")):
        hf.dequantize_mxfp4(blocks, torch.zeros(2, 3, 5, dtype=torch.uint8))
    with pytest.raises(ValueError, match=r"got blocks \[2, 3, 4, 8\]"):
        hf.dequantize_mxfp4(blocks[..., :8], scales)

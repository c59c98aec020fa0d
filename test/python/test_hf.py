"""ggc.moe.hf on the CPU (reference kernels, as test_moe.py): each
family's transformers MoE block against ggc's MoE holding its weights, the
state-dict layouts (transformers 5's fused experts, per-expert checkpoint
keys, FP8 checkpoints) and the swap of a whole model's blocks.
test/gpu/test_hf_gpu.py runs the blocks and a generation on the GPU."""

import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from ggc import moe  # noqa: E402
from ggc.moe import hf  # noqa: E402
import hf_models  # noqa: E402
from hf_models import FAMILIES, H  # noqa: E402
from moe_reference import rel_err, use_reference_kernels  # noqa: E402


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def tokens(seed, shape=(3, 7)):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, H, generator=gen).to(torch.bfloat16)


@pytest.mark.parametrize("family", FAMILIES)
def test_block_matches_transformers(family):
    model = hf_models.model(family, seed=1)
    for _, block in hf_models.moe_blocks(model, family):
        layer = hf.from_hf(block, model.config)
        x = tokens(2)
        with torch.no_grad():
            want = hf_models.block_output(block, x).double()
            got = layer(x)
        assert got.shape == x.shape
        # The experts' bf16 roundings on both sides (transformers rounds each
        # expert's output and sums in bf16; ggc sums in f32).
        assert rel_err(got, want) < 2e-2
        # The routing, the biases and the shared experts all matter here.
        assert rel_err(got, torch.zeros_like(want) + want.mean()) > 0.5


@pytest.mark.parametrize("family", ["mixtral", "qwen3_moe", "deepseek_v3"])
def test_per_expert_checkpoint_keys_load_the_same_layer(family):
    model = hf_models.model(family, seed=3)
    index, block = hf_models.moe_blocks(model, family)[0]
    fused = hf.from_hf(block, model.config)
    gate, up, down = hf.FAMILIES[family].legacy
    prefix = f"model.layers.{index}.mlp."
    legacy = {prefix + "gate.weight": block.gate.weight.detach()}
    if family == "deepseek_v3":
        legacy[prefix + "gate.e_score_correction_bias"] = block.gate.e_score_correction_bias
        for name in ("gate_proj", "up_proj", "down_proj"):
            legacy[f"{prefix}shared_experts.{name}.weight"] = getattr(
                block.shared_experts, name).weight.detach()
    for e in range(hf_models.E):
        g, u = block.experts.gate_up_proj[e].detach().chunk(2)
        legacy[f"{prefix}experts.{e}.{gate}.weight"] = g
        legacy[f"{prefix}experts.{e}.{up}.weight"] = u
        legacy[f"{prefix}experts.{e}.{down}.weight"] = block.experts.down_proj[e].detach()
    legacy["model.norm.weight"] = torch.ones(H)  # another layer's key: ignored
    loaded = hf.from_hf(legacy, model.config, prefix=prefix)
    for name, tensor in fused.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], tensor), name


def test_fused_layout_is_shared_not_copied():
    model = hf_models.model("mixtral", seed=4)
    block = hf_models.moe_blocks(model, "mixtral")[0][1]
    layer = hf.from_hf(block, model.config)
    assert layer.w13.data_ptr() == block.experts.gate_up_proj.data_ptr()
    assert layer.w2.data_ptr() == block.experts.down_proj.data_ptr()


def test_a_frozen_block_stays_frozen():
    """A block frozen before the swap (a PEFT setup) gives a frozen layer,
    which shares its storage: it came out trainable, so an optimiser would
    have updated the frozen weights. A partly frozen block is refused."""
    model = hf_models.model("mixtral", seed=4)
    block = hf_models.moe_blocks(model, "mixtral")[0][1]
    block.requires_grad_(False)
    layer = hf.from_hf(block, model.config)
    assert not any(p.requires_grad for p in layer.parameters())
    block.gate.weight.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="partly frozen"):
        hf.from_hf(block, model.config)
    block.requires_grad_(True)
    assert all(p.requires_grad for p in hf.from_hf(block, model.config).parameters())


def test_deepseek_fp8_checkpoint_loads_its_block_scales():
    """DeepSeek-V3's released FP8 layout: per-expert e4m3 weights with f32
    128x128 `weight_scale_inv`, shared experts too."""
    model = hf_models.model("deepseek_v3", seed=5)
    index, block = hf_models.moe_blocks(model, "deepseek_v3")[0]
    state = {"gate.weight": block.gate.weight.detach(),
             "gate.e_score_correction_bias": block.gate.e_score_correction_bias}

    def put(base, weight):
        q, s = moe.quantize_weights(weight.detach().unsqueeze(0))
        state[base + ".weight"], state[base + ".weight_scale_inv"] = q[0], s[0]
    for name in ("gate_proj", "up_proj", "down_proj"):
        put(f"shared_experts.{name}", getattr(block.shared_experts, name).weight)
    for e in range(hf_models.E):
        g, u = block.experts.gate_up_proj[e].chunk(2)
        put(f"experts.{e}.gate_proj", g)
        put(f"experts.{e}.up_proj", u)
        put(f"experts.{e}.down_proj", block.experts.down_proj[e])
    loaded = hf.from_hf(state, model.config)
    quantized = hf.from_hf(block, model.config).quantize_fp8()
    assert loaded.w13.dtype == torch.float8_e4m3fn
    for name in ("w13", "w2", "w13_scale", "w2_scale"):
        a, b = getattr(loaded, name), getattr(quantized, name)
        assert torch.equal(a.float(), b.float()), name
    x = tokens(6)
    with torch.no_grad():
        want = hf_models.block_output(block, x).double()
        assert rel_err(loaded(x), want) < 8e-2  # e4m3 weights and activations


@pytest.mark.parametrize("family", FAMILIES)
def test_swap_replaces_every_block(family):
    model = hf_models.model(family, seed=7)
    ids = torch.randint(0, hf_models.VOCAB, (2, 9), generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        want = model(ids).logits.double()
    blocks = len(hf_models.moe_blocks(model, family))
    assert hf.swap_moe_blocks(model) == blocks
    assert not hf_models.moe_blocks(model, family)
    assert len(hf.swapped_layers(model)) == blocks
    with torch.no_grad():
        got = model(ids).logits
    assert rel_err(got, want) < 3e-2


def test_router_jitter_is_refused_in_training():
    """Mixtral's router_jitter_noise jitters the router's inputs in training;
    the swapped layer does not, so it refuses to train with it (it ran
    without the noise); in eval mode the block ignores it too."""
    model = hf_models.model("mixtral", seed=7)
    model.config.router_jitter_noise = 0.5
    hf.swap_moe_blocks(model)
    ids = torch.randint(0, hf_models.VOCAB, (2, 9), generator=torch.Generator().manual_seed(8))
    model.eval()
    with torch.no_grad():
        model(ids)
    model.train()
    with pytest.raises(NotImplementedError, match="router_jitter_noise = 0.5"):
        model(ids)


def test_errors_name_what_is_wrong():
    model = hf_models.model("mixtral", seed=9)
    block = hf_models.moe_blocks(model, "mixtral")[0][1]
    config = model.config
    with pytest.raises(ValueError, match=r"config.model_type must be one of .*'llama'"):
        hf.from_hf(block, type("C", (), {"model_type": "llama"})())
    with pytest.raises(KeyError, match="no key of the state dict starts with prefix 'x.'"):
        hf.from_hf(block.state_dict(), config, prefix="x.")
    state = dict(block.state_dict())
    del state["experts.down_proj"]
    with pytest.raises(KeyError, match="no 'experts.down_proj'"):
        hf.from_hf(state, config)
    gpt = hf_models.model("gpt_oss", seed=9)
    mx = {k: v for k, v in hf_models.moe_blocks(gpt, "gpt_oss")[0][1].state_dict().items()
          if not k.startswith("experts.")}
    mx["experts.gate_up_proj_blocks"] = torch.zeros(1)  # test_hf_mxfp4.py has the rest
    with pytest.raises(KeyError, match="'experts.gate_up_proj_blocks' but no "
                                       "'experts.gate_up_proj_scales': an MXFP4 checkpoint"):
        hf.from_hf(mx, gpt.config)
    with pytest.raises(TypeError, match="must be an nn.Module or a state dict"):
        hf.from_hf([1], config)
    with pytest.raises(TypeError, match="the router weight is torch.float16: ggc's MoE "
                                        "layers are bfloat16"):
        hf.from_hf({k: v.half() for k, v in block.state_dict().items()}, config)
    # float32 loads on the CPU (ggc's reference backend), not for CUDA.
    with pytest.raises(TypeError, match=r"the router weight is torch.float32 on cuda: ggc's "
                                        r"MoE layers are bfloat16 \(float32 on the CPU only"):
        hf.from_hf({k: v.float() for k, v in block.state_dict().items()}, config,
                   device="cuda")
    with pytest.raises(TypeError, match=r"^the state dict's 'experts.down_proj' must be a "
                                        r"tensor, got list$"):
        hf.from_hf({**block.state_dict(), "experts.down_proj": [1, 2]}, config)


@pytest.mark.parametrize("family", ["mixtral", "deepseek_v3"])
def test_expert_weights_of_another_dtype_are_refused(family):
    """int8 experts were promoted into a layer of bf16 zeros by the
    concatenation with the shared experts, with no error (DeepSeek-V3);
    FP8 experts without their scales failed in torch's promotion."""
    model = hf_models.model(family, seed=3)
    block = hf_models.moe_blocks(model, family)[0][1]
    state = dict(block.state_dict())
    as_int8 = {k: (v.to(torch.int8) if k.startswith("experts.") else v)
               for k, v in state.items()}
    with pytest.raises(TypeError, match=r"^the gate/up weights of experts.gate_up_proj and "
                                        r"experts.down_proj are torch.int8: ggc's MoE layers "
                                        r"take bfloat16 experts"):
        hf.from_hf(as_int8, model.config)
    as_fp8 = {k: (v.to(torch.float8_e4m3fn) if k.startswith("experts.") else v)
              for k, v in state.items()}
    with pytest.raises(ValueError, match=r"are float8_e4m3fn without their weight_scale_inv"):
        hf.from_hf(as_fp8, model.config)


@pytest.mark.parametrize("family", ["mixtral", "qwen3_moe", "gpt_oss"])
def test_swapped_blocks_record_router_logits(family):
    """output_router_logits records the swapped blocks' logits, as it did
    the replaced routers' (so the auxiliary loss is the same), also when
    the model had recorded outputs before the swap."""
    model = hf_models.model(family, seed=12)
    ids = torch.randint(0, hf_models.VOCAB, (2, 9), generator=torch.Generator().manual_seed(13))
    with torch.no_grad():
        want = model(ids, output_router_logits=True)
    assert len(want.router_logits) == len(hf_models.moe_blocks(model, family))
    hf.swap_moe_blocks(model)
    with torch.no_grad():
        got = model(ids, output_router_logits=True)
    assert len(got.router_logits) == len(want.router_logits)
    for mine, theirs in zip(got.router_logits, want.router_logits):
        assert mine.shape == theirs.shape
        assert rel_err(mine, theirs.double()) < 1e-2
    assert got.aux_loss.item() == pytest.approx(want.aux_loss.item(), rel=2e-2)
    fresh = hf_models.model(family, seed=12)
    hf.swap_moe_blocks(fresh)  # swapped before any recording
    with torch.no_grad():
        again = fresh(ids, output_router_logits=True)
    assert len(again.router_logits) == len(want.router_logits)
    assert again.aux_loss.item() == pytest.approx(want.aux_loss.item(), rel=2e-2)


def test_swapped_model_trains_like_the_original():
    """A few AdamW steps of a swapped Mixtral, its auxiliary loss included,
    follow the unswapped model's loss curve within bf16 noise (hf_models
    says how near)."""
    hf_models.assert_trains_like_the_original("mixtral", "cpu", hf.swap_moe_blocks)


@pytest.mark.parametrize("family", ["deepseek_v3", "gpt_oss"])
def test_fused_experts_of_the_wrong_shape_are_named(family):
    """A fused expert tensor off the config's shape is named by its key
    with the shape the config gives (DeepSeek-V3's failed in torch's cat
    with the shared experts; gpt-oss stores both transposed)."""
    model = hf_models.model(family, seed=10)
    state = dict(hf_models.moe_blocks(model, family)[0][1].state_dict())
    e, h, i = hf_models.E, hf_models.H, hf_models.I
    want = [e, h, 2 * i] if family == "gpt_oss" else [e, 2 * i, h]
    state["experts.gate_up_proj"] = state["experts.gate_up_proj"][..., :-8]
    with pytest.raises(ValueError, match=re.escape(
            f"the state dict's 'experts.gate_up_proj' must be {want} (E = {e} experts, "
            f"hidden size H = {h} and intermediate size I = {i} from the config), got")):
        hf.from_hf(state, model.config)

"""Any timm model of a supported family (issue #12): block splits read from the model's own structure,
checked against the architecture counted independently, on seeded random weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
import timm
import torch
from captum.attr import LayerAttribution, LayerGradCam
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from streamlit.testing.v1 import AppTest
from timm.layers import Attention, AttentionRope
from timm.models.beit import Attention as BeitAttention
from timm.models.eva import EvaAttention
from timm.models.maxxvit import Attention2d, AttentionCl
from timm.models.mobilevit import LinearSelfAttention
from timm.models.swin_transformer import WindowAttention

import engine
from app.backend.service import Service, picked_models
from engine.analyses.gradcam import cam_block
from engine.models.registry import LoadedModel
from engine.models.timm_blocks import timm_split
from tests.conftest import ROOT
from tests.helpers.gradio_http import gradio_client
from tests.helpers.lesions import check_lesion

pytestmark = pytest.mark.usefixtures("one_thread")

ATTENTION = (
    Attention,
    AttentionRope,
    BeitAttention,
    EvaAttention,
    WindowAttention,
    Attention2d,
    AttentionCl,
    LinearSelfAttention,
)
UNFOLDED = ".transformer."  # MobileViT's units on unfolded patches: maps over the patch grid, half the side


def attention_modules(module: torch.nn.Module) -> int:
    return sum(isinstance(m, ATTENTION) for m in module.modules())


@pytest.mark.parametrize(
    "name, family, attention",
    [
        ("deit_tiny_distilled_patch16_224", "vit", "global"),  # class and distillation tokens
        ("beit_base_patch16_224", "beit", "global"),  # relative position bias
        ("eva02_tiny_patch14_336", "eva", "global"),  # rotary embeddings
        ("resnet18", "resnet", None),
        ("convnext_atto", "convnext", None),
        ("swin_s3_tiny_224", "swin", "window"),
        ("pit_ti_distilled_224", "pit", "global"),
        ("coatnet_nano_rw_224", "maxxvit", None),
        ("maxvit_pico_rw_256", "maxxvit", None),
        ("mobilevit_xxs", "byobnet", None),
        ("mobilevitv2_050", "byobnet", None),
    ],
)
def test_block_split_follows_the_architecture(photos, name, family, attention):
    model = engine.create_model(name, "random", seed=0, device="cpu")
    assert (model.spec.label, model.spec.family, model.spec.attention) == (name, family, attention)
    specs = model.spec.blocks(model.module)
    result = engine.Analyzer(model).attribute(photos[:1])
    kinds = [block.kind for block in result.blocks]
    assert len(kinds) == len(specs) and kinds[0] == "embed" and "embed" not in kinds[1:]

    # every attention module is an msa unit, unless it sits in a block that subsamples (a pool unit)
    pooled = sum(attention_modules(s.module) for s in specs if s.kind == "pool")
    assert kinds.count("msa") == attention_modules(model.module) - pooled
    assert kinds.count("msa") > 0 or family in ("resnet", "convnext")
    for i, spec in enumerate(specs):  # a transformer block's msa unit comes with its mlp unit
        if spec.kind == "msa" and spec.residual_parent is not None:
            assert kinds[i + 1] == "mlp"

    # pool units are exactly where the feature map shrinks, once per halving of its side
    sides = [(i, b.shape[-1]) for i, b in enumerate(result.blocks) if UNFOLDED not in b.name]
    shrinks = [i for (_, before), (i, side) in zip(sides, sides[1:]) if side < before]
    assert shrinks == [i for i, kind in enumerate(kinds) if kind == "pool"]
    assert len(shrinks) == round(math.log2(sides[0][1] / sides[-1][1]))

    last = len(kinds) - 1
    for i, block in enumerate(result.blocks):
        assert all(math.isfinite(v) for v in block.fourier) and block.fourier[0] == 0, block.name
        assert math.isfinite(block.variance) and block.variance > 0, block.name
        assert block.normalized_depth == i / last
    if attention is None:
        assert result.attention is None
    else:
        assert len(result.attention.layers) == kinds.count("msa")


@pytest.mark.parametrize("name", ["resnet50", "vit_tiny_patch16_224", "swin_tiny_patch4_window7_224", "pit_ti_224"])
def test_the_generic_split_is_the_registered_one(name):
    model = timm.create_model(name, device="meta")
    family, split, attention = timm_split(model)
    spec = engine.get_spec(name)
    assert (family, attention) == (spec.family, spec.attention)
    assert split(model) == spec.blocks(model)


def softmax_maps(model: LoadedModel, x: torch.Tensor, prefix: int) -> list[torch.Tensor]:
    """CLS-to-patch attention of every block, read from timm's own unfused softmax."""
    probs, handles = [], []
    for block in model.module.blocks:
        block.attn.fused_attn = False
        handles.append(block.attn.attn_drop.register_forward_hook(lambda m, args, out: probs.append(out)))
    with torch.inference_mode():
        model.module(x)
    for handle in handles:
        handle.remove()
    side = math.isqrt(probs[0].shape[-1] - prefix)
    return [p[0, :, 0, prefix:].reshape(-1, side, side) for p in probs]


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.parametrize(
    "name",
    [
        "deit_tiny_distilled_patch16_224",  # two prefix tokens
        "eva02_tiny_patch14_336",  # rotary embeddings
        "beit_base_patch16_224",  # relative position bias
    ],
)
def test_recorded_attention_is_the_models_softmax(photos, name):
    """The maps read from each block's own softmax, for each family's prefix tokens and grid (the recording
    itself is checked against an explicit q k^T softmax in test_engine_reference)."""
    model = engine.create_model(name, "random", seed=1, device="cpu")
    assert model.spec.attention == "global"
    analyzer = engine.Analyzer(model)
    result = analyzer.attribute(photos[:1])
    prefix = model.module.num_prefix_tokens
    expected = softmax_maps(model, analyzer.inputs(photos[:1]), prefix)
    assert len(result.attention.layers) == len(expected)
    for layer, maps in zip(result.attention.layers, expected):
        np.testing.assert_allclose(layer.maps[0], maps.numpy(), rtol=1e-4, atol=1e-6, err_msg=layer.name)


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "efficientnet_b0",
            "timm model 'efficientnet_b0': its class EfficientNet is in none of the supported families",
        ),
        ("mobilenetv3_small_100", "its class MobileNetV3 is in none of the supported families"),
        ("no_such_model", "unknown model 'no_such_model'.*nor a timm model.*supported families"),
        ("vit_small_patch16_18x2_224", "ParallelThingsBlock blocks have no separate msa and mlp residual units"),
        ("eva02_tiny_patch14_224", "has no classifier head"),
    ],
)
def test_unsupported_models_are_refused_naming_the_supported_families(name, message):
    with pytest.raises(engine.UnknownModelError, match=message) as error:
        engine.create_model(name, "random", device="cpu")
    if "families" in message:
        assert all(family in str(error.value) for family in engine.supported_families())
    assert name not in engine.list_models()


@pytest.mark.parametrize("name", ["mobilevitv2_050", "maxvit_pico_rw_256"])
def test_lesion_switches_off_a_new_familys_msa_unit(photos, name):
    model = engine.create_model(name, "random", seed=2, device="cpu")
    check_lesion(model, [s.kind for s in model.spec.blocks(model.module)].index("msa"), photos)


def test_gradcam_is_captums_on_a_cnn(photos):
    model = engine.create_model("resnet18", "random", seed=3, device="cpu")
    result = engine.GradCam(model).attribute(photos[0], 7)
    assert (result.target, result.method) == (7, "Grad-CAM")
    cam = result.map
    x = model.transform(photos[0]).unsqueeze(0)
    expected = LayerGradCam(model.module, model.module.layer4[-1]).attribute(x, target=7, relu_attributions=True)
    expected = LayerAttribution.interpolate(expected, (224, 224), interpolate_mode="bilinear")[0, 0].detach()
    np.testing.assert_allclose(cam, (expected / expected.max()).numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "name, block",
    [
        ("eva02_tiny_patch14_336", "blocks.10.mlp"),  # the head reads the class token: the last block's input
        ("maxvit_pico_rw_256", "stages.3.blocks.1.attn_grid.mlp"),  # channels-last
        ("mobilevitv2_050", "stages.4.1"),
    ],
)
def test_gradcam_works_on_token_and_hybrid_models(photos, name, block):
    model = engine.create_model(name, "random", seed=0, device="cpu")
    assert cam_block(model.spec.blocks(model.module)).name == block
    cam = engine.GradCam(model).attribute(photos[0]).map
    assert cam.shape == model.transform(photos[0]).shape[1:] and np.isfinite(cam).all() and cam.max() == 1


def test_the_service_runs_any_timm_model_next_to_registered_ones(sample_photo):
    assert picked_models(["resnet50"], " convnext_atto, mobilevit_xxs resnet50 ") == [
        "resnet50",
        "convnext_atto",
        "mobilevit_xxs",
    ]
    assert picked_models(["resnet50"], "") == ["resnet50"]
    service = Service(device="cpu")
    (run,) = service.analyze(sample_photo, ["convnext_atto"], "random")
    assert run.result.label == "convnext_atto" and run.gradcam.shape == run.image.shape[:2]
    with pytest.raises(engine.UnknownModelError, match="supported families"):
        service.analyze(sample_photo, ["efficientnet_b0"], "random")


def test_the_app_server_takes_a_typed_timm_name(server_url, sample_photo):
    client = gradio_client(server_url)
    out = client.predict(handle_file(str(sample_photo)), ["mobilevit_xxs"], "random", api_name="/analyze")
    (model,) = out["models"]
    assert model["name"] == "mobilevit_xxs" and model["blocks"][0]["kind"] == "embed"
    assert {"conv", "pool", "msa", "mlp"} <= {b["kind"] for b in model["blocks"]}
    with pytest.raises(AppError, match="MobileNetV3 is in none of the supported families"):
        client.predict(handle_file(str(sample_photo)), ["mobilenetv3_small_100"], "random", api_name="/analyze")
    with pytest.raises(
        AppError, match="eva_giant_patch14_224 has 1013 M parameters; this server loads models of up to 350 M"
    ):
        client.predict(handle_file(str(sample_photo)), ["eva_giant_patch14_224"], "random", api_name="/analyze")
    outputs = client.predict(
        handle_file(str(sample_photo)), [], "random", "inferno", 0.6, True, "convnext_atto", api_name="/run"
    )
    assert "Analyzed 1 model" in outputs[0]


def test_streamlit_takes_a_typed_timm_name(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # offline, as the app's own tests run it
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=300).run()
    at.multiselect(key="models").set_value([])
    at.radio(key="weights").set_value("random")
    at.text_input(key="typed_models").set_value("mobilenetv3_small_100")
    at.button(key="analyze").click().run()
    assert any("supported families" in e.value for e in at.error) and not at.exception
    at.text_input(key="typed_models").set_value("convnext_atto")
    at.button(key="analyze").click().run()
    assert not at.error and [run.result.name for run in at.session_state["runs"]] == ["convnext_atto"]


def test_random_layer_scales_let_every_branch_change_the_feature_maps(photos):
    """ConvNeXt's layer scales start at 1e-6: without full_branches each random block passes its input on
    almost unchanged; with them the blocks change the feature-map variance by about as much as timm's
    small random init allows."""

    def variance_changes(model: LoadedModel) -> list[float]:
        blocks = engine.Analyzer(model).attribute(photos[:1]).blocks
        return [abs(b.variance / a.variance - 1) for a, b in zip(blocks, blocks[1:]) if b.kind == "conv"]

    model = engine.create_model("convnext_atto", "random", device="cpu")
    assert all(bool((p == 1).all()) for n, p in model.module.named_parameters() if n.endswith(".gamma"))
    with_scales = variance_changes(model)
    torch.manual_seed(0)
    plain = LoadedModel(model.spec, timm.create_model("convnext_atto").eval(), "random", model.device, model.transform)
    without = variance_changes(plain)
    assert float(np.median(without)) < 1e-5 < 1e-3 < float(np.median(with_scales)), (without, with_scales)

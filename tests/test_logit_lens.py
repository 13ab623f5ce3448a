"""The logit lens (engine.analyses.logit_lens): at the last block it is the model's own output for every
family; at an inner block of a ViT it is the head on that block's class token, computed by hand; stage
models are read only where the head fits, and say so."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import engine
from engine.analyses.logit_lens import LogitLens

FAMILIES = [
    "vit_cifar",
    "alternet",
    "preact_resnet",
    "vit_tiny_patch16_224",
    "resnet18",
    "swin_tiny_patch4_window7_224",
]


@pytest.mark.parametrize("name", FAMILIES)
def test_the_last_block_is_the_models_own_output(name, photos):
    model = engine.create_model(name, "random", seed=2, device="cpu")
    result = LogitLens(model).attribute(photos[0])
    with torch.no_grad():
        probs = model.module(model.transform(photos[0]).unsqueeze(0)).float().softmax(-1)[0]
    last = result.blocks[-1]
    assert last.applies and result.final_class == int(probs.argmax())
    top = probs.topk(5)
    np.testing.assert_allclose([p.probability for p in last.top5], top.values.numpy(), atol=1e-5)
    assert [p.index for p in last.top5] == top.indices.tolist()
    assert last.final_probability == pytest.approx(float(probs.max()), abs=1e-5)


def test_an_inner_vit_block_is_the_head_on_its_class_token(photos):
    model = engine.create_model("vit_cifar", "random", seed=3, device="cpu")
    result = LogitLens(model).attribute(photos[1])
    net = model.module
    x = model.transform(photos[1]).unsqueeze(0)
    with torch.no_grad():
        tokens = net.norm_pre(net.patch_drop(net._pos_embed(net.patch_embed(x))))
        for block in net.blocks[:3]:
            tokens = block(tokens)
        probs = net.head(net.norm(tokens)[:, 0]).softmax(-1)[0]
        patch = net.head(net.norm(tokens[0, 1:]))[:, result.final_class]
    after_third = next(b for b in result.blocks if b.name == "blocks.2.mlp")  # the third block's output
    assert after_third.final_probability == pytest.approx(float(probs[result.final_class]), abs=1e-5)
    np.testing.assert_allclose(result.patch_logits[after_third.index], patch.reshape(8, 8).numpy(), atol=1e-4)
    assert all(b.applies for b in result.blocks) and not result.note


def test_stage_models_are_read_where_the_head_fits_and_say_so(photos):
    model = engine.create_model("alternet", "random", seed=1, device="cpu")
    result = LogitLens(model).attribute(photos[0])
    read = [b.name for b in result.blocks if b.applies]
    assert read and all(name.startswith("stages.3") for name in read)
    assert "cannot be read" in result.note and all(m is None for m in result.patch_logits)
    assert result.to_json()["blocks"][0]["applies"] is False


def test_the_compare_tab_shows_when_the_answer_appears_for_every_model(one_thread, sample_photo):
    from app.backend.service import Service
    from app.tabs.compare import CompareTab, Look

    service = Service()
    page = CompareTab(service).analyze(str(sample_photo), ["vit_cifar", "preact_resnet"], "", "random", Look())
    vit, resnet = (run.lens for run in page.runs)
    curves = {trace.name: trace for trace in page.lens.data if trace.mode == "lines+markers"}
    assert len(curves) == 2 and list(curves["ViT/4 (CIFAR, 1.6 M params) (random weights)"].y) == [
        b.final_probability for b in vit.blocks
    ]
    assert sum(y is not None for y in curves["PreAct ResNet (CIFAR, 1.8 M params) (random weights)"].y) == 4
    assert page.lens_here.count("the head's top-1 from") == 2 and "reads only the last 4 blocks" in page.lens_here
    assert ("When the answer appears (logit lens)", "logit-lens") in page.figure_choices
    json_out = service.analysis_json(page.runs)
    assert json_out["models"][0]["logit_lens"]["final_class"] == page.runs[0].result.predictions[0][0].index


def test_the_per_patch_lens_is_a_map_method_for_token_models_with_the_layer_slider(one_thread, sample_photo):
    from app.backend.service import Service
    from app.tabs.compare import CompareTab, Look
    from app.views.attention import LENS, ViewOptions, select_map

    compare = CompareTab(Service())
    page = compare.analyze(str(sample_photo), ["vit_cifar", "preact_resnet"], "", "random", Look())
    vit, resnet = page.runs
    assert LENS in page.columns[0].methods and LENS not in page.columns[1].methods  # the CNN has no tokens
    passes = compare.service.forward_passes
    names = [block.name for block in vit.lens.blocks]
    for layer in (2, 8):  # the CIFAR ViT's 8 blocks: the lens after each block's MLP
        selected = select_map(vit, ViewOptions(layer=layer, method=LENS))
        np.testing.assert_array_equal(selected.values, vit.lens.patch_logits[names.index(f"blocks.{layer - 1}.mlp")])
        assert f"after block {layer}/8" in selected.caption and vit.lens.final_label in selected.caption
        image, _ = compare.view(vit, ViewOptions(layer=layer, method=LENS), Look())
        assert image.ndim == 3
    assert compare.service.forward_passes == passes  # recorded in the one pass: a redraw

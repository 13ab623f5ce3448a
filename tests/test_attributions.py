"""The attribution methods (engine.analyses.attributions) against independent computations: IG's completeness,
Occlusion against occluded copies made by hand, Saliency against autograd, Grad-CAM on a ViT against the
reshaped tokens, gradient x attention against an explicit loop over the layers; unsupported pairs named; the
quick defaults against finer settings on the trained CIFAR models, and what each method says it costs."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine.analyses.attributions import (
    METHODS,
    Cost,
    Estimate,
    GradientAttention,
    IntegratedGradients,
    Occlusion,
    Saliency,
    SmoothGrad,
    black,
    estimate,
    occlusion_grid,
    pass_seconds,
    unsupported,
)
from engine.data.cifar_subset import subset


@pytest.fixture(scope="module")
def vit():
    return engine.create_model("vit_cifar", "random", seed=4, device="cpu")


@pytest.fixture(scope="module")
def image() -> np.ndarray:
    images, _ = subset("test")
    return images[3]


def logits_of(model, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.module(x).float()


@pytest.mark.slow  # over 3 s on the 2-core machine
def test_integrated_gradients_are_complete_within_captums_delta(vit, image):
    result = IntegratedGradients(vit, steps=64).attribute(image, 3)
    x = vit.transform(engine.load_image(image)).unsqueeze(0)
    difference = float(logits_of(vit, x)[0, 3] - logits_of(vit, black(vit, x))[0, 3])
    assert result.target == 3 and result.delta is not None
    assert result.total == pytest.approx(difference, abs=result.delta + 1e-4)
    assert result.delta < 0.05 * abs(difference) + 1e-3  # 64 steps converge on this model
    assert result.map.shape == (32, 32) and result.map.max() == 1 and result.map.min() >= 0


def test_occlusion_is_the_logit_drop_of_each_occluded_copy(vit, image):
    default = Occlusion(vit)
    assert (default.window, default.stride) == occlusion_grid(vit) == (8, 4)  # whole 4 px patches, 7 x 7 windows
    assert default.cost() == Cost(forward=50, backward=0, passes=8)  # the clean input, then 49 copies, 8 a pass
    occlusion = Occlusion(vit, window=4, stride=4)  # one CIFAR-ViT patch a window, side by side
    result = occlusion.attribute(image, 7)
    x = vit.transform(engine.load_image(image)).unsqueeze(0)
    clean = logits_of(vit, x)[0, 7]
    base = black(vit, x)
    for top, left in ((0, 0), (12, 20), (28, 28)):
        hidden = x.clone()
        hidden[..., top : top + 4, left : left + 4] = base[..., top : top + 4, left : left + 4]
        drop = float(clean - logits_of(vit, hidden)[0, 7])
        window = result.raw[top : top + 4, left : left + 4]
        np.testing.assert_allclose(window, drop, rtol=1e-3, atol=1e-4)


def test_saliency_is_the_largest_absolute_input_gradient(vit, image):
    result = Saliency(vit).attribute(image)
    x = vit.transform(engine.load_image(image)).unsqueeze(0).requires_grad_()
    logits = vit.module(x)
    (grad,) = torch.autograd.grad(logits[0, int(logits.argmax())], x)
    assert result.target == int(logits.argmax())
    np.testing.assert_allclose(result.raw, grad[0].abs().amax(0).numpy(), rtol=1e-4, atol=1e-7)


def test_smoothgrad_averages_noisy_saliency_and_counts_its_passes(vit, image):
    passes = vit.forward_passes
    ticks = []
    result = SmoothGrad(vit, samples=8, batch_size=4).attribute(image, 1, lambda *tick: ticks.append(tick))
    assert vit.forward_passes - passes == 2  # 8 noisy copies, 4 per pass
    assert ticks == [(0, 2), (1, 2), (2, 2)]  # before each pass (a batch boundary), and at the end
    assert result.map.shape == (32, 32) and np.isfinite(result.raw).all()


def test_gradcam_on_a_vit_is_the_hand_computation_on_the_patch_tokens(vit, image):
    result = engine.GradCam(vit).attribute(image, 2)
    x = vit.transform(engine.load_image(image)).unsqueeze(0)
    kept = {}
    handle = vit.module.blocks[-1].register_forward_pre_hook(lambda m, args: kept.update(tokens=args[0]))
    logits = vit.module(x)
    handle.remove()
    (grad,) = torch.autograd.grad(logits[0, 2], kept["tokens"])
    side = 8  # 64 patch tokens after the class token
    tokens = kept["tokens"][0, 1:].detach().T.reshape(1, -1, side, side)
    grads = grad[0, 1:].T.reshape(1, -1, side, side)
    cam = (grads.mean(dim=(2, 3), keepdim=True) * tokens).sum(1, keepdim=True).relu()
    cam = F.interpolate(cam, size=(32, 32), mode="bilinear")[0, 0]
    np.testing.assert_allclose(result.map, (cam / cam.max()).numpy(), rtol=1e-4, atol=1e-6)


def test_gradient_x_attention_is_an_explicit_loop_over_the_layers(vit, image):
    net = vit.module
    fused = [block.attn.fused_attn for block in net.blocks]
    result = GradientAttention(vit).attribute(image, 5)
    assert [block.attn.fused_attn for block in net.blocks] == fused  # the fused kernels are back
    x = vit.transform(engine.load_image(image)).unsqueeze(0)
    tokens = net.norm_pre(net.patch_drop(net._pos_embed(net.patch_embed(x))))
    attentions = []
    for block in net.blocks:  # the forward written out, every softmax formed here
        attn = block.attn
        b, n, c = tokens.shape
        qkv = attn.qkv(block.norm1(tokens)).reshape(b, n, 3, attn.num_heads, c // attn.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = attn.q_norm(qkv[0]), attn.k_norm(qkv[1]), qkv[2]
        a = ((q * attn.scale) @ k.transpose(-2, -1)).softmax(-1)
        attentions.append(a)
        mixed = attn.proj(attn.norm((a @ v).transpose(1, 2).reshape(b, n, c)))
        tokens = tokens + block.ls1(mixed)
        tokens = tokens + block.ls2(block.mlp(block.norm2(tokens)))
    logits = net.forward_head(net.norm(tokens))
    torch.testing.assert_close(logits, logits_of(vit, x), rtol=1e-4, atol=1e-4)  # the same network
    grads = torch.autograd.grad(logits[0, 5], attentions)
    relevance = torch.eye(65)
    for a, g in zip(attentions, grads):
        relevance = relevance + (g * a).clamp_min(0).mean(1)[0].detach() @ relevance
    row = relevance[0, 1:].reshape(1, 1, 8, 8)
    expected = F.interpolate(row, size=(32, 32), mode="bilinear")[0, 0]
    np.testing.assert_allclose(result.raw, expected.numpy(), rtol=1e-4, atol=1e-6)
    assert result.target == 5


def test_a_method_that_does_not_apply_says_why_and_every_method_is_registered():
    resnet = engine.create_model("preact_resnet", "random", device="cpu")
    assert "no attention" in unsupported("Gradient x attention", resnet)
    with pytest.raises(engine.EngineError, match="Gradient x attention does not apply to PreAct ResNet"):
        GradientAttention(resnet).attribute(np.zeros((32, 32, 3), np.uint8))
    assert "local windows" in unsupported("Gradient x attention", engine.create_model("alternet", "random"))
    with pytest.raises(engine.EngineError, match="unknown attribution method"):
        unsupported("LIME", resnet)
    assert set(METHODS) == {
        "Grad-CAM",
        "Saliency",
        "SmoothGrad",
        "Integrated Gradients",
        "Occlusion",
        "Gradient x attention",
    }
    with pytest.raises(engine.EngineError, match="class 10 is out of range"):
        Saliency(resnet).attribute(np.zeros((32, 32, 3), np.uint8), 10)


def test_the_quick_defaults_cost_what_fits_five_seconds_on_the_imagenet_models():
    for name in ("resnet50", "vit_small_patch16_224"):
        model = engine.create_model(name, "random", device="cpu")
        occlusion = Occlusion(model)
        assert (occlusion.window, occlusion.stride) == (64, 32)  # 6 x 6 overlapping windows (ViT-S: 2 x 2 patches)
        assert occlusion.cost() == Cost(forward=37, backward=0, passes=6)
        assert IntegratedGradients(model).cost() == Cost(forward=2, backward=8, passes=3)
        assert SmoothGrad(model).cost() == Cost(forward=0, backward=8, passes=1)
        assert Occlusion(model, window=28, stride=14).cost().forward == 15 * 15 + 1  # finer on request
        with pytest.raises(engine.EngineError, match="window and stride are 1 to 224 px, not 300 and 150"):
            Occlusion(model, window=300)


def test_the_estimate_is_the_cost_at_the_seconds_per_image_the_latest_map_took(vit, image):
    ig = IntegratedGradients(vit, steps=16)
    before = estimate(ig)  # at the seconds per image of this model's latest map (or one timed image)
    per_image = pass_seconds(vit)
    assert before.cost == ig.cost()
    assert before.seconds == pytest.approx(2 * per_image.forward + 16 * per_image.backward) and before.seconds > 0
    start = time.perf_counter()
    ig.attribute(image, 3)
    took = time.perf_counter() - start
    after = estimate(ig)  # the same map again: the time its passes took
    assert 0 < after.seconds <= took and after.seconds != before.seconds
    assert 0 < estimate(Occlusion(vit)).seconds and estimate(engine.GradCam(vit)).cost == Cost(0, 1, 1)
    assert [Estimate(Cost(0, 1, 1), s).text for s in (0.4, 4.4, 150)] == ["under a second", "about 4 s", "about 2 min"]


def agreement(coarse: np.ndarray, fine: np.ndarray) -> float:
    """Pearson correlation of two maps after 4 x 4 average pooling (8 x 8 cells on a 32 px input)."""
    pooled = [F.avg_pool2d(torch.as_tensor(m, dtype=torch.float32)[None, None], 4).flatten() for m in (coarse, fine)]
    return float(torch.corrcoef(torch.stack(pooled))[0, 1])


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.parametrize(
    "name, finer, occlusion_floor",  # the finer Occlusion: the previous default (one patch; 1/8 of the input)
    [("vit_cifar", (4, 4), 0.5), ("preact_resnet", (4, 2), 0.2)],
)
def test_the_quick_defaults_agree_with_finer_maps_on_the_trained_models(one_thread, name, finer, occlusion_floor):
    """On the bundled CIFAR-10 checkpoints (timm's ViT; the PreAct ResNet) and three test images, each default
    map against a finer one, pooled to 8 x 8 cells. Measured: IG 0.93-1.00, SmoothGrad 0.65-0.91, Occlusion
    0.6-0.8 (ViT) and 0.1-0.6 (ResNet: occlusion depends on the window's size); 16 px windows (3 x 3)
    fall to a mean of 0.1-0.2, 2 IG steps to 0.57, 1 SmoothGrad sample to a mean of 0.43-0.69."""
    model = engine.create_model(name, "pretrained", device="cpu")
    images, _ = subset("test")
    ig, smooth, occlusion = [], [], []
    for picture in images[[40, 269, 634]]:
        target = int(logits_of(model, model.transform(engine.load_image(picture)).unsqueeze(0))[0].argmax())
        ig.append(agreement(*[IntegratedGradients(model, steps=s).attribute(picture, target).map for s in (8, 32)]))
        torch.manual_seed(0)  # SmoothGrad's noise
        smooth.append(agreement(*[SmoothGrad(model, samples=s).attribute(picture, target).map for s in (8, 32)]))
        window, stride = finer
        maps = [Occlusion(model, w, s).attribute(picture, target).map for w, s in ((None, None), (window, stride))]
        occlusion.append(agreement(*maps))
    assert min(ig) > 0.9, ig  # 8 Gauss-Legendre points against 32
    assert np.mean(smooth) > 0.7, smooth  # 8 noisy copies against 32
    assert np.mean(occlusion) > occlusion_floor, occlusion  # 6 x 6 (224 px) or 7 x 7 (32 px) overlapping windows

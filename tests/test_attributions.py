"""The attribution methods (engine.analyses.attributions) against independent computations: IG's completeness,
Occlusion against occluded copies made by hand, Saliency against autograd, Grad-CAM on a ViT against the
reshaped tokens, gradient x attention against an explicit loop over the layers; unsupported pairs named."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine.analyses.attributions import (
    METHODS,
    GradientAttention,
    IntegratedGradients,
    Occlusion,
    Saliency,
    SmoothGrad,
    black,
    unsupported,
)
from engine.cifar_subset import subset


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


def test_integrated_gradients_are_complete_within_captums_delta(vit, image):
    result = IntegratedGradients(vit, steps=64).attribute(image, 3)
    x = vit.transform(engine.load_image(image)).unsqueeze(0)
    difference = float(logits_of(vit, x)[0, 3] - logits_of(vit, black(vit, x))[0, 3])
    assert result.target == 3 and result.delta is not None
    assert result.total == pytest.approx(difference, abs=result.delta + 1e-4)
    assert result.delta < 0.05 * abs(difference) + 1e-3  # 64 steps converge on this model
    assert result.map.shape == (32, 32) and result.map.max() == 1 and result.map.min() >= 0


def test_occlusion_is_the_logit_drop_of_each_occluded_copy(vit, image):
    occlusion = Occlusion(vit)
    assert (occlusion.window, occlusion.stride) == (4, 4)  # one CIFAR-ViT patch: aligned to its token grid
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
    result = SmoothGrad(vit, samples=8, batch_size=4).attribute(image, 1, lambda done, total: ticks.append(total))
    assert vit.forward_passes - passes == 2 and ticks == [2, 2]  # 8 noisy copies, 4 per pass
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

"""Fig 10a's minibatch CKA against an independent computation: HSIC as a U-statistic over 4-tuples of
distinct images, on latents taken by running a tiny ViT's blocks by hand."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
import torch

import engine
from engine.analyses.similarity import FeatureSimilarity, tick_labels
from engine.errors import EngineError

TINY_VIT = {"patch_size": 8, "embed_dim": 16, "depth": 2, "num_heads": 2}


def hsic_u_statistic(x: np.ndarray, y: np.ndarray) -> float:
    """Unbiased HSIC with linear kernels as the U-statistic of Song et al. (2012): the mean over ordered
    4-tuples of distinct samples (i, j, q, r) of k_ij l_ij + k_ij l_qr - 2 k_ij l_iq."""
    k, l_ = x @ x.T, y @ y.T
    terms = [
        k[i, j] * l_[i, j] + k[i, j] * l_[q, r] - 2 * k[i, j] * l_[i, q]
        for i, j, q, r in permutations(range(len(x)), 4)
    ]
    return float(np.mean(terms))


def minibatch_cka(batches_x: list[np.ndarray], batches_y: list[np.ndarray]) -> float:
    xy = sum(hsic_u_statistic(a, b) for a, b in zip(batches_x, batches_y))
    xx = sum(hsic_u_statistic(a, a) for a in batches_x)
    yy = sum(hsic_u_statistic(b, b) for b in batches_y)
    return xy / np.sqrt(xx * yy)


def vit_latents_by_hand(model: engine.LoadedModel, x: torch.Tensor) -> list[np.ndarray]:
    """Embed, then x + attn(norm1(x)) and x + mlp(norm2(x)) per transformer block; patch tokens only."""
    vit = model.module
    with torch.no_grad():
        tokens = vit.patch_embed(x)
        tokens = torch.cat([vit.cls_token.expand(len(x), -1, -1), tokens], 1) + vit.pos_embed
        latents = [tokens]
        for block in vit.blocks:
            tokens = tokens + block.attn(block.norm1(tokens))
            latents.append(tokens)
            tokens = tokens + block.mlp(block.norm2(tokens))
            latents.append(tokens)
    return [t[:, 1:].flatten(1).double().numpy() for t in latents]


@pytest.fixture(scope="module")
def images() -> torch.Tensor:
    return torch.randn(12, 3, 32, 32, generator=torch.Generator().manual_seed(3))


def test_ckatorch_hsic_is_the_u_statistic():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(7, 5)), rng.normal(size=(7, 3))
    from ckatorch.hsic import hsic1

    k, l_ = torch.from_numpy(x @ x.T)[None], torch.from_numpy(y @ y.T)[None]
    assert float(hsic1(k, l_)[0]) == pytest.approx(hsic_u_statistic(x, y), rel=1e-9)


def test_one_model_against_itself(images):
    model = engine.create_model("vit_cifar", weights="random", seed=1, device="cpu", **TINY_VIT)
    result = FeatureSimilarity(model, batch_size=6).attribute(images)
    latents = vit_latents_by_hand(model, images)
    assert result.row_kinds == ["embed", "msa", "mlp", "msa", "mlp"] and result.images == 12
    cka = np.array(result.cka)
    np.testing.assert_allclose(np.diag(cka), 1.0, rtol=1e-9)
    np.testing.assert_allclose(cka, cka.T, rtol=1e-9)
    for i, j in [(0, 1), (0, 4), (2, 3), (1, 4)]:
        expected = minibatch_cka([latents[i][:6], latents[i][6:]], [latents[j][:6], latents[j][6:]])
        assert cka[i, j] == pytest.approx(expected, rel=1e-6)
    assert model.forward_passes == 2  # one pass per minibatch


def test_two_models_and_a_dropped_last_batch(images):
    a = engine.create_model("vit_cifar", weights="random", seed=1, device="cpu", **TINY_VIT)
    b = engine.create_model("vit_cifar", weights="random", seed=2, device="cpu", **{**TINY_VIT, "depth": 1})
    result = FeatureSimilarity(a, b, batch_size=5).attribute(images[:11])  # batches 5, 5 and 1 (left out)
    assert len(result.cka) == 5 and len(result.cka[0]) == 3 and result.images == 10
    la, lb = vit_latents_by_hand(a, images[:10]), vit_latents_by_hand(b, images[:10])
    expected = minibatch_cka([la[3][:5], la[3][5:]], [lb[2][:5], lb[2][5:]])
    assert result.cka[3][2] == pytest.approx(expected, rel=1e-6)


def test_labels_and_bad_sizes(images):
    assert tick_labels(["embed", "conv", "pool", "msa"]) == ["E", "1", "P", "3"]
    model = engine.create_model("vit_cifar", weights="random", device="cpu", **TINY_VIT)
    with pytest.raises(EngineError, match="at least 4 images"):
        FeatureSimilarity(model, batch_size=8).attribute(images[:3])
    with pytest.raises(EngineError, match="batch_size must be at least 4"):
        FeatureSimilarity(model, batch_size=2)

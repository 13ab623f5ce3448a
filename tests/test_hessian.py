"""Hessian spectra against independent computations: a hand-built loss whose eigenvalue of the largest
magnitude is negative, the full Hessian (torch.autograd.functional.hessian, numpy eigh) of a tiny conv
net, and ARPACK (scipy eigsh) on Hessian-vector products from torch.func (vjp of grad) of a tiny AlterNet."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.sparse.linalg import LinearOperator, eigsh
from torch import nn
from torch.func import functional_call, grad, vjp

import engine
from engine.analyses.hessian import HessianSpectrum
from engine.data.cifar_subset import subset
from engine.models.cifar_family import CIFAR10_MEAN, CIFAR10_STD, cifar_transform
from engine.models.registry import LoadedModel
from tests.helpers.saddle import Saddle

WD = 5e-4


pytestmark = pytest.mark.usefixtures("one_thread")


def loaded(module: nn.Module) -> LoadedModel:
    return LoadedModel(engine.get_spec("alternet"), module.eval(), "test", torch.device("cpu"), cifar_transform())


def subset_batch(model: LoadedModel, count: int) -> tuple[torch.Tensor, list[int]]:
    images, labels = subset()
    return HessianSpectrum(model).inputs(list(images[:count])), labels[:count].tolist()


def nll_l2(module: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(functional_call(module, params, (x,)), y) + WD / 2 * sum(
        (p**2).sum() for p in params.values()
    )


def top_by_magnitude(values: np.ndarray, k: int) -> np.ndarray:
    return values[np.argsort(-np.abs(values), kind="stable")][:k]


def test_a_negative_eigenvalue_of_the_largest_magnitude_keeps_its_sign():
    model = loaded(Saddle([8.0, -2.0, 1.0]))  # Hessian of NLL + L2: diag(-4, 1, -0.5) + WD
    ticks = []
    result = HessianSpectrum(model, top_k=3, augmented=False, tol=1e-12, max_iter=500).attribute(
        torch.zeros(16, 3, 32, 32), [0] * 16, progress=lambda done, total: ticks.append((done, total))
    )
    assert result.eigenvalues[0] == pytest.approx([-4 + WD, 1 + WD, -0.5 + WD], rel=1e-9)
    assert result.nll == pytest.approx([math.log(2)]) and result.loss == pytest.approx([math.log(2)])
    assert result.nep == pytest.approx(2 / 3) and result.ape == pytest.approx(1 + WD)
    assert ticks == [(1, 3), (2, 3), (3, 3)] and result.parameters == 3
    histogram = result.histogram(bins=5)
    widths = np.diff(np.log10(histogram["edges"]))
    assert np.dot(histogram["negative"], widths) == pytest.approx(result.nep)
    assert np.dot(histogram["positive"], widths) == pytest.approx(1 / 3)
    assert result.to_json()["eigenvalues"] == result.eigenvalues


def test_minibatches_are_shuffled_crops_and_flips_padded_with_black():
    model = loaded(nn.Linear(1, 1))
    x, labels = subset_batch(model, 16)
    ((augmented, y),) = HessianSpectrum(model, seed=3).minibatches(x, labels)
    black = (-np.array(CIFAR10_MEAN) / np.array(CIFAR10_STD))[:, None, None]
    padded = np.stack([np.pad(image - black, ((0, 0), (4, 4), (4, 4))) + black for image in x.numpy()])
    candidates = {
        (source, dy, dx, flip): crop[..., ::-1] if flip else crop
        for source in range(16)
        for dy in range(9)
        for dx in range(9)
        for flip in (0, 1)
        for crop in [padded[source, :, dy : dy + 32, dx : dx + 32]]
    }
    found = []
    for image, label in zip(augmented.numpy(), y.tolist()):
        match = [key for key, crop in candidates.items() if np.abs(crop - image).max() < 1e-5]
        assert match and labels[match[0][0]] == label
        found.append(match[0])
    assert sorted(source for source, *_ in found) == list(range(16))  # a permutation of the images
    assert {flip for *_, flip in found} == {0, 1} and any((dy, dx) != (4, 4) for _, dy, dx, _ in found)


def tiny_conv_net() -> nn.Module:
    """Conv 3x3 (3->4), BN with running statistics, GELU, global average pooling, linear (4->10): 170 parameters."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.GELU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(4, 10),
        ).double()
        for tensor in (net[1].weight, net[1].bias, net[1].running_mean):
            nn.init.uniform_(tensor.data, -1, 1)
        nn.init.uniform_(net[1].running_var, 0.5, 2)
    return net


@pytest.mark.slow  # over 3 s on the 2-core machine
def test_top_k_match_the_full_hessian_eigendecomposition():
    model = loaded(tiny_conv_net())
    x, labels = subset_batch(model, 16)
    x = x.double()
    spectrum = HessianSpectrum(model, top_k=3, max_iter=2000, tol=1e-13)
    result = spectrum.attribute(x, labels)
    assert len(result.eigenvalues) == 1 and result.parameters == 170
    ((xb, yb),) = spectrum.minibatches(x, labels)
    names = [name for name, _ in model.module.named_parameters()]
    shapes = [p.shape for p in model.module.parameters()]

    def loss(w: torch.Tensor) -> torch.Tensor:
        pieces = w.split([s.numel() for s in shapes])
        return nll_l2(model.module, {n: t.view(s) for n, t, s in zip(names, pieces, shapes)}, xb, yb)

    flat = torch.cat([p.detach().reshape(-1) for p in model.module.parameters()])
    hessian = torch.autograd.functional.hessian(loss, flat, vectorize=True).numpy()
    expected = top_by_magnitude(np.linalg.eigvalsh(hessian), 4)
    assert np.all(np.diff(np.abs(expected)) < -1e-3 * np.abs(expected[:-1]))  # distinct magnitudes
    assert expected[0] < 0  # this net's eigenvalue of the largest magnitude is negative
    assert result.eigenvalues[0] == pytest.approx(expected[:3].tolist(), rel=1e-7)
    with torch.no_grad():
        assert result.nll[0] == pytest.approx(float(F.cross_entropy(model.module(xb), yb)))


@pytest.mark.slow  # over 3 s on the 2-core machine
def test_alternet_top_eigenvalues_match_arpack():
    model = engine.create_model(
        "alternet", weights="random", seed=2, device="cpu", width=4, depths=(1, 1, 1, 2), msa="s4:2"
    )
    x, labels = subset_batch(model, 8)
    spectrum = HessianSpectrum(model, top_k=2, batch_size=8, max_iter=300, tol=1e-5)
    result = spectrum.attribute(x, labels)
    ((xb, yb),) = spectrum.minibatches(x, labels)
    params = {name: p.detach() for name, p in model.module.named_parameters()}
    _, hessian_times = vjp(grad(lambda w: nll_l2(model.module, w, xb, yb)), params)  # symmetric: vjp = hvp

    def hvp(v: np.ndarray) -> np.ndarray:
        pieces = torch.from_numpy(np.asarray(v, dtype=np.float32).ravel()).split([p.numel() for p in params.values()])
        tangent = {name: piece.view_as(p) for (name, p), piece in zip(params.items(), pieces)}
        return torch.cat([h.reshape(-1) for h in hessian_times(tangent)[0].values()]).numpy()

    n = result.parameters
    expected = eigsh(LinearOperator((n, n), matvec=hvp, dtype=np.float32), k=3, which="LM", tol=1e-5, v0=np.ones(n))[0]
    expected = top_by_magnitude(expected.astype(np.float64), 2)
    assert expected[1] < 0  # the second is negative here
    assert result.eigenvalues[0] == pytest.approx(expected.tolist(), rel=1e-3)

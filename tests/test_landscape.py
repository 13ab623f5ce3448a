"""Loss landscapes against independent computations on a tiny AlterNet: filter norms of the directions,
the centre against the loss computed directly, an off-centre point against a perturbed copy built by hand."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine.analyses.landscape import LossLandscape
from engine.data.cifar_subset import subset

WD = 5e-4


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def model():
    return engine.create_model(
        "alternet", weights="random", seed=2, device="cpu", width=4, depths=(1, 1, 1, 2), msa="s4:2"
    )


@pytest.fixture(scope="module")
def data(model):
    images, labels = subset()
    return LossLandscape(model).inputs(list(images[::50])), labels[::50].tolist()  # 20 images, 2 of every class


def loss_nll_accuracy(module: torch.nn.Module, x: torch.Tensor, labels: list[int]) -> tuple[float, float, float]:
    with torch.no_grad():
        logits = module.eval()(x)
        nll = float(F.cross_entropy(logits, torch.tensor(labels)))
        l2 = sum(float((p.double() ** 2).sum()) for p in module.parameters()) * WD / 2
        return nll + l2, nll, int((logits.argmax(-1) == torch.tensor(labels)).sum()) / len(labels)


def test_directions_are_filter_normalized_and_skip_biases_norms_and_position_tables(model):
    directions = LossLandscape(model, seed=4).directions()
    assert len(directions) == 2
    for name, p in model.module.named_parameters():
        for d in directions:
            if p.dim() == 1 or "relative_position" in name:
                assert not d[name].any(), name
            else:
                for filter_d, filter_w in zip(d[name], p.detach()):
                    assert float(filter_d.norm()) == pytest.approx(float(filter_w.norm()), rel=1e-5), name
    again = LossLandscape(model, seed=4).directions()
    assert all(torch.equal(a[k], b[k]) for a, b in zip(directions, again) for k in a)  # seeded


def test_grid_points_match_direct_and_hand_built_losses_and_weights_are_restored(model, data):
    x, labels = data
    before = {k: v.clone() for k, v in model.module.state_dict().items()}
    ticks = []
    landscape = LossLandscape(model, dims=2, points=3, seed=1)
    result = landscape.attribute(x, labels, progress=lambda done, total: ticks.append((done, total)))
    after = model.module.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # bit for bit, buffers included
    assert ticks == [(i, 9) for i in range(1, 10)] and result.x == result.y == [-1.0, 0.0, 1.0] and result.images == 20

    loss, nll, accuracy = loss_nll_accuracy(model.module, x, labels)
    assert result.loss[1][1] == pytest.approx(loss, rel=1e-5)
    assert result.nll[1][1] == pytest.approx(nll, rel=1e-5) and result.accuracy[1][1] == accuracy

    d1, d2 = landscape.directions()
    moved = copy.deepcopy(model.module)
    with torch.no_grad():
        for name, p in moved.named_parameters():
            p.add_(-1.0 * d1[name] + 1.0 * d2[name])  # the point (x, y) = (-1, 1): row j = 2, column i = 0
    loss, nll, accuracy = loss_nll_accuracy(moved, x, labels)
    assert result.loss[2][0] == pytest.approx(loss, rel=1e-5)
    assert result.nll[2][0] == pytest.approx(nll, rel=1e-5) and result.accuracy[2][0] == accuracy
    assert result.loss[2][0] != pytest.approx(result.loss[1][1], rel=1e-3)  # the point did move
    assert np.isclose(np.array(result.loss) - np.array(result.nll), 0).sum() == 0  # L2 is in the loss


def test_one_dimensional_slice(model, data):
    x, labels = data
    result = LossLandscape(model, dims=1, points=5, span=0.5, seed=1).attribute(x, labels)
    assert result.x == [-0.5, -0.25, 0.0, 0.25, 0.5] and result.y is None
    assert len(result.loss) == len(result.nll) == len(result.accuracy) == 5
    assert result.loss[2] == pytest.approx(loss_nll_accuracy(model.module, x, labels)[0], rel=1e-5)
    assert result.to_json()["loss"] == result.loss

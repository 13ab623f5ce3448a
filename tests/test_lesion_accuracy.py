"""LesionAccuracy (Fig 10b) against an independent computation on a tiny random AlterNet: each unit's
branch replaced by hand, in a copy of the model, with a module that returns zeros."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import engine
from engine.analyses.lesion import LesionAccuracy, headline
from engine.data.cifar_subset import subset
from engine.errors import EngineError

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def model():
    # blocks: stem, s1.0 conv, s2.0 pool, s3.0 pool, s3.1 msa, s4.0 pool, s4.1 msa
    return engine.create_model(
        "alternet", weights="random", seed=3, device="cpu", width=4, depths=(1, 1, 2, 2), msa="s3:2,s4:2"
    )


@pytest.fixture(scope="module")
def data():
    images, labels = subset()
    return list(images[::50]), labels[::50].tolist()  # 20 uint8 images, 2 of every class


class Zeros(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)


def by_hand(model, index: int | None, x: torch.Tensor, labels: list[int]) -> tuple[float, float]:
    """Accuracy and mean NLL of a copy of the model whose unit `index` has its branch module replaced by Zeros."""
    module = copy.deepcopy(model.module).eval()
    if index is not None:
        branch = model.spec.blocks(model.module)[index].branch
        path = next(name for name, m in model.module.named_modules() if m is branch)
        parent, _, leaf = path.rpartition(".")
        setattr(module.get_submodule(parent), leaf, Zeros())
    with torch.no_grad():
        logits = module(x)
    y = torch.tensor(labels)
    return int((logits.argmax(-1) == y).sum()) / len(y), float(F.cross_entropy(logits, y))


def test_every_unit_matches_a_hand_built_lesion_and_hooks_are_removed(model, data):
    images, labels = data
    x = torch.stack([model.transform(engine.load_image(image)) for image in images])
    with torch.no_grad():
        before = model.module(x)
    ticks, passes = [], model.forward_passes
    result = LesionAccuracy(model, batch_size=7).attribute(images, labels, progress=lambda d, t: ticks.append((d, t)))
    specs = model.spec.blocks(model.module)
    assert [(u.index, u.name, u.kind) for u in result.units] == [
        (1, specs[1].name, "conv"),
        (4, specs[4].name, "msa"),
        (6, specs[6].name, "msa"),
    ]
    assert [u.normalized_depth for u in result.units] == [1 / 6, 4 / 6, 1.0]
    assert (
        ticks == [(i, 4) for i in range(1, 5)] and model.forward_passes - passes == 4 * 3
    )  # 20 images in batches of 7
    assert result.images == 20 and result.model == "alternet"
    clean = by_hand(model, None, x, labels)
    assert result.clean_accuracy == clean[0] and result.clean_nll == pytest.approx(clean[1], rel=1e-5)
    for unit in result.units:
        accuracy, nll = by_hand(model, unit.index, x, labels)
        assert unit.accuracy == accuracy and unit.nll == pytest.approx(nll, rel=1e-5), unit.name
        assert unit.drop == pytest.approx(result.clean_accuracy - accuracy)
        assert unit.nll != pytest.approx(result.clean_nll, rel=1e-4), unit.name  # the lesion did something
    assert all(not spec.branch._forward_hooks for spec in specs if spec.can_lesion)
    with torch.no_grad():
        assert torch.equal(model.module(x), before)  # bit for bit: nothing left switched off
    msa = [100 * (clean[0] - by_hand(model, i, x, labels)[0]) for i in (4, 6)]
    conv = 100 * (clean[0] - by_hand(model, 1, x, labels)[0])
    assert headline(result.to_json()).endswith(
        f"; Conv units {conv:.1f} to {conv:.1f}, MSA units {min(msa):.1f} to {max(msa):.1f}"
    )


def test_preprocessed_batch_and_agreement_labels_give_real_drops(model, data):
    images, _ = data
    x = torch.stack([model.transform(engine.load_image(image)) for image in images])
    with torch.no_grad():
        predicted = model.module(x).argmax(-1)
    result = LesionAccuracy(model).attribute(x, predicted)  # labels = the clean predictions: clean accuracy 1
    assert result.clean_accuracy == 1.0 and all(0 <= u.drop <= 1 for u in result.units)
    assert any(u.drop > 0 for u in result.units)
    for unit in result.units:
        assert unit.accuracy == by_hand(model, unit.index, x, predicted.tolist())[0]
    payload = result.to_json()
    assert set(payload) == {"model", "clean_accuracy", "clean_nll", "units", "images"}
    assert set(payload["units"][0]) == {"index", "name", "kind", "normalized_depth", "accuracy", "nll", "drop"}
    assert payload["units"][1]["drop"] == result.units[1].drop


@pytest.mark.parametrize(
    "images, labels, message",
    [
        ([], [], "needs at least one image"),
        (torch.zeros(3, 32, 32), [0], r"shape \(B, 3, H, W\), not \(3, 32, 32\)"),
        (torch.zeros(2, 3, 32, 32), [0], "2 images but 1 labels"),
        (torch.zeros(2, 3, 32, 32), [0, 10], "label 10 is out of range: alternet has 10 classes"),
        (torch.zeros(2, 3, 32, 32), [0, -1], "label -1 is out of range"),
    ],
)
def test_bad_input_is_named(model, images, labels, message):
    with pytest.raises(EngineError, match=message):
        LesionAccuracy(model).attribute(images, labels)


def test_bad_batch_size_is_named(model):
    with pytest.raises(EngineError, match="batch_size must be at least 1"):
        LesionAccuracy(model, batch_size=0)

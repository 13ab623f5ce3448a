"""The map checks over many images (engine/analyses/map_checks.py) and their verdicts (engine/paper/map_verdicts.py).

The randomization test on two toy models whose answer is known: one whose Saliency map is the image itself whatever
its weight (a map that shows the image, not the model: it stays alike, ρ = 1, and fails), one linear model whose map
is its weights (randomized weights give an unrelated map: it passes). The Spearman ρ is recomputed by hand from the
documented cascade (each part re-initialized with its seed), the SSIM against scikit-image's, and the areas against
DeletionInsertion on its own."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from skimage.metrics import structural_similarity
from torch import nn

from engine import get_spec
from engine.analyses.attributions import Saliency
from engine.analyses.faithfulness import DeletionInsertion
from engine.analyses.map_checks import MapChecks, cascade, parts, randomize, spearman, ssim
from engine.errors import EngineError
from engine.models.registry import LoadedModel
from engine.paper.claims import FAILS, HOLDS
from engine.paper.map_verdicts import cell, map_verdicts, table
from engine.paper.paired import mean_difference

IMAGES = 8


class ShowsTheImage(nn.Module):
    """Class 0's logit is w * |x|² / 2: its gradient w * x is the image whatever w is."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(len(x), 10)
        logits[:, 0] = self.w * (x**2).flatten(1).sum(1) / 2
        return logits


class Linear(nn.Module):
    """Logits W x + b: its gradient for a class is that class's row of W, whatever the image."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.fc = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.flatten(1))


def toy(module: nn.Module) -> LoadedModel:
    return LoadedModel(get_spec("preact_resnet"), module.eval(), "toy", torch.device("cpu"), lambda image: image)


@pytest.fixture(scope="module")
def images() -> torch.Tensor:
    return torch.randn(IMAGES, 3, 32, 32, generator=torch.Generator().manual_seed(0))


def ranks_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman by hand: Pearson's r of the ranks (the maps here have no ties)."""
    ra, rb = np.argsort(np.argsort(a.ravel())), np.argsort(np.argsort(b.ravel()))
    return float(np.corrcoef(ra, rb)[0, 1])


def test_a_map_that_shows_the_image_stays_alike_when_the_weights_are_randomized_and_fails(images):
    model = toy(ShowsTheImage())
    found = MapChecks(model, methods=["Saliency"], randomized=IMAGES, orders=1, fills=["blur"]).attribute(
        images, [0] * IMAGES
    )
    rho = found.methods["Saliency"].spearman
    assert found.stages == ["every weight"] and np.allclose(rho, 1.0)  # one part, w: the head is every weight
    assert float(model.module.w.detach()) == 1.0, "the model itself is never randomized, a copy is"
    assert not cell(found.to_json(), "Saliency").randomization


def test_a_map_of_the_weights_changes_when_they_are_randomized_and_passes(images):
    model = toy(Linear())
    before = model.module.fc.weight.detach().clone()
    found = MapChecks(model, methods=["Saliency"], randomized=IMAGES, orders=1, fills=["blur"]).attribute(
        images, [0] * IMAGES
    )
    assert torch.equal(model.module.fc.weight, before)
    # by hand: the cascade re-initializes its one part, fc, with seed 0; the map is |W[0]|'s largest channel
    copied = Linear()
    copied.load_state_dict(model.module.state_dict())
    randomize(parts(copied)[0], seed=0)
    trained_map = before[0].abs().reshape(3, 32, 32).amax(0).numpy()
    random_map = copied.fc.weight.detach()[0].abs().reshape(3, 32, 32).amax(0).numpy()
    expected = ranks_correlation(trained_map, random_map)
    assert found.methods["Saliency"].spearman[-1] == pytest.approx([expected] * IMAGES, abs=1e-6)
    assert abs(expected) < 0.15
    assert cell(found.to_json(), "Saliency").randomization


def test_each_maps_areas_are_those_deletion_and_insertion_give_on_their_own(images):
    model = toy(Linear())
    found = MapChecks(model, methods=["Saliency"], randomized=0, orders=2).attribute(images[:2], [3, 3])
    assert found.fills == ["road", "blur"]  # ROAD decides, the blur beside it
    for fill in found.fills:
        scores, random = found.methods["Saliency"].fills[fill], found.random[fill]
        for k in range(2):
            heat = Saliency(model).attribute(images[k : k + 1], 3).map
            alone = DeletionInsertion(model, fill=fill, orders=2).attribute(images[k : k + 1], 3, heat=heat)
            assert scores.deletion[k] == pytest.approx(alone.deletion.area, abs=1e-6)
            assert scores.insertion[k] == pytest.approx(alone.insertion.area, abs=1e-6)
            assert random.deletion[k] == pytest.approx(alone.random.deletion.area, abs=1e-6)
    assert found.randomized == 0 and found.methods["Saliency"].spearman == [[] for _ in found.stages]


def test_ssim_is_scikit_images_and_spearman_is_scipys():
    rng = np.random.default_rng(1)
    smooth = np.cumsum(np.cumsum(rng.normal(size=(32, 32)), 0), 1)
    for a, b in ((smooth, smooth + rng.normal(0, 5, (32, 32))), (smooth, rng.normal(size=(32, 32)))):
        scaled = [(m - m.min()) / (m.max() - m.min()) for m in (a, b)]
        expected = structural_similarity(
            *scaled, gaussian_weights=True, sigma=1.5, use_sample_covariance=False, data_range=1.0
        )
        assert ssim(a, b) == pytest.approx(expected, abs=1e-6)
        assert spearman(a, b) == pytest.approx(stats.spearmanr(a.ravel(), b.ravel()).statistic)
    assert ssim(smooth, smooth) == pytest.approx(1.0) and spearman(smooth, np.ones((32, 32))) == 0.0


def test_a_models_parts_run_from_the_input_to_the_head_and_cascade_from_the_head():
    from engine.models.registry import create_model

    vit = create_model("vit_cifar", "random", seed=0, device="cpu")
    names = [name for name, _, _ in parts(vit.module)]
    assert names[-1] == "head" and "blocks.0" in names and "blocks.7" in names and "patch_embed" in names
    assert not any(name.startswith("blocks.0.") for name in names)  # a block is one part
    assert cascade(13) == [1, 4, 7, 10, 13] and cascade(1) == [1]


def test_unknown_methods_and_fills_are_named_before_any_work():
    model = toy(Linear())
    with pytest.raises(EngineError, match="unknown attribution method"):
        MapChecks(model, methods=["Nope"])
    with pytest.raises(EngineError, match="unknown fill"):
        MapChecks(model, fills=["paint"])


def _section(deletion_gain: float, rho: float, road_gap: float = 0.1, random_weights: bool = False) -> dict:
    """A stored section of one model and one method: 50 images whose blur deletion gains over random order scatter
    around `deletion_gain` (insertion's around +0.05), whose ROAD insertion minus deletion areas around `road_gap`,
    and Spearman ρ around `rho` with every weight random."""
    rng = np.random.default_rng(0)
    random = rng.uniform(0.4, 0.6, 50)
    noise = lambda: rng.normal(0, 0.02, 50)  # noqa: E731
    blur = {"deletion": (random - deletion_gain + noise()).tolist(), "insertion": (random + 0.05 + noise()).tolist()}
    road = {"deletion": (random + noise()).tolist(), "insertion": (random + road_gap + noise()).tolist()}
    checks = {
        "fills": {"road": road, "blur": blur},
        "spearman": [(rho + rng.normal(0, 0.05, 50)).tolist()],
        "ssim": [(rho + rng.normal(0, 0.05, 50)).tolist()],
    }
    baseline = {"deletion": random.tolist(), "insertion": random.tolist()}
    result = {
        "fills": ["road", "blur"],
        "methods": {"Saliency": checks},
        "random": {"road": baseline, "blur": baseline},
    }
    return {"models": {"step0": {"label": "ResNet", "random_weights": random_weights, "result": result}}}


def test_verdicts_pass_a_method_only_when_every_check_passes():
    passing, [verdict] = _section(0.05, 0.1), map_verdicts(_section(0.05, 0.1))
    assert verdict.outcome == HOLDS and verdict.number == "passes on 1 of 1 models"
    assert "passes every check" in verdict.words
    rows = table(passing).splitlines()[-1]
    assert rows.count("✓") == 4 and "✗" not in rows and "ROAD +0.1" in rows
    alike = map_verdicts(_section(0.05, 0.8))[0]
    assert alike.outcome == FAILS and "its maps stay alike when the weights are randomized" in alike.words
    slower = map_verdicts(_section(-0.05, 0.1))[0]  # deletes slower than random
    assert slower.outcome == FAILS and "does not drop the class faster" in slower.words
    road = map_verdicts(_section(0.05, 0.1, road_gap=-0.05))[0]  # its bottom pixels matter more, under ROAD
    assert road.outcome == FAILS and "top pixels do not matter more" in road.words
    c = cell(_section(0.05, 0.1)["models"]["step0"]["result"], "Saliency")
    by_hand = np.subtract(
        *(
            np.asarray(_section(0.05, 0.1)["models"]["step0"]["result"]["methods"]["Saliency"]["fills"]["road"][k])
            for k in ("insertion", "deletion")
        )
    )
    assert c.road.mean == pytest.approx(by_hand.mean()) and c.passes
    random = map_verdicts(_section(0.05, 0.1, random_weights=True))[0]
    assert random.outcome == "not tested" and "random weights" in random.apart


def test_the_mean_differences_interval_is_the_bootstrap_of_the_mean():
    d = np.random.default_rng(2).normal(0.05, 0.1, 200)
    found = mean_difference(d)
    resampled = np.random.default_rng(7).choice(d, (20_000, len(d))).mean(1)  # by hand, another seed
    low, high = np.percentile(resampled, [2.5, 97.5])
    assert found.mean == pytest.approx(d.mean()) and found.above
    assert found.low == pytest.approx(low, abs=0.002) and found.high == pytest.approx(high, abs=0.002)
    assert not mean_difference(np.random.default_rng(2).normal(0, 0.1, 200)).above

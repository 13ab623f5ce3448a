"""Deletion and insertion (engine/analyses/faithfulness.py) on a toy model whose answer is known: it reads one 8 x 8
region of a 32 x 32 input only (class 0's logit is 6 x the region's mean, every other class's 0). A map on that
region must score best, a map elsewhere worst, random orders between; the probabilities are checked against the
softmax computed by hand. Then on a real bundled model: the object's numbers, the JSON and the line agree."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from engine import get_spec
from engine.analyses.faithfulness import MIN_MARGIN, DeletionInsertion, PhotoVerdict, compared, mean_colour
from engine.errors import EngineError
from engine.models.registry import LoadedModel

REGION = (slice(0, 8), slice(0, 8))
SCALE = 6.0


class ReadsOneRegion(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(len(x), 10)
        logits[:, 0] = SCALE * x[:, :, REGION[0], REGION[1]].mean(dim=(1, 2, 3))
        return logits


@pytest.fixture(scope="module")
def toy() -> LoadedModel:
    spec = get_spec("preact_resnet")  # ten CIFAR-10 classes; the module is the toy
    return LoadedModel(spec, ReadsOneRegion(), "toy", torch.device("cpu"), lambda image: image)


@pytest.fixture(scope="module")
def image() -> torch.Tensor:
    """Dark everywhere but the region the model reads, which is bright."""
    x = torch.full((1, 3, 32, 32), -1.0)
    x[:, :, REGION[0], REGION[1]] = 1.0
    return x


def probability(logit: float) -> float:
    """Class 0's softmax probability when its logit is `logit` and the nine others' are 0."""
    return math.exp(logit) / (math.exp(logit) + 9)


def test_a_map_on_the_region_the_model_reads_scores_best_and_one_elsewhere_worst(toy, image):
    on, off = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    on[REGION] = 1.0
    off[16:, 16:] = 1.0  # a confident map of a region the model never reads
    check = DeletionInsertion(toy, steps=16, fill="mean", orders=3)
    right = check.attribute(image, 0, heat=on)
    wrong = DeletionInsertion(toy, steps=16, fill="mean", orders=3, random=right.random).attribute(image, 0, heat=off)
    fill = float(mean_colour(image)[0, 0, 0, 0])  # -0.875: the region's pixels taken away become the image's mean
    # by hand: 64 of 1,024 pixels are the region; after 1/16 of the pixels (64) the map has taken all of them
    assert right.deletion.probabilities[0] == pytest.approx(probability(SCALE * 1.0), abs=1e-6)
    assert right.deletion.probabilities[1] == pytest.approx(probability(SCALE * fill), abs=1e-6)
    assert right.insertion.probabilities[1] == pytest.approx(probability(SCALE * 1.0), abs=1e-6)
    assert wrong.deletion.probabilities[4] == pytest.approx(probability(SCALE * 1.0), abs=1e-6)  # its 1/4 gone: unmoved
    assert right.deletion.area < right.random.deletion.area < wrong.deletion.area
    assert right.insertion.area > right.random.insertion.area > wrong.insertion.area
    assert right.deletion_gain > 0 > wrong.deletion_gain and right.insertion_gain > 0 > wrong.insertion_gain
    spread = max(right.random.deletion_areas) - min(right.random.deletion_areas)
    assert right.random.deletion.area == pytest.approx(np.mean(right.random.deletion_areas), abs=1e-6)
    assert right.deletion_gain > max(spread, MIN_MARGIN)  # so, by the rule, it beats random order
    assert right.verdict == PhotoVerdict("better", "better")
    inserted = max(right.random.insertion_areas) - min(right.random.insertion_areas)  # the rule, by hand
    by_hand = "worse" if wrong.insertion_gain < -max(inserted, MIN_MARGIN) else "no better"
    assert wrong.verdict == PhotoVerdict("worse", by_hand)
    assert right.line().startswith("On this photo, this map beats random order, in deletion and insertion: removing")
    assert wrong.line().startswith("On this photo, this map does worse than random order")


def test_the_verdict_on_one_photo_weighs_the_gain_against_the_random_orders_spread():
    assert compared(0.05, (0.40, 0.42, 0.44)) == "better"  # 0.05 > the spread 0.04
    assert compared(0.03, (0.40, 0.42, 0.44)) == "no better"
    assert compared(-0.05, (0.40, 0.42, 0.44)) == "worse"
    assert compared(0.005, (0.5, 0.5, 0.5)) == "no better" and compared(0.02, (0.5, 0.5, 0.5)) == "better"  # 0.01
    mixed = PhotoVerdict("better", "no better").text()
    assert mixed == "On this photo, this map beats random order in deletion and does no better than it in insertion"


def test_the_random_baseline_is_measured_once_and_reused(toy, image):
    on = np.zeros((32, 32), np.float32)
    on[REGION] = 1.0
    check = DeletionInsertion(toy, steps=10, fill="blur", orders=3)
    before = toy.forward_passes
    first = check.attribute(image, 0, heat=on)
    measured = toy.forward_passes - before
    known = DeletionInsertion(toy, steps=10, fill="blur", orders=3, random=first.random)
    again = known.attribute(image, 0, heat=on)
    assert measured == check.cost().passes == 8 and toy.forward_passes - before - measured == known.cost().passes == 2
    assert again.random is first.random and again.deletion == first.deletion
    other_fill = DeletionInsertion(toy, fill="mean").attribute(image, 0, heat=on).random
    with pytest.raises(EngineError, match="mean fill"):
        DeletionInsertion(toy, fill="blur", random=other_fill)


@pytest.mark.parametrize(
    "heat, target, said",
    [(np.zeros((0, 0)), 0, "finite"), (np.full((4, 4), np.nan), 0, "finite"), (np.zeros((4, 4)), 12, "out of range")],
)
def test_a_bad_map_or_class_is_named(toy, image, heat, target: int, said: str):
    with pytest.raises(EngineError, match=said):
        DeletionInsertion(toy).attribute(image, target, heat=heat)


def test_a_real_models_map_gives_numbers_its_json_and_line_repeat(sample_photo: Path):
    import engine

    model = engine.create_model("preact_resnet", device="cpu")  # the bundled checkpoint
    grad_cam = engine.GradCam(model).attribute(str(sample_photo))
    found = DeletionInsertion(model).attribute(str(sample_photo), grad_cam.target, heat=grad_cam.raw, method="Grad-CAM")
    said = found.to_json()
    assert said["deletion"]["area"] == round(found.deletion.area, 5) and len(said["deletion"]["probabilities"]) == 11
    assert said["deletion_gain"] == round(found.random.deletion.area - found.deletion.area, 5)
    start, after = found.deletion.probabilities[0], found.deletion.probabilities[2]  # 0% and 20% removed
    assert f"takes '{grad_cam.label}' from {start:.0%} to {after:.0%}" in said["line"]
    assert found.deletion.probabilities[-1] == pytest.approx(found.insertion.probabilities[0], abs=1e-5)  # all filled


def same_json(cli: object, api: object, where: str = "") -> None:
    """`cli` and `api` have the same keys and shapes everywhere, the same strings and flags, and numbers within
    0.02 (the app decodes a large JPEG at a reduced scale; the maps' internal batches differ)."""
    assert type(cli) is type(api) or {type(cli), type(api)} <= {int, float}, where
    if isinstance(cli, dict):
        assert sorted(cli) == sorted(api), (where, sorted(set(cli) ^ set(api)))
        for key in cli:
            same_json(cli[key], api[key], f"{where}.{key}")
    elif isinstance(cli, list):
        assert len(cli) == len(api), where
        for i, (a, b) in enumerate(zip(cli, api)):
            same_json(a, b, f"{where}[{i}]")
    elif isinstance(cli, (int, float)) and not isinstance(cli, bool):
        assert cli == pytest.approx(api, abs=0.02, rel=0.02), where
    elif not where.endswith((".line", ".text", ".seconds", "weights")):  # lines quote the numbers
        assert cli == api, where


def test_the_cli_and_the_analyze_api_give_the_same_json(client, sample_photo: Path):
    """`python -m engine analyze ... --map M --faithfulness --json -` and /analyze with faithfulness (the app's
    service, its budgets and its cached random orders) give the same JSON, key by key; each area is the trapezoid
    of its own curve."""
    from gradio_client import handle_file

    from tests.helpers.cli import run_cli

    method = "Integrated Gradients"
    done = run_cli(
        "analyze", str(sample_photo), "--model", "preact_resnet", "--map", method, "--faithfulness", "--json", "-"
    )
    assert done.returncode == 0, done.stderr
    whole = json.loads(done.stdout)
    api = client.predict(handle_file(str(sample_photo)), ["preact_resnet"], "", method, None, True, api_name="/analyze")
    same_json(whole, api)
    cli, checked = whole["models"][0]["maps"][0]["faithfulness"], api["models"][0]["maps"][0]["faithfulness"]
    for curve in ("deletion", "insertion", "random_deletion", "random_insertion"):
        own = checked[curve]
        assert own["area"] == pytest.approx(np.trapezoid(own["probabilities"], own["fractions"]), abs=1e-4)
        assert own["area"] == pytest.approx(cli[curve]["area"], abs=1e-3), curve
    assert checked["method"] == method and checked["fill"] == "blur" and checked["random_orders"] == 3
    assert checked["line"].startswith(checked["verdict"]["text"] + ": removing the top 20% of this map's pixels takes")
    assert set(checked["verdict"]) == {"deletion", "insertion", "text"} and len(checked["random_deletion_areas"]) == 3


def test_a_check_needs_a_map(client, sample_photo: Path):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    from tests.helpers.cli import run_cli

    with pytest.raises(AppError, match="faithfulness checks a map"):
        client.predict(handle_file(str(sample_photo)), ["preact_resnet"], "", "", None, True, api_name="/analyze")
    done = run_cli("analyze", str(sample_photo), "--model", "preact_resnet", "--faithfulness")
    assert done.returncode == 2 and "--faithfulness checks a map" in done.stderr


@pytest.mark.slow
def test_a_columns_check_is_its_maps_alone_and_is_said_under_it(sample_photo: Path):
    """The page model: the check's line follows the map it was made on (another map shows none, the checked one
    shows it again), the curves come with it, a random-weights model says its score tells nothing, and a map not
    drawn yet is not checked."""
    from app.backend.service import AUTO, CheckKey, Service
    from app.tabs import Problem
    from app.tabs.compare import CheckShown, CompareTab, Look
    from app.views import texts as text
    from app.views.attention import ViewOptions

    tab = CompareTab(Service.start())
    page = tab.analyze(str(sample_photo), ["vit_cifar", "vit_tiny_patch16_224"], "", AUTO, Look())
    vit, untrained = page.runs
    shown = page.columns[0].options  # the default map: the last layer's attention, head mean
    assert text.CHECK_TITLE not in page.columns[0].caption and page.columns[0].check == CheckShown(True)
    caption, curves, line = tab.check(vit, shown)
    found = vit.checks[CheckKey(shown.map_id(vit), vit.result.predictions[0][0].index)]
    assert caption.endswith(f"**{text.CHECK_TITLE}** {found.line()}.") and curves.layout.meta["alt"].endswith(
        found.line()
    )
    lines = curves.layout.title.text.split("<br>")  # whole in a column of four: the model on a line of its own
    assert lines[-1] == vit.result.label and all(len(line) <= 48 for line in lines), lines
    checked = tab.check_shown(vit, shown)
    assert not checked.offered and checked.curves is not None  # checked: its curves, no button
    other = ViewOptions(layer=3)
    assert text.CHECK_TITLE not in tab.view(vit, other, Look())[1] and tab.checked_curves(vit, other) is None
    assert tab.check_shown(vit, other) == CheckShown(True)  # another map drawn: its own check offered
    assert tab.check_shown(untrained, ViewOptions(method="Occlusion")) == CheckShown(False)  # not drawn: nothing
    assert tab.view(vit, shown, Look())[1] == caption  # back on the checked map: its line again
    passes = tab.service.forward_passes
    tab.check(vit, shown)
    assert tab.service.forward_passes == passes  # checked once: nothing is run again, the map is not redrawn
    with pytest.raises(Problem, match="Draw this map first"):
        tab.check(untrained, ViewOptions(method="Occlusion"))
    saliency = ViewOptions(method="Saliency")
    tab.view(untrained, saliency, Look())
    assert text.CHECK_RANDOM in tab.check(untrained, saliency)[0]  # random weights: the score tells nothing


@pytest.mark.browser  # the pack's figures are drawn by Chromium (kaleido)
def test_the_teaching_pack_says_a_checked_maps_line(sample_photo: Path):
    """The handout's map caption carries the check's line when the map shown was checked."""
    import zipfile
    from io import BytesIO

    from app.backend.service import AUTO, Service
    from app.tabs.compare import CompareTab, Look

    tab = CompareTab(Service.start())
    page = tab.analyze(str(sample_photo), ["vit_cifar"], "", AUTO, Look())
    _, _, line = tab.check(page.runs[0], page.columns[0].options)
    pack = tab.export_pack(page.runs, sample_photo.name, Look(), [page.columns[0].options])
    handout = zipfile.ZipFile(BytesIO(pack.data)).read("handout.html").decode()
    assert f"Can this map be trusted? {line}".replace("'", "&#x27;") in handout


def test_road_imputes_each_pixel_taken_away_as_the_mean_of_its_neighbours():
    """ROAD's noisy linear imputation, against values worked out by hand: one pixel taken away inside the image
    becomes the weighted mean of its 8 neighbours (1/6 beside, 1/12 across a corner); a block taken away from a
    linear ramp is the ramp again (a linear function is the mean of its symmetric neighbours); only noise of sd
    0.01 is added, and only where pixels were taken away."""
    from engine.analyses.faithfulness import ROAD_NOISE, impute

    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(1, 3, 8, 8))).float()
    kept = torch.ones(1, 1, 8, 8)
    kept[0, 0, 3, 4] = 0
    filled = impute(x, kept)
    around = x[0, :, 2:5, 3:6]
    weights = torch.tensor([[1 / 12, 1 / 6, 1 / 12], [1 / 6, 0, 1 / 6], [1 / 12, 1 / 6, 1 / 12]])
    expected = (around * weights).sum(dim=(1, 2))
    assert torch.allclose(filled[0, :, 3, 4], expected, atol=5 * ROAD_NOISE)
    assert torch.equal(filled[0, :, :3], x[0, :, :3])  # the pixels kept are kept exactly
    ys, xs = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    ramp = torch.stack([0.1 * ys + 0.05 * xs, -0.2 * xs, 0.03 * ys])[None]
    kept = torch.ones(2, 1, 16, 16)
    kept[0, 0, 4:12, 3:11] = 0
    kept[1] = 1.0 - kept[0]  # the other way round: only the block is kept, the border is imputed from it
    filled = impute(ramp, kept)
    error = (filled[0] - ramp[0])[:, 4:12, 3:11]
    assert error.abs().max() < 5 * ROAD_NOISE and 0.5 * ROAD_NOISE < error.std() < 2 * ROAD_NOISE
    assert torch.equal(filled[1, :, 4:12, 3:11], ramp[0, :, 4:12, 3:11])
    nothing = impute(ramp, torch.zeros(1, 1, 16, 16))  # nothing kept: the mean colour (and the noise)
    assert torch.allclose(nothing[0], ramp[0].mean(dim=(1, 2), keepdim=True).expand(3, 16, 16), atol=5 * ROAD_NOISE)


def test_road_fill_checks_a_map_like_the_others(toy, image):
    on = np.zeros((32, 32), np.float32)
    on[REGION] = 1.0
    found = DeletionInsertion(toy, steps=8, fill="road", orders=2).attribute(image, 0, heat=on)
    assert found.random.fill == "road" and found.to_json()["fill"] == "road"
    assert found.deletion.area < found.random.deletion.area and found.insertion.area > found.random.insertion.area

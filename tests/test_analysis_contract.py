"""Every analysis keeps the one contract (engine.analyses.base): a ModelAnalysis whose `attribute` gives a
result with to_json(), counts each forward pass, and names bad input with an EngineError; and every paper
figure is listed once in the engine's registry and once in the app's."""

from __future__ import annotations

import importlib
import json
import pkgutil

import numpy as np
import pytest
import torch

import engine
from app.exports import paper_findings
from engine import analyses
from engine.analyses.base import ModelAnalysis
from engine.data.cifar_subset import subset
from engine.errors import EngineError
from engine.paper.findings import FINDINGS, PAPER_FIGURES


def analysis_classes() -> list[type[ModelAnalysis]]:
    found = []
    for info in pkgutil.iter_modules(analyses.__path__):
        module = importlib.import_module(f"engine.analyses.{info.name}")
        found += [
            c
            for c in vars(module).values()
            if isinstance(c, type)
            and issubclass(c, ModelAnalysis)
            and c is not ModelAnalysis
            and c.__module__ == module.__name__
            and not c.__name__.startswith("_")
            and c.__name__ != "InputAttribution"  # the base of the input-gradient methods
        ]
    return found


@pytest.fixture(scope="module")
def model():
    return engine.create_model("vit_cifar", "random", seed=1, device="cpu")


@pytest.fixture(scope="module")
def data():
    images, labels = subset("test")
    return [np.asarray(i) for i in images[:16]], labels[:16].tolist()


def test_every_analysis_module_holds_a_model_analysis():
    names = {c.__name__ for c in analysis_classes()}
    assert names == {
        "Analyzer",
        "DatasetCurves",
        "GradCam",
        "FrequencyNoise",
        "FeatureSimilarity",
        "LesionAccuracy",
        "HessianSpectrum",
        "LossLandscape",
        "CorruptionRobustness",
        "Saliency",
        "SmoothGrad",
        "IntegratedGradients",
        "Occlusion",
        "GradientAttention",
        "LogitLens",
        "DeletionInsertion",
        "MapChecks",
    }


SMALL = {  # options that keep each run to a few seconds
    "noise": {"bands": 3},
    "similarity": {"batch_size": 8},
    "hessian": {"top_k": 1, "batch_size": 8, "batches": 1, "max_iter": 3},
    "landscape": {"dims": 1, "points": 3},
    "corruption": {"corruptions": ["gaussian_noise"], "severities": [1]},
    "maps": {"methods": ["Saliency"], "randomized": 1, "orders": 1, "fills": ["blur"]},
}


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.parametrize("name", list(FINDINGS))
def test_each_finding_counts_its_passes_reports_progress_and_gives_json(model, data, name):
    finding = FINDINGS[name]
    images, labels = data
    analysis = finding.analysis(model, **SMALL.get(name, {}))
    ticks: list[tuple[int, int]] = []
    before = model.forward_passes
    result = analysis.attribute(images, labels, lambda done, total: ticks.append((done, total)))
    assert model.forward_passes > before, "every pass goes through ModelAnalysis.forward"
    assert ticks and ticks[-1][0] == ticks[-1][1]
    stored = json.loads(json.dumps(result.to_json()))
    assert isinstance(finding.headline(stored), str) and finding.headline(stored)


@pytest.mark.parametrize("name", [n for n in FINDINGS if n != "similarity"])
def test_bad_labels_are_named(model, data, name):
    images, labels = data
    with pytest.raises(EngineError, match="16 images but 3 labels"):
        FINDINGS[name].analysis(model, **SMALL.get(name, {})).attribute(images, labels[:3])


IMAGE_ANALYSES = [c for c in analysis_classes() if c.__name__ != "DatasetCurves"]  # that one reads a folder or ZIP


@pytest.mark.parametrize("cls", IMAGE_ANALYSES, ids=lambda c: c.__name__)
def test_an_empty_or_misshapen_batch_is_named(model, cls):
    with pytest.raises(EngineError, match=r"shape \(B, 3, H, W\)|uint8 \(H, W, 3\)"):
        cls(model).attribute(torch.zeros(2, 32, 32), [0, 1])
    with pytest.raises(EngineError, match="at least"):
        cls(model).attribute([], [])


def test_the_corruption_analysis_raises_engine_errors(model):
    from engine.analyses.corruption import CorruptionRobustness

    with pytest.raises(EngineError, match="unknown corruption"):
        CorruptionRobustness(model, corruptions=["nope"])


def test_each_paper_figure_has_one_engine_entry_and_one_view_in_the_paper_order():
    assert list(paper_findings.FIGURES) == list(PAPER_FIGURES) == list(paper_findings.ORDER)
    assert [f.figure for f in PAPER_FIGURES.values()] == [
        "Fig 1a",
        "Fig 1b",
        "Figs 1c and 4",
        "Fig 2b",
        "Fig 10a",
        "Fig 10b",
        "Fig 12b",
        "Map checks",
    ]
    assert (
        set(FINDINGS)
        == {n for n, f in PAPER_FIGURES.items() if f.analysis is not None}
        == set(PAPER_FIGURES) - {"trajectory"}
    )

"""The paper's other analyses (Figs 1a, 1c/4, 2b, 10a, 10b, 12b) on the bundled CIFAR-10 family.

    model = load_member("step6")                                   # AlterNet with the paper's placement
    result = FINDINGS["hessian"].run(model, progress=...)          # a JSON-ready dict
    python -m engine findings --json assets/paper_figures.json     # all of them, as the app shows them

Each analysis runs on a bundled subset (engine.cifar_subset): the test images for accuracies, noise and
corruption robustness, similarity and lesions; the training images for the loss landscape and the
Hessian spectrum, which the paper measures on training data. The family's members are the build-up
steps of Fig 12a (`step0`, the PreAct ResNet, to `step6`, the paper's AlterNet) and the CIFAR ViT (`vit`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .cifar_subset import subset
from .corruption import CorruptionRobustness
from .errors import EngineError
from .hessian import HessianSpectrum
from .landscape import LossLandscape
from .lesion import LesionAccuracy
from .placement import PAPER_DEPTHS, buildup_sequence
from .registry import LoadedModel, create_model
from .robustness import FrequencyNoise
from .similarity import FeatureSimilarity

Progress = Callable[[int, int], None]
FIGURE_MEMBERS = ("step0", "step6", "vit")  # ResNet, AlterNet and ViT, as the paper's figures compare
ALIASES = {"resnet": "step0", "alternet": "step6"}


def members() -> dict[str, tuple[str, dict]]:
    """Family member key: (registry name, build options); build-up steps 0..6, then the ViT."""
    steps = buildup_sequence(PAPER_DEPTHS)
    family = {f"step{n}": ("alternet", {"msa": str(p)}) if n else ("preact_resnet", {}) for n, p in enumerate(steps)}
    return {**family, "vit": ("vit_cifar", {})}


def member_label(key: str) -> str:
    """How figures name a member: 'ResNet (step 0)', 'AlterNet step 6', 'ViT'."""
    key = ALIASES.get(key, key)
    if key == "vit":
        return "ViT"
    return "ResNet (step 0)" if key == "step0" else f"AlterNet step {key[4:]}"


def load_member(key: str, weights: str = "pretrained", device: str = "auto") -> LoadedModel:
    """A family member with its bundled checkpoint ('pretrained') or seeded random weights ('random')."""
    key = ALIASES.get(key, key)
    family = members()
    if key not in family:
        raise EngineError(f"unknown family member {key!r}; choose one of {', '.join([*family, *ALIASES])}")
    name, options = family[key]
    return create_model(name, weights=weights, device=device, **options)


Measure = Callable[[LoadedModel, np.ndarray, np.ndarray, "Progress | None", dict], dict]


@dataclass(frozen=True)
class Finding:
    """One of the paper's analyses: where it runs, on how many images by default, and how."""

    name: str
    figure: str
    title: str
    split: str  # the bundled subset it runs on: "test" or "train"
    images: int  # how many of its images by default (a balanced choice over the classes)
    measure: Measure
    options: dict = field(default_factory=dict)

    def data(self, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """`count` images of the subset (default `images`), the same number per class, and their labels."""
        images, labels = subset(self.split)
        count = self.images if count is None else count
        if not 10 <= count <= len(labels):
            raise EngineError(f"{self.name} runs on 10 to {len(labels)} {self.split} subset images, not {count}")
        per_class = count // 10
        pick = np.sort(np.concatenate([np.flatnonzero(labels == c)[:per_class] for c in range(10)]))
        return images[pick], labels[pick]

    def run(self, model: LoadedModel, count: int | None = None, progress: Progress | None = None, **options) -> dict:
        """The analysis of `model` on the subset, as JSON; `options` override the defaults (e.g. `other`)."""
        images, labels = self.data(count)
        return self.measure(model, images, labels, progress, {**self.options, **options})


def _noise(model, images, labels, progress, o) -> dict:
    return FrequencyNoise(model, rms=o["rms"]).attribute(list(images), labels, progress).to_json()


def _similarity(model, images, labels, progress, o) -> dict:
    return FeatureSimilarity(model, o.get("other"), o["batch_size"]).attribute(list(images), progress).to_json()


def _lesion(model, images, labels, progress, o) -> dict:
    return LesionAccuracy(model).attribute(list(images), labels, progress).to_json()


def _hessian(model, images, labels, progress, o) -> dict:
    spectrum = HessianSpectrum(model, top_k=o["top_k"], batch_size=o["batch_size"], batches=o["batches"])
    return spectrum.attribute(list(images), labels, progress).to_json()


def _landscape(model, images, labels, progress, o) -> dict:
    landscape = LossLandscape(model, dims=o["dims"], points=o["points"], span=o["span"])
    return landscape.attribute(list(images), labels, progress).to_json()


def _corruption(model, images, labels, progress, o) -> dict:
    return CorruptionRobustness(model).attribute(images, labels, progress).to_json()


FINDINGS: dict[str, Finding] = {
    f.name: f
    for f in (
        Finding("noise", "Fig 2b", "accuracy drop under band-limited noise", "test", 1000, _noise, {"rms": 0.5}),
        Finding(
            "similarity",
            "Fig 10a",
            "feature-map similarity (linear CKA)",
            "test",
            500,
            _similarity,
            {"batch_size": 100},
        ),
        Finding("lesion", "Fig 10b", "accuracy drop when one unit is removed", "test", 1000, _lesion),
        Finding(
            "hessian",
            "Figs 1c and 4",
            "Hessian max-eigenvalue spectrum",
            "train",
            500,
            _hessian,
            {"top_k": 5, "batch_size": 16, "batches": 4},
        ),
        Finding(
            "landscape",
            "Fig 1a",
            "loss landscape (NLL + L2)",
            "train",
            200,
            _landscape,
            {"dims": 2, "points": 9, "span": 1.0},
        ),
        Finding("corruption", "Fig 12b", "accuracy under CIFAR-10-C corruptions", "test", 200, _corruption),
    )
}


def compute(
    name: str,
    runs: list[tuple[str, str | None]],
    load: Callable[[str], LoadedModel],
    count: int | None = None,
    progress: Callable[[str], Progress] | None = None,
    stored: Callable[[dict], None] | None = None,
) -> dict:
    """Analysis `name` of each run (a member, or a member and the member to compare it with), as stored in
    assets/paper_figures.json: the figure, the data and settings, and per run the label, weights, result
    and seconds. `load(member)` gives the model; `progress(label)` a run's progress callback; `stored(section)`
    is called after each run with the section so far."""
    if name not in FINDINGS:
        raise EngineError(f"unknown analysis {name!r}; choose from {', '.join(FINDINGS)}")
    finding = FINDINGS[name]
    section = {
        "figure": finding.figure,
        "title": finding.title,
        "split": finding.split,
        "images": finding.images if count is None else count,
        "options": finding.options,
        "models": {},
    }
    for key, other in runs:
        label = member_label(key) if other is None else f"{member_label(key)} vs {member_label(other)}"
        model = load(key)
        extra = {} if other is None else {"other": load(other)}
        start = time.perf_counter()
        result = finding.run(model, count, progress(label) if progress else None, **extra)
        section["models"][key if other is None else f"{key}:{other}"] = {
            "label": label,
            "model": model.name,
            "weights": model.weights,
            "random_weights": model.random,
            "seconds": round(time.perf_counter() - start, 1),
            "result": result,
        }
        if stored:
            stored(section)
    return section


def headline(name: str, result: dict) -> str:
    """One line with the numbers of a result that matter for the paper's claim."""
    if name == "noise":
        drops = result["accuracy_drop"] or result["probability_drop"]
        worst = int(np.argmax(drops))
        clean = "" if result["clean_accuracy"] is None else f"clean accuracy {100 * result['clean_accuracy']:.1f}%, "
        return f"{clean}largest drop {100 * drops[worst]:.1f} points at {result['frequencies'][worst]:.1f}π"
    if name == "similarity":
        cka = np.array(result["cka"])
        return f"{cka.shape[0]}x{cka.shape[1]} blocks, mean CKA {cka.mean():.2f}"
    if name == "lesion":
        worst = max(result["units"], key=lambda u: u["drop"])
        return (
            f"clean accuracy {100 * result['clean_accuracy']:.1f}%, largest drop {100 * worst['drop']:.1f} points "
            f"without {worst['name']} ({worst['kind']})"
        )
    if name == "hessian":
        top = np.array(result["eigenvalues"])[:, 0]
        return f"top eigenvalue {top.mean():.3g} on average over {len(top)} minibatches, NEP {100 * result['nep']:.0f}%"
    if name == "landscape":
        loss = np.array(result["loss"])
        centre = loss[tuple(s // 2 for s in loss.shape)]
        return f"NLL + L2 {centre:.3f} at the trained weights, {loss.max():.4g} at most on the grid"
    if name == "corruption":
        return (
            f"clean accuracy {100 * result['clean_accuracy']:.1f}%, "
            f"corrupted {100 * result['mean_accuracy']:.1f}% on average"
        )
    if name == "trajectory":
        return (
            f"{len(result['r'])} points from epoch 0 to {result['epochs'][-1]:g}; "
            f"θ up to {max(result['theta_deg']):.0f}°, r from 1 down to {min(result['r']):.2f}"
        )
    raise EngineError(f"unknown analysis {name!r}")

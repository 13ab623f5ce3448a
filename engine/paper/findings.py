"""The paper's other analyses (Figs 1a, 1c/4, 2b, 10a, 10b, 12b) on the bundled CIFAR-10 family, and the checks of
the app's map methods (deletion, insertion, the randomization test).

    model = load_member("step6")                                   # AlterNet with the paper's placement
    result = FINDINGS["hessian"].run(model, progress=...)          # a JSON-ready dict
    FINDINGS["hessian"].headline(result)                           # its numbers in a line
    python -m engine findings --json assets/paper_figures.json     # all of them, as the app shows them

Each analysis runs on a bundled subset (engine.data.cifar_subset): the test images for accuracies, noise and
corruption robustness, similarity and lesions; the training images for the loss landscape and the
Hessian spectrum, which the paper measures on training data. The family's members are the build-up
steps of Fig 12a (`step0`, the PreAct ResNet, to `step6`, the paper's AlterNet) and the CIFAR ViT (`vit`).
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from ..analyses import corruption, hessian, landscape, lesion, map_checks, noise, similarity
from ..analyses.base import ModelAnalysis, Progress
from ..data.cifar_subset import subset
from ..errors import EngineError
from ..models.checkpoint import read_meta
from ..models.cifar_family import bundled_path
from ..models.member_accuracy import member_accuracy, trained_summary
from ..models.placement import PAPER_DEPTHS, buildup_sequence
from ..models.registry import ASSETS, LoadedModel, create_model

FIGURE_MEMBERS = ("step0", "step6", "vit")  # ResNet, AlterNet and ViT, as the paper's figures compare
ALIASES = {"resnet": "step0", "alternet": "step6"}
STORE = ASSETS / "paper_figures.json"  # the stored results the app shows (`python -m engine findings --json`)


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


def bundled_member(key: str) -> Path | None:
    """The path of member `key`'s bundled checkpoint, None when none is bundled."""
    name, options = members()[ALIASES.get(key, key)]
    return bundled_path(name, options)


def bundled_summary(key: str) -> str | None:
    """How member `key`'s bundled checkpoint describes itself now ('trained here: 40 epochs, 88.1% CIFAR-10
    test accuracy, mean of 3 seeds'); None when none is bundled."""
    path = bundled_member(key)
    return None if path is None else trained_summary(path)


def bundled_checkpoint(key: str) -> str | None:
    """The identity of member `key`'s bundled checkpoint (CheckpointMeta.identity); None when none is bundled."""
    path = bundled_member(key)
    return None if path is None else read_meta(path).identity()


def measured_with(run: dict) -> str:
    """A stored run's weights without the checkpoint's file name ('trained here: 15 epochs, ...')."""
    return run["weights"].split(" (")[0]


def shown_weights(key: str, run: dict) -> str:
    """A stored run's weights as the page names them: the member's bundled checkpoint as it describes itself now
    (its one test accuracy) where that is the checkpoint measured, else as stored. A pair's entry (similarity's
    'step6:step0') is its first member's."""
    member = key.split(":")[0]
    if member in members() and not run.get("random_weights") and run.get("checkpoint") == bundled_checkpoint(member):
        return bundled_summary(member) or measured_with(run)
    return measured_with(run)


def quoted_accuracy(key: str, run: dict) -> str | None:
    """The one accuracy to quote for a stored run's model, where it measured member `key`'s bundled checkpoint:
    '88.1% on the 10,000 CIFAR-10 test images, mean of 3 seeds'; None for random weights, an older checkpoint or a
    pair of models (similarity's 'step6:step0')."""
    member = key
    if member not in members() or run.get("random_weights") or run.get("checkpoint") != bundled_checkpoint(member):
        return None
    accuracy = member_accuracy(bundled_member(member))
    return None if accuracy is None else accuracy.quoted()


def outdated(section: dict) -> dict[str, tuple[str, str]]:
    """The members of a stored `section` whose trained weights have since been replaced in the bundle:
    label -> (the weights it was measured with, the bundled ones now). Random-weight runs never are."""
    family, changed = members(), {}
    for key, run in section.get("models", {}).items():
        if key not in family or run.get("random_weights"):
            continue  # a pair's entry (similarity) goes with its members
        now = bundled_checkpoint(key)
        if now is not None and run.get("checkpoint") != now:
            changed[run["label"]] = (measured_with(run), bundled_summary(key))
    return changed


def load_member(key: str, weights: str = "pretrained", device: str = "auto") -> LoadedModel:
    """A family member with its bundled checkpoint ('pretrained') or seeded random weights ('random')."""
    key = ALIASES.get(key, key)
    family = members()
    if key not in family:
        raise EngineError(f"unknown family member {key!r}; choose one of {', '.join([*family, *ALIASES])}")
    name, options = family[key]
    return create_model(name, weights=weights, device=device, **options)


@dataclass(frozen=True)
class Finding:
    """One of the paper's figures: its analysis, where it runs and on how many images by default, and the
    line of numbers that sums a result up. A figure without an analysis is recorded during training (Fig 1b)."""

    name: str  # also its key in assets/paper_figures.json
    figure: str
    title: str
    headline: Callable[[dict], str]
    analysis: type[ModelAnalysis] | None = None
    split: str = "test"  # the bundled subset it runs on: "test" or "train"
    images: int = 0  # how many of its images by default (a balanced choice over the classes)
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
        if self.analysis is None:
            raise EngineError(f"{self.figure} is recorded while training, not computed from a trained model")
        images, labels = self.data(count)
        analysis = self.analysis(model, **{**self.options, **options})
        return analysis.attribute(list(images), labels, progress).to_json()


def _trajectory_headline(result: dict) -> str:
    return (
        f"{len(result['r'])} points from epoch 0 to {round(result['epochs'][-1], 1):g}; "
        f"θ up to {max(result['theta_deg']):.0f}°, r from 1 down to {min(result['r']):.2f}"
    )


PAPER_FIGURES: dict[str, Finding] = {  # in the paper's order
    f.name: f
    for f in (
        Finding(
            "landscape",
            "Fig 1a",
            "loss landscape (NLL + L2)",
            landscape.headline,
            landscape.LossLandscape,
            "train",
            200,
            {"dims": 2, "points": 9, "span": 1.0},
        ),
        Finding("trajectory", "Fig 1b", "training trajectory", _trajectory_headline),
        Finding(
            "hessian",
            "Figs 1c and 4",
            "Hessian max-eigenvalue spectrum",
            hessian.headline,
            hessian.HessianSpectrum,
            "train",
            500,
            {"top_k": 5, "batch_size": 16, "batches": 4},
        ),
        Finding(
            "noise",
            "Fig 2b",
            "accuracy drop under band-limited noise",
            noise.headline,
            noise.FrequencyNoise,
            "test",
            1000,
            {"rms": 0.5},
        ),
        Finding(
            "similarity",
            "Fig 10a",
            "feature-map similarity (linear CKA)",
            similarity.headline,
            similarity.FeatureSimilarity,
            "test",
            500,
            {"batch_size": 100},
        ),
        Finding(
            "lesion",
            "Fig 10b",
            "accuracy drop when one unit is removed",
            lesion.headline,
            lesion.LesionAccuracy,
            "test",
            1000,
        ),
        Finding(
            "corruption",
            "Fig 12b",
            "accuracy under CIFAR-10-C corruptions",
            corruption.headline,
            corruption.CorruptionRobustness,
            "test",
            200,
        ),
        Finding(  # not one of the paper's figures: whether the maps the app draws can be trusted
            "maps",
            "Map checks",
            "deletion, insertion and the randomization test of each map method",
            map_checks.headline,
            map_checks.MapChecks,
            "test",
            200,
            {"randomized": map_checks.RANDOMIZED, "fills": list(map_checks.FILLS), "orders": 3},
        ),
    )
}
FINDINGS = {name: f for name, f in PAPER_FIGURES.items() if f.analysis}  # those computed from trained models


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
            "checkpoint": None if model.random else bundled_checkpoint(key),
            "random_weights": model.random,
            "seconds": round(time.perf_counter() - start, 1),
            "result": result,
        }
        if stored:
            stored(section)
    return section


def corruption_correct(models: dict[str, LoadedModel], section: dict) -> dict[str, np.ndarray]:
    """Per member, which of Fig 12b's corrupted images it classifies correctly: bits in the order corruption,
    severity, image, on the images and settings of the stored `section` (each corrupted copy made once, as
    CorruptionRobustness makes it, and shown to every model), for paired comparisons (engine.paper.paired)."""
    from ..analyses.corruption import CorruptionRobustness, corrupt, corruption_rng

    images, labels = FINDINGS["corruption"].data(section["images"])
    first = next(iter(section["models"].values()))["result"]
    judges = {
        key: CorruptionRobustness(model, first["corruptions"], first["severities"]) for key, model in models.items()
    }
    truth = torch.as_tensor(labels)
    hits: dict[str, list[np.ndarray]] = {key: [] for key in models}
    for name in first["corruptions"]:
        for severity in first["severities"]:
            rng = corruption_rng(0, name, severity)
            corrupted = [corrupt(image, name, severity, rng) for image in images]
            for key, judge in judges.items():
                hits[key].append((judge._predict(corrupted).cpu() == truth).numpy())
    return {key: np.concatenate(parts) for key, parts in hits.items()}


def corruption_disagreements(run: dict, correct: np.ndarray) -> list[str]:
    """Where a member's bits (corruption_correct) disagree with its stored Fig 12b `run`: each corruption and
    severity whose number of correct images differs from the stored accuracy's, and the mean accuracy where it
    differs beyond the stored (float32) precision. Empty when the bits reproduce the stored figure."""
    result = run["result"]
    images, severities = result["images"], len(result["severities"])
    expected = len(result["corruptions"]) * severities * images
    if len(correct) != expected:
        return [f"{len(correct)} bits for {expected} corrupted images"]
    cells = np.asarray(correct, bool).reshape(len(result["corruptions"]), severities, images).sum(-1)
    wrong = [
        f"{name} severity {severity}: {int(cells[i, j])} of {images} correct, stored {stored:.4f}"
        for i, name in enumerate(result["corruptions"])
        for j, (severity, stored) in enumerate(zip(result["severities"], result["accuracy"][name]))
        if int(cells[i, j]) != round(stored * images)
    ]
    if abs(float(np.mean(correct)) - result["mean_accuracy"]) > 1e-6:
        wrong.append(f"mean {float(np.mean(correct)):.6f}, stored {result['mean_accuracy']:.6f}")
    return wrong


def pack_bits(correct: np.ndarray) -> str:
    """Bits as base64 text, for the JSON store."""
    return base64.b64encode(np.packbits(np.asarray(correct, bool)).tobytes()).decode("ascii")


def unpack_bits(text: str, count: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(base64.b64decode(text), np.uint8), count=count).astype(bool)

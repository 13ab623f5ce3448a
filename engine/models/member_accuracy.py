"""A trained member's CIFAR-10 test accuracy: one number from one source wherever it is shown (model labels, the
AlterNet tab, the tour, the README and the docs). A run's accuracy is that of its per-image bits on the 10,000 test
images where they are stored (`X.correct.npz`), else its sidecar's; a member with further seeds bundled beside it
(`X-seed<N>`) is their mean, and says so.

    accuracy = member_accuracy(bundled_path("preact_resnet", {}))
    accuracy.short()      # '88.1% (mean of 3 seeds)'
    accuracy.quoted()     # '88.1% on the 10,000 CIFAR-10 test images, mean of 3 seeds': the number to quote
    accuracy.detailed()   # '88.1% (87.9, 88.3, 88.1 over seeds 0, 1, 2)'
    trained_summary(path) # 'trained here: 40 epochs, 88.1% CIFAR-10 test accuracy, mean of 3 seeds'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import correctness
from .checkpoint import paths, read_meta


@dataclass(frozen=True)
class Run:
    """One training run of a member: its seed, accuracy on the test split and, where stored, its bit per image."""

    seed: int
    stem: str
    epochs: float
    accuracy: float
    correct: np.ndarray | None  # bool per test image, None where not scored yet


def run_at(path: str | Path, seed: int = 0) -> Run | None:
    """The run whose checkpoint is `path`; None when neither bits nor sidecar give its accuracy."""
    weights, sidecar = paths(path)
    if not sidecar.is_file():
        return None
    meta = read_meta(weights)
    try:
        scored = correctness.load(weights)
    except Exception:  # not scored yet: the sidecar's accuracy, and no paired test
        scored = None
    if scored is None and meta.test_accuracy is None:
        return None
    accuracy = scored.accuracy if scored is not None else meta.test_accuracy
    return Run(seed, weights.stem, meta.epochs, accuracy, None if scored is None else scored.correct)


def runs_at(path: str | Path) -> list[Run]:
    """The runs of the member whose (seed 0) checkpoint is `path`: it, then its `-seed<N>` siblings by seed."""
    first = paths(path)[0]
    siblings = sorted(
        (int(m.group(1)), sibling)
        for sibling in first.parent.glob(f"{first.stem}-seed*.safetensors")
        if (m := re.fullmatch(re.escape(first.stem) + r"-seed(\d+)", sibling.stem))
    )
    return [run for seed, found in [(0, first), *siblings] if (run := run_at(found, seed)) is not None]


def seeds_text(runs: list[Run]) -> str:
    """'87.7%' for one run; '87.8% (87.7, 87.9, 87.8 over seeds 0, 1, 2)' for several."""
    mean = 100 * float(np.mean([r.accuracy for r in runs]))
    if len(runs) == 1:
        return f"{mean:.1f}%"
    each = ", ".join(f"{100 * r.accuracy:.1f}" for r in runs)
    return f"{mean:.1f}% ({each} over seeds {', '.join(str(r.seed) for r in runs)})"


@dataclass(frozen=True)
class MemberAccuracy:
    """A member's test accuracy over its bundled runs."""

    runs: tuple[Run, ...]

    @property
    def mean(self) -> float:
        return float(np.mean([r.accuracy for r in self.runs]))

    @property
    def seeds(self) -> str:
        """'mean of 3 seeds', or '' for one run."""
        return f"mean of {len(self.runs)} seeds" if len(self.runs) > 1 else ""

    @property
    def images(self) -> int | None:
        """How many test images the accuracy is over, where its per-image bits are stored (10,000)."""
        return None if self.runs[0].correct is None else len(self.runs[0].correct)

    def quoted(self) -> str:
        """The number to quote for the model: '88.1% on the 10,000 CIFAR-10 test images, mean of 3 seeds'."""
        over = f"on the {self.images:,} CIFAR-10 test images" if self.images else "CIFAR-10 test accuracy"
        return f"{100 * self.mean:.1f}% {over}" + (f", {self.seeds}" if self.seeds else "")

    def short(self) -> str:
        """'88.1% (mean of 3 seeds)', or '87.9%' for one run."""
        return f"{100 * self.mean:.1f}%" + (f" ({self.seeds})" if self.seeds else "")

    def detailed(self) -> str:
        """The mean and each seed's: '88.1% (87.9, 88.3, 88.1 over seeds 0, 1, 2)'."""
        return seeds_text(list(self.runs))


def member_accuracy(path: str | Path | None) -> MemberAccuracy | None:
    """The accuracy of the member whose checkpoint is `path`; None without a checkpoint or an accuracy."""
    runs = [] if path is None else runs_at(path)
    return MemberAccuracy(tuple(runs)) if runs else None


def trained_summary(path: str | Path) -> str:
    """One line for labels: 'trained here: 40 epochs, 88.1% CIFAR-10 test accuracy, mean of 3 seeds'."""
    meta = read_meta(path)
    epochs = f"{meta.epochs:g} epoch{'s' if meta.epochs != 1 else ''}"
    data = "CIFAR-10" if meta.data.startswith("CIFAR-10") else (meta.data or "its")
    accuracy = member_accuracy(path)
    if accuracy is None:
        return f"trained here: {epochs}"
    seeds = f", {accuracy.seeds}" if accuracy.seeds else ""
    return f"trained here: {epochs}, {100 * accuracy.mean:.1f}% {data} test accuracy{seeds}"

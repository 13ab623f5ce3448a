"""Lesions (paper Fig 10b): residual units switched off, their branch skipped and shortcut kept.

with Lesion(model, [3, 5]): ...                             # units 3 and 5 off inside the block
result = LesionAccuracy(model).attribute(images, labels)    # accuracy with each unit off in turn
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import EngineError
from ..models.registry import LoadedModel
from .base import Images, Labels, ModelAnalysis, Progress, owned


def _zero_branch(module: nn.Module, args: tuple, output: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(output)


class Lesion:
    """Switch off the units at `indices` (block indices of the model's split) until `remove()`.

    Usable as a context manager. Embed and subsampling blocks cannot be switched off.
    """

    def __init__(self, model: LoadedModel, indices: Iterable[int]) -> None:
        specs = model.spec.blocks(model.module)
        self.indices = sorted(set(indices))
        for index in self.indices:
            if not 0 <= index < len(specs):
                raise EngineError(f"{model.name} has blocks 0..{len(specs) - 1}; there is no block {index}")
            if not specs[index].can_lesion:
                spec = specs[index]
                raise EngineError(f"block {index} ({spec.name}) is {spec.kind} and cannot be switched off")
        self._branches = [specs[i].branch for i in self.indices]
        self._handles: list[torch.utils.hooks.RemovableHandle] = []

    def apply(self) -> "Lesion":
        self._handles = [b.register_forward_hook(owned(_zero_branch), prepend=True) for b in self._branches]
        return self

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def __enter__(self) -> "Lesion":
        return self.apply()

    def __exit__(self, *exc) -> None:
        self.remove()


@dataclass
class LesionedUnit:
    """One switched-off unit: where it sits and the accuracy and mean NLL without it."""

    index: int
    name: str
    kind: str
    normalized_depth: float
    accuracy: float
    nll: float
    drop: float  # clean accuracy - accuracy


@dataclass
class LesionResult:
    """Fig 10b: the accuracy with nothing removed, and with each removable unit removed in turn."""

    model: str
    clean_accuracy: float
    clean_nll: float
    units: list[LesionedUnit]
    images: int

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "clean_accuracy": self.clean_accuracy,
            "clean_nll": self.clean_nll,
            "units": [asdict(unit) for unit in self.units],
            "images": self.images,
        }


class LesionAccuracy(ModelAnalysis):
    """Fig 10b: how much the accuracy drops when one unit (Conv, MSA or MLP) is switched off."""

    def _evaluate(self, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        """Accuracy and mean NLL of the model as it stands."""
        logits = self.logits(x)
        self.check_labels(y, logits.shape[-1])
        nll = float(F.cross_entropy(logits, y))
        return int((logits.argmax(-1) == y).sum()) / len(y), nll

    def attribute(self, images: Images, labels: Labels | None = None, progress: Progress | None = None) -> LesionResult:
        """Accuracy over `images` (files/PIL/arrays, or a preprocessed (B, 3, H, W) batch) and their labels,
        clean and with each removable unit off; `progress(done, total)` after each of the 1 + units passes."""
        x = self.inputs(images)
        y = self.targets(labels, len(x))
        specs = self.model.spec.blocks(self.model.module)
        removable = [i for i, spec in enumerate(specs) if spec.can_lesion]
        last = max(len(specs) - 1, 1)
        clean_accuracy, clean_nll = self._evaluate(x, y)
        if progress:
            progress(1, 1 + len(removable))
        units = []
        for done, index in enumerate(removable, 2):
            with Lesion(self.model, [index]):
                accuracy, nll = self._evaluate(x, y)
            spec = specs[index]
            units.append(
                LesionedUnit(index, spec.name, spec.kind, index / last, accuracy, nll, clean_accuracy - accuracy)
            )
            if progress:
                progress(done, 1 + len(removable))
        return LesionResult(self.model.name, clean_accuracy, clean_nll, units, len(x))


KIND_NAMES = {"msa": "MSA", "conv": "Conv", "mlp": "MLP"}


def headline(result: dict) -> str:
    """Fig 10b's numbers in a line: clean accuracy, the unit whose removal hurts most, and the range of
    drops for each kind of unit (MSA against Conv is the AlterNet's claim)."""
    worst = max(result["units"], key=lambda u: u["drop"])
    drops: dict[str, list[float]] = {}
    for unit in result["units"]:
        drops.setdefault(unit["kind"], []).append(100 * unit["drop"])
    ranges = ", ".join(f"{KIND_NAMES.get(kind, kind)} units {min(d):.1f} to {max(d):.1f}" for kind, d in drops.items())
    return (
        f"clean accuracy {100 * result['clean_accuracy']:.1f}%, largest drop {100 * worst['drop']:.1f} points "
        f"without {worst['name']} ({worst['kind']}); {ranges}"
    )

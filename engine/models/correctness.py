"""Per-image correctness of a checkpoint on the CIFAR-10 test split: a bit per image, beside the checkpoint
(`X.correct.npz` next to `X.safetensors`), for paired comparisons of two members on the same images."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import CheckpointError


@dataclass(frozen=True)
class Correctness:
    """Which test images a model classifies correctly, in the test split's order, with their labels (the
    labels tie two files to the same images in the same order)."""

    correct: np.ndarray  # bool, one per test image
    labels: np.ndarray  # uint8 class index, one per test image

    @property
    def accuracy(self) -> float:
        return float(self.correct.mean())


def path_for(checkpoint: str | Path) -> Path:
    """`X.correct.npz` for checkpoint `X`, `X.safetensors` or `X.json`."""
    text = str(checkpoint)
    for suffix in (".safetensors", ".json"):
        text = text.removesuffix(suffix)
    return Path(text + ".correct.npz")


def save(checkpoint: str | Path, correct: np.ndarray, labels: np.ndarray) -> Path:
    """Write the bits (packed) and the labels beside `checkpoint`."""
    correct, labels = np.asarray(correct, bool), np.asarray(labels)
    if correct.shape != labels.shape:
        raise ValueError(f"{correct.shape[0]} correctness bits for {labels.shape[0]} labels")
    out = path_for(checkpoint)
    np.savez_compressed(out, bits=np.packbits(correct), count=len(correct), labels=labels.astype(np.uint8))
    return out


def load(checkpoint: str | Path) -> Correctness:
    """The stored correctness of `checkpoint`."""
    path = path_for(checkpoint)
    if not path.is_file():
        raise CheckpointError(f"{path.name} is missing: run scripts/score_test_split.py for this checkpoint")
    with np.load(path) as stored:
        count = int(stored["count"])
        return Correctness(np.unpackbits(stored["bits"], count=count).astype(bool), stored["labels"].copy())

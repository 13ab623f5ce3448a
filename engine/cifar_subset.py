"""The bundled CIFAR-10 test subset (assets/cifar10_test_subset.npz): 100 test images per class of the
JPEG-q75 re-encoding, made by scripts/make_cifar_subset.py. Used for accuracies and dataset-average curves."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .registry import ASSETS

SUBSET = ASSETS / "cifar10_test_subset.npz"


@lru_cache(maxsize=1)
def subset() -> tuple[np.ndarray, np.ndarray]:
    """(1000, 32, 32, 3) uint8 images and their (1000,) int labels."""
    with np.load(SUBSET) as data:
        return data["images"], data["labels"]


def balanced(count: int) -> np.ndarray:
    """Indices of `count` subset images, the same number from every class (first ones first)."""
    labels = subset()[1]
    per_class = max(count // 10, 1)
    return np.sort(np.concatenate([np.flatnonzero(labels == c)[:per_class] for c in range(10)]))

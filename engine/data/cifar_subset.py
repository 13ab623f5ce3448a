"""The bundled CIFAR-10 subsets, made by scripts/make_cifar_subset.py from the JPEG-q75 re-encoding:
assets/cifar10_test_subset.npz (100 test images per class), for accuracies and dataset-average curves,
and assets/cifar10_train_subset.npz (50 training images per class), for the loss landscapes and
Hessian spectra, which the paper measures on training data."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..models.registry import ASSETS

SUBSET = ASSETS / "cifar10_test_subset.npz"
TRAIN_SUBSET = ASSETS / "cifar10_train_subset.npz"


@lru_cache(maxsize=2)
def subset(split: str = "test") -> tuple[np.ndarray, np.ndarray]:
    """(N, 32, 32, 3) uint8 images and their (N,) int labels of the bundled `split` subset."""
    with np.load(SUBSET if split == "test" else TRAIN_SUBSET) as data:
        return data["images"], data["labels"]


def balanced(count: int, split: str = "test") -> np.ndarray:
    """Indices of `count` subset images, the same number from every class (first ones first)."""
    labels = subset(split)[1]
    per_class = max(count // 10, 1)
    return np.sort(np.concatenate([np.flatnonzero(labels == c)[:per_class] for c in range(10)]))

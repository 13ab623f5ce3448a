"""Typed results of an analysis, and their JSON form (the CLI's and the app's `/analyze` output)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Prediction:
    label: str
    index: int
    probability: float


@dataclass
class BlockResult:
    """The paper's measurements of one latent (MEASUREMENTS.md sections 3 and 4)."""

    index: int
    name: str
    kind: str
    shape: tuple[int, ...]
    normalized_depth: float
    variance: float
    fourier: list[float]

    @property
    def high_freq(self) -> float:
        """The Δ log amplitude at the highest frequency (1.0π): the last value of the curve."""
        return self.fourier[-1]

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "name": self.name,
            "kind": self.kind,
            "shape": list(self.shape),
            "normalized_depth": self.normalized_depth,
            "variance": self.variance,
            "fourier": self.fourier,
            "high_freq": self.high_freq,
        }


@dataclass
class AttentionLayer:
    """One MSA layer: per-head maps over the image grid and the mean attention distance per head.

    `maps` is (images, heads, h, w): for global attention the CLS-to-patch row; for windowed
    attention the mean attention each position receives within its window, mapped back.
    """

    name: str
    block_index: int
    maps: np.ndarray
    mean_distance: list[float]
    even_distance: float | None = None  # what attention spread evenly over the patches (or window) would give

    @property
    def heads(self) -> int:
        return self.maps.shape[1]

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "block_index": self.block_index,
            "heads": self.heads,
            "grid": list(self.maps.shape[2:]),
            "mean_distance": self.mean_distance,
            "even_distance": self.even_distance,
        }


@dataclass
class AttentionResult:
    kind: str  # "global" (CLS attention) or "window" (local windows)
    layers: list[AttentionLayer]
    rollout: np.ndarray | None = None  # (images, h, w), global attention with one grid only

    def to_json(self) -> dict:
        return {"kind": self.kind, "layers": [layer.to_json() for layer in self.layers]}


@dataclass
class ModelResult:
    """Everything measured on one model for a set of images."""

    name: str
    label: str
    weights: str
    dataset: str
    images: int
    predictions: list[list[Prediction]]
    blocks: list[BlockResult]
    attention: AttentionResult | None = None
    input_images: np.ndarray | None = field(default=None, repr=False)  # (images, H, W, 3) uint8 as the model saw them
    random_weights: bool = False  # seeded random weights: predictions and maps are not meaningful

    def to_json(self) -> dict:
        out = {
            "name": self.name,
            "label": self.label,
            "weights": self.weights,
            "random_weights": self.random_weights,
            "dataset": self.dataset,
            "images": self.images,
            "predictions": [
                [{"label": p.label, "index": p.index, "probability": p.probability} for p in image]
                for image in self.predictions
            ],
            "blocks": [b.to_json() for b in self.blocks],
        }
        if self.attention is not None:
            out["attention"] = self.attention.to_json()
        return out


@dataclass
class Analysis:
    models: list[ModelResult]
    device: str

    def to_json(self) -> dict:
        return {"device": self.device, "models": [m.to_json() for m in self.models]}


@dataclass
class AttributionMap:
    """Where a model looks for one class: an (H, W) map in [0, 1] on its input grid."""

    method: str
    target: int  # the class explained
    label: str
    map: np.ndarray = field(repr=False)
    raw: np.ndarray | None = field(default=None, repr=False)  # (H, W) signed, before scaling
    delta: float | None = None  # captum's convergence delta (Integrated Gradients)
    total: float | None = None  # the sum of all attributions (IG: close to f(x) - f(baseline))

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "target": self.target,
            "label": self.label,
            "delta": self.delta,
            "map": self.map.round(4).tolist(),
        }

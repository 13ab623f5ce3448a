"""Figs 8 and 9's per-unit claims image by image: over the bundled test subset, on how many images each MSA or
Conv/MLP unit lowers (raises) the feature-map variance and the high-frequency Δ log amplitude, and for each model
the count of units doing so on the mean over the images (what engine.paper.claims.Evidence counts) with a bootstrap
interval over the images, so "0 of 6 MSA units lower the variance" carries how stable it is.

    spread = measure(load_member("step6"))      # 1,000 subset images
    spread.msa_lower_variance                    # UnitCount(changed=0, units=6, low=0, high=0)
    python -m engine.paper.unit_spread                 # every trained member, stored in assets/unit_claims.json

A unit "lowers" a value on an image when the value after it is below the value after the unit before it
(engine.paper.claims); pool blocks and the stem are left out.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from ..analyses.measure import map_statistics, to_bchw
from ..models.registry import ASSETS, LoadedModel

STORE = ASSETS / "unit_claims.json"
RESAMPLES = 2000
MSA, OTHERS = ("msa",), ("conv", "mlp")


@dataclass(frozen=True)
class UnitShare:
    """One unit: the share of images on which the value after it is below the value before it."""

    name: str
    kind: str
    lowers_variance: float
    lowers_high_freq: float


@dataclass(frozen=True)
class UnitCount:
    """How many of `units` units changed a value the paper's way on the mean over the images, and the 95%
    bootstrap interval of that count over the images."""

    changed: int
    units: int
    low: int
    high: int

    @property
    def share(self) -> float | None:
        return self.changed / self.units if self.units else None

    @property
    def most(self) -> bool:
        return self.changed * 2 > self.units

    def spread(self) -> str:
        """In words first: '0 of 6 (0 to 1 in 95 of 100 resamples of the images)', or '0 of 6 (in every resample
        of the images)' when the interval is a point."""
        if self.low == self.high == self.changed:
            return f"{self.changed} of {self.units} (in every resample of the images)"
        return f"{self.changed} of {self.units} ({self.low} to {self.high} in 95 of 100 resamples of the images)"


@dataclass(frozen=True)
class UnitSpread:
    """A model's per-unit shares over `images` images and the four counts with their intervals."""

    label: str
    weights: str
    images: int
    units: tuple[UnitShare, ...]
    msa_lower_variance: UnitCount
    others_raise_variance: UnitCount
    msa_lower_high_frequency: UnitCount
    others_raise_high_frequency: UnitCount
    checkpoint: str = ""  # the identity of the checkpoint measured (CheckpointMeta.identity)

    def shares(self, kinds: tuple[str, ...], value: str, lower: bool) -> list[float]:
        """Per unit of `kinds`, the share of images on which it lowers (`lower`) or raises `value`."""
        field = "lowers_variance" if value == "variance" else "lowers_high_freq"
        return [getattr(u, field) if lower else 1 - getattr(u, field) for u in self.units if u.kind in kinds]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> UnitSpread:
        counts = {k: UnitCount(**v) for k, v in data.items() if isinstance(v, dict)}
        units = tuple(UnitShare(**u) for u in data["units"])
        return cls(data["label"], data["weights"], data["images"], units, **counts, checkpoint=data["checkpoint"])


def per_image(model: LoadedModel, images: np.ndarray, batch_size: int = 100) -> tuple[list, np.ndarray, np.ndarray]:
    """(block specs, variance (blocks, images), high-frequency Δ log amplitude (blocks, images)): the values
    engine.analyses.block_measures averages, kept per image."""
    specs = model.spec.blocks(model.module)
    variance: list[list[torch.Tensor]] = [[] for _ in specs]
    high: list[list[torch.Tensor]] = [[] for _ in specs]

    def on_latent(index: int, latent: torch.Tensor) -> None:
        stats = map_statistics(to_bchw(latent, specs[index]))
        amplitudes = stats.log_amplitudes()
        variance[index].append(stats.variances().cpu())
        high[index].append((amplitudes[..., -1] - amplitudes[..., 0]).cpu())

    from ..analyses.block_measures import Analyzer, watch_latents

    batch = Analyzer(model, batch_size).inputs(list(images))
    handles = watch_latents(specs, on_latent)
    try:
        with torch.inference_mode():
            for start in range(0, len(batch), batch_size):
                model.module(batch[start : start + batch_size].to(model.device))
    finally:
        for handle in handles:
            handle.remove()
    return (
        specs,
        torch.stack([torch.cat(v) for v in variance]).numpy(),
        torch.stack([torch.cat(h) for h in high]).numpy(),
    )


def _count(
    values: np.ndarray, kinds: list[str], wanted: tuple[str, ...], lower: bool, weights: np.ndarray
) -> UnitCount:
    """Units of `wanted` kinds changing `values` (blocks, images) the paper's way on the image mean, and the
    count's 2.5-97.5 percentiles over the bootstrap `weights` (resamples, images; multinomial counts)."""
    picked = [i for i, kind in enumerate(kinds) if i and kind in wanted]
    if not picked:
        return UnitCount(0, 0, 0, 0)
    means = values.mean(axis=1)
    resampled = weights @ values.T / values.shape[1]  # (resamples, blocks)
    after, before = np.array(picked), np.array(picked) - 1
    changed = (means[after] < means[before]) if lower else (means[after] > means[before])
    counts = (
        (resampled[:, after] < resampled[:, before]) if lower else (resampled[:, after] > resampled[:, before])
    ).sum(1)
    low, high = np.percentile(counts, [2.5, 97.5])
    return UnitCount(int(changed.sum()), len(picked), int(np.floor(low)), int(np.ceil(high)))


def spread(
    label: str, weights: str, names: list[str], kinds: list[str], variance: np.ndarray, high: np.ndarray, seed: int = 0
) -> UnitSpread:
    """The per-unit shares and the four counts of one model from its per-image values (blocks, images)."""
    images = variance.shape[1]
    draws = np.random.default_rng(seed).multinomial(images, np.full(images, 1 / images), RESAMPLES).astype(np.float64)
    units = tuple(
        UnitShare(
            names[i], kinds[i], float((variance[i] < variance[i - 1]).mean()), float((high[i] < high[i - 1]).mean())
        )
        for i in range(1, len(kinds))
        if kinds[i] in MSA + OTHERS
    )
    return UnitSpread(
        label,
        weights,
        images,
        units,
        _count(variance, kinds, MSA, True, draws),
        _count(variance, kinds, OTHERS, False, draws),
        _count(high, kinds, MSA, True, draws),
        _count(high, kinds, OTHERS, False, draws),
    )


def measure(model: LoadedModel, label: str | None = None, images: np.ndarray | None = None) -> UnitSpread:
    """`model`'s unit spread over `images` (default: the whole bundled test subset)."""
    from ..data.cifar_subset import subset

    images = subset()[0] if images is None else images
    specs, variance, high = per_image(model, images)
    return spread(
        label or model.spec.label, model.weights, [s.name for s in specs], [s.kind for s in specs], variance, high
    )


def stored(path: Path = STORE) -> dict[str, UnitSpread]:
    """Member key: its stored spread ({} when the file is missing)."""
    if not path.is_file():
        return {}
    return {key: UnitSpread.from_json(data) for key, data in json.loads(path.read_text())["models"].items()}


def for_weights(weights: str) -> UnitSpread | None:
    """The stored spread of the bundled checkpoint that a model's weights label names ('trained here: ...
    (preact_resnet.safetensors)'), where that checkpoint is still the one measured; else None."""
    from .findings import bundled_checkpoint, bundled_member

    named = re.search(r"\(([^()/]+)\.safetensors\)$", weights)
    if named is None:
        return None
    for key, spread in stored().items():
        path = bundled_member(key)
        if path is not None and path.stem == named.group(1) and spread.checkpoint == bundled_checkpoint(key):
            return spread
    return None


def main(argv: list[str] | None = None) -> None:
    from .findings import bundled_checkpoint, load_member, member_label, members

    parser = argparse.ArgumentParser(description="Store every trained member's unit spread (assets/unit_claims.json)")
    parser.add_argument("--out", type=Path, default=STORE)
    args = parser.parse_args(argv)
    out = {}
    for key in members():
        model = load_member(key)
        if model.random:
            continue
        out[key] = {**measure(model, member_label(key)).to_json(), "checkpoint": bundled_checkpoint(key)}
        print(f"{key}: {out[key]['msa_lower_variance']} {out[key]['others_raise_variance']}", flush=True)
    payload = {"images": "the bundled CIFAR-10 test subset (assets/cifar10_test_subset.npz)", "models": out}
    args.out.write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()

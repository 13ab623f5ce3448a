"""What one model's measurements say about the paper's claims, counted unit by unit, so that every
sentence the app writes about a plot is computed from the numbers in that plot.

    evidence = Evidence.of(result)
    evidence.msa_lower_variance        # Count(changed=5, units=6): 5 of 6 MSA units lowered the variance

A unit "lowers" a value when the value after it is below the value after the unit before it (Figs 8
and 9 read the same way: the curve drops across a gray span). Subsampling (pool) blocks and the stem
are left out: the claims are about units that keep the resolution.
"""

from __future__ import annotations

from dataclasses import dataclass

from .results import ModelResult

MSA, OTHERS = ("msa",), ("conv", "mlp")


@dataclass(frozen=True)
class Count:
    """How many of `units` units changed a value the way the paper says."""

    changed: int
    units: int

    @property
    def share(self) -> float | None:
        return self.changed / self.units if self.units else None

    def __str__(self) -> str:
        return f"{self.changed} of {self.units}"


def _count(result: ModelResult, value: str, kinds: tuple[str, ...], lower: bool) -> Count:
    values = [getattr(block, value) for block in result.blocks]
    flags = [
        values[i] < values[i - 1] if lower else values[i] > values[i - 1]
        for i, block in enumerate(result.blocks)
        if i and block.kind in kinds
    ]
    return Count(sum(flags), len(flags))


@dataclass(frozen=True)
class Evidence:
    """The paper's unit-level claims (Figs 8 and 9) counted on one model's result."""

    msa_lower_variance: Count  # MSAs ensemble feature maps: they lower the variance (Fig 9)
    others_raise_variance: Count  # Convs and MLPs raise it
    msa_lower_high_frequency: Count  # MSAs are low-pass filters (Fig 8)
    others_raise_high_frequency: Count  # Convs (and MLPs) are high-pass filters
    distance_first: float | None = None  # mean attention distance (px) of the first and last layer
    distance_last: float | None = None

    @classmethod
    def of(cls, result: ModelResult) -> Evidence:
        distances = [
            float(sum(layer.mean_distance) / len(layer.mean_distance))
            for layer in (result.attention.layers if result.attention else [])
        ]
        return cls(
            _count(result, "variance", MSA, lower=True),
            _count(result, "variance", OTHERS, lower=False),
            _count(result, "high_freq", MSA, lower=True),
            _count(result, "high_freq", OTHERS, lower=False),
            distances[0] if distances else None,
            distances[-1] if distances else None,
        )

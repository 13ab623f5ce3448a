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

from ..results import ModelResult

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


# Verdicts: the paper's claims against what is measured here, one rule each, for every place that says whether a
# claim holds (README claims table, bench/paper_claims.py, the tour, the AlterNet tab, the Paper figures tab).

HOLDS, FAILS, NO_DIFFERENCE, NOT_TESTED = "holds", "does not hold", "no difference detected", "not tested"
APART = "architecture alone, not a test of the claim"


@dataclass(frozen=True)
class Verdict:
    """One claim: what the paper says, the rule applied, what is seen here, the outcome and one number."""

    claim: str  # short, for a table row
    figure: str  # "Fig 9"
    paper: str  # the paper's statement
    rule: str  # when it counts as holding here
    here: str  # the observation, with its numbers
    outcome: str  # HOLDS, FAILS, NO_DIFFERENCE or NOT_TESTED
    number: str  # the one number for the short table
    apart: str = ""  # random-weight models, shown apart: the architecture alone
    words: str = ""  # the observation in plain words, where `here` is statistics: shown first, `here` a click away

    @property
    def holds(self) -> bool | None:
        return {HOLDS: True, FAILS: False}.get(self.outcome)

    def line(self) -> str:
        """'The paper: ... · Here: ... · Verdict: does not hold (numbers)'."""
        text = f"The paper: {self.paper} · Here: {self.here} · Verdict: {self.outcome} ({self.number})"
        return f"{text} · Rule: {self.rule}" + (f" · {self.apart}" if self.apart else "")

    def inline(self) -> str:
        """The same in one Markdown line, for a caption under a figure."""
        here = f"{self.words} In numbers: {self.here}" if self.words else self.here  # words first
        text = f"**The paper** ({self.figure}): {self.paper} · **Here**: {here} · "
        text += f"**Verdict: {self.outcome}** ({self.number}; rule: {self.rule})"
        return text + (f" · *{self.apart}*" if self.apart else "")

    def markdown(self) -> str:
        """The same on separate lines, for the app; in plain words where there are any (the statistics are then
        `numbers()`, for a click away)."""
        mark = {HOLDS: "✅", FAILS: "❌", NO_DIFFERENCE: "➖", NOT_TESTED: "·"}[self.outcome]
        lines = [f"**The paper** ({self.figure}): {self.paper}"]
        if self.words:
            lines += [f"**Here**: {self.words}", f"**Verdict**: {mark} {self.outcome}."]
        else:
            lines += [
                f"**Here**: {self.here}",
                f"**Verdict**: {mark} {self.outcome} ({self.number}). Rule: {self.rule}.",
            ]
        if self.apart:
            lines.append(f"*{self.apart}*")
        return "\n\n".join(lines)

    def numbers(self) -> str:
        """The statistics behind a verdict told in words (Markdown), or '' where it has none apart."""
        if not self.words:
            return ""
        return f"**{self.claim}**: {self.here}\n\n**Verdict**: {self.outcome} ({self.number}). Rule: {self.rule}."


@dataclass(frozen=True)
class Counted:
    """One model's unit counts (an Evidence on the results on screen, or a stored unit_spread.UnitSpread)."""

    label: str
    random: bool
    counts: object  # has msa_lower_variance, others_raise_variance, ... each with .changed and .units
    others: str = "Conv/MLP"  # its units other than MSAs, by what it has (others_named)


def others_named(kinds: set[str]) -> str:
    """A model's units other than MSAs by what it has: 'Conv' (a ResNet), 'MLP' (a ViT), 'Conv/MLP' (an AlterNet
    with MLPs, or several models together)."""
    return "/".join(name for kind, name in (("conv", "Conv"), ("mlp", "MLP")) if kind in kinds) or "Conv"


UNIT_CLAIMS = {  # (value, which units): (claim, figure, the paper's statement, the count's attribute, verb)
    ("variance", "msa"): (
        "MSAs lower the feature-map variance",
        "Fig 9",
        "MSAs ensemble feature maps: they lower the feature-map variance",
        "msa_lower_variance",
        "MSA units lower it",
    ),
    ("variance", "others"): (
        "Convs raise the feature-map variance",
        "Fig 9",
        "Convs (and MLPs) raise the feature-map variance",
        "others_raise_variance",
        "Conv/MLP units raise it",
    ),
    ("high_freq", "msa"): (
        "MSAs are low-pass filters",
        "Fig 8",
        "MSAs reduce high-frequency signals: they lower the high-frequency Δ log amplitude",
        "msa_lower_high_frequency",
        "MSA units lower it",
    ),
    ("high_freq", "others"): (
        "Convs are high-pass filters",
        "Fig 8",
        "Convs (and MLPs) amplify high frequencies: they raise the high-frequency Δ log amplitude",
        "others_raise_high_frequency",
        "Conv/MLP units raise it",
    ),
}


def _told(count) -> str:
    return count.spread() if hasattr(count, "spread") else str(count)


def unit_verdict(models: list[Counted], value: str, which: str) -> Verdict:
    """Figs 8 ('high_freq') and 9 ('variance'), for MSA units ('msa') or Conv/MLP units ('others'): holds where,
    in every trained model that has such units, most of them change the value the paper's way on the mean over
    the images. Random-weight models are listed apart and never counted."""
    claim, figure, paper, attribute, verb = UNIT_CLAIMS[(value, which)]
    if which == "others":  # named by what the counted models have: 'Conv units raise it' for ResNets alone
        had = {kind.lower() for m in models if getattr(m.counts, attribute).units for kind in m.others.split("/")}
        verb = verb.replace("Conv/MLP", others_named(had))
    rule = f"in every trained model, most {verb.split(' units')[0]} units {verb.split('units ')[1]} (image mean)"
    seen, apart, holds = [], [], True
    for model in models:
        count = getattr(model.counts, attribute)
        if not count.units:
            continue
        text = f"{model.label} {_told(count)}"
        if model.random:
            apart.append(text)
            continue
        holds = holds and count.changed * 2 > count.units
        seen.append(text)
    shown = f"{', '.join(apart)}: random weights, {APART}" if apart else ""
    if not seen:
        return Verdict(claim, figure, paper, rule, f"no trained model with such units: {verb}", NOT_TESTED, "-", shown)
    changed = sum(getattr(m.counts, attribute).changed for m in models if not m.random)
    units = sum(getattr(m.counts, attribute).units for m in models if not m.random)
    here = f"{verb} in: " + "; ".join(seen)
    number = f"{changed} of {units} units over {len(seen)} model{'s' * (len(seen) > 1)}"
    return Verdict(claim, figure, paper, rule, here, HOLDS if holds else FAILS, number, shown)


def unit_verdicts(models: list[Counted]) -> list[Verdict]:
    return [unit_verdict(models, value, which) for value, which in UNIT_CLAIMS]

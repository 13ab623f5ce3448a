"""What the models on screen show about the paper's claims, in words computed from their results
(engine.claims): the lines under Figs 8 and 9, and the attention distance of a column."""

from __future__ import annotations

from engine.claims import Count, Evidence
from engine.results import ModelResult

RANDOM_NOTE = " (random weights: the architecture alone)"


def _units(count: Count, kind: str, verb: str) -> str:
    return f"{kind} units {verb} it in {count}" if count.units else ""


def _model_line(result: ModelResult, lower_msa: Count, raise_others: Count) -> str:
    kinds = {block.kind for block in result.blocks}
    others = "/".join(name for kind, name in (("conv", "Conv"), ("mlp", "MLP")) if kind in kinds) or "Conv"
    parts = [_units(lower_msa, "MSA", "lowered"), _units(raise_others, others, "raised")]
    note = RANDOM_NOTE if result.random_weights else ""
    return f"- {result.label}{note}: {'; '.join(p for p in parts if p) or 'no MSA, Conv or MLP units'}."


def variance_here(results: list[ModelResult]) -> str:
    """Fig 9 counted: per model, how many MSA units lowered the variance and Conv/MLP units raised it."""
    lines = [_model_line(r, (e := Evidence.of(r)).msa_lower_variance, e.others_raise_variance) for r in results]
    return "**Here**, the variance:\n" + "\n".join(lines)


def high_frequency_here(results: list[ModelResult]) -> str:
    """Fig 8 counted: per model, how many MSA units lowered the high-frequency amplitude and others raised it."""
    lines = [
        _model_line(r, (e := Evidence.of(r)).msa_lower_high_frequency, e.others_raise_high_frequency) for r in results
    ]
    return "**Here**, the high-frequency amplitude:\n" + "\n".join(lines)


def distance_here(result: ModelResult) -> str:
    """The mean attention distance of the first and last layer, and whether it grew; '' without attention."""
    evidence = Evidence.of(result)
    if evidence.distance_first is None or result.attention is None or result.attention.kind != "global":
        return ""
    first, last = evidence.distance_first, evidence.distance_last
    grew = "grows" if last > first * 1.05 else ("shrinks" if last < first * 0.95 else "stays about the same")
    layers = len(result.attention.layers)
    note = ", as expected of random weights" if result.random_weights and grew != "grows" else ""
    return f"Mean attention distance here: {first:.0f} px in layer 1, {last:.0f} px in layer {layers}: it {grew}{note}."

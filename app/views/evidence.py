"""What the models on screen show about the paper's claims, in words computed from their results
(engine.paper.claims): the lines under Figs 8 and 9, and the attention distance of a column."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from app.backend.units import lesion_of
from app.views import texts as text
from engine.analyses.logit_lens import LogitLensResult
from engine.errors import EngineError
from engine.models.registry import get_spec
from engine.paper import claims, unit_spread
from engine.paper.claims import Count, Evidence
from engine.results import ModelResult

RANDOM_NOTE = f" (random weights: {claims.APART})"


def _units(count: Count, kind: str, verb: str) -> str:
    return f"{kind} units {verb} it in {count}" if count.units else ""


def others_named(result: ModelResult) -> str:
    """The model's other units by what it has: 'Conv' (a ResNet), 'MLP' (a ViT), 'Conv/MLP' (an AlterNet)."""
    return claims.others_named({block.kind for block in result.blocks})


def _model_line(result: ModelResult, lower_msa: Count, raise_others: Count) -> str:
    others = others_named(result)
    parts = [_units(lower_msa, "MSA", "lowered"), _units(raise_others, others, "raised")]
    note = RANDOM_NOTE if result.random_weights else ""
    return f"- {result.label}{note}: {'; '.join(p for p in parts if p) or 'no MSA, Conv or MLP units'}."


def working(result: ModelResult) -> ModelResult:
    """`result` without its switched-off units: a unit whose branch is zeroed hands on its input unchanged, so
    its block measures exactly as the one before; left out, it is not counted, and the next unit's change is
    still measured from the same values."""
    blocks = result.blocks
    kept = [
        b
        for i, b in enumerate(blocks)
        if not (i and b.fourier == blocks[i - 1].fourier and b.variance == blocks[i - 1].variance)
    ]
    return result if len(kept) == len(blocks) else replace(result, blocks=kept)


def variance_here(results: list[ModelResult]) -> str:
    """Fig 9 counted: per model, how many MSA units lowered the variance and Conv/MLP units raised it (units
    switched off are not counted)."""
    lines = [
        _model_line(r, (e := Evidence.of(working(r))).msa_lower_variance, e.others_raise_variance) for r in results
    ]
    return (
        "**Here**, the variance:\n"
        + "\n".join(lines)
        + stored_spread(results, "variance")
        + verdict_line(results, "variance")
    )


def high_frequency_here(results: list[ModelResult]) -> str:
    """Fig 8 counted: per model, how many MSA units lowered the high-frequency amplitude and others raised it
    (units switched off are not counted)."""
    lines = [
        _model_line(r, (e := Evidence.of(working(r))).msa_lower_high_frequency, e.others_raise_high_frequency)
        for r in results
    ]
    return (
        "**Here**, the high-frequency amplitude:\n"
        + "\n".join(lines)
        + stored_spread(results, "high_freq")
        + verdict_line(results, "high_freq")
    )


def known_classes(name: str) -> str:
    """The line under the top-5 of a model that knows few classes (CIFAR-10's ten), naming them; "" for ImageNet's
    thousand or a model the registry cannot name. On screen and in the handout."""
    try:
        labels = get_spec(name).labels()
    except (EngineError, ValueError):
        return ""
    return text.KNOWN_CLASSES.format(count=len(labels), names=", ".join(labels)) if len(labels) <= 100 else ""


def distance_here(result: ModelResult) -> str:
    """The mean attention distance of the first and last layer, and whether it grew; '' without attention."""
    evidence = Evidence.of(result)
    if evidence.distance_first is None or result.attention is None or result.attention.kind != "global":
        return ""
    first, last = evidence.distance_first, evidence.distance_last
    grew = "grows" if last > first * 1.05 else ("shrinks" if last < first * 0.95 else "stays about the same")
    layers = result.attention.layers
    note = ", as expected of random weights" if result.random_weights and grew != "grows" else ""
    even = layers[-1].even_distance
    spread = f" (attention spread evenly over the patches: {px(even)} px)" if even else ""
    return (
        f"Mean attention distance here: {px(first)} px in layer 1, {px(last)} px in layer {len(layers)}{spread}: "
        f"it {grew}{note}."
    )


def px(distance: float) -> str:
    """A distance in pixels: one decimal below 20 px (a CIFAR image is 32 px across), whole above."""
    return f"{distance:.1f}" if distance < 20 else f"{distance:.0f}"


def lens_here(results: list[ModelResult], lenses: list[LogitLensResult | None]) -> str:
    """Per model, from which block on its head's top-1 is the final answer, and what the head could read."""
    lines = []
    for result, lens in zip(results, lenses):
        if lens is None:
            continue
        read = [b for b in lens.blocks if b.applies]
        first = lens.first_top1
        answer = f"its answer ({lens.final_label})"
        where = (
            f"{answer} is the head's top-1 from {first.name} (depth {first.normalized_depth:.2f}) on"
            if first
            else f"{answer} settles only at the end"
        )
        scope = (
            "" if len(read) == len(lens.blocks) else f"; the head reads only the last {len(read)} blocks (its width)"
        )
        note = RANDOM_NOTE if result.random_weights else ""
        lines.append(
            f"- {result.label}{note}: {where}, p = {read[0].final_probability:.2f} at the first block read{scope}."
        )
    return "**Here**:\n" + "\n".join(lines) if lines else ""


@dataclass(frozen=True)
class Verdict:
    """Whether a claim of the paper holds on the results on screen, and the sentence saying so."""

    holds: bool | None  # None: the step shows a fact or a reading, with nothing to hold or fail
    text: str  # Markdown, in plain words where the claim has statistics
    numbers: str = ""  # Markdown: those statistics, shown a click away ('' where there are none)


def _head(holds: bool | None) -> str:
    return {True: "✅ **Holds here**", False: "❌ **Does not hold here**", None: "**Here**"}[holds]


def headline(parts: list[claims.Verdict]) -> tuple[bool | None, str]:
    """Whether a claim made of `parts` holds here, and a headline that agrees with each part: where some parts
    hold and others do not, it says so and names them ("Half holds here: MSAs are low-pass filters ✅, Convs are
    high-pass filters ❌"), so that a class never reads "does not hold" over a part that holds."""
    tested = [v for v in parts if v.outcome != claims.NOT_TESTED]
    outcomes = {v.outcome for v in tested}
    if claims.FAILS in outcomes and claims.HOLDS in outcomes:
        marks = {claims.HOLDS: "✅", claims.FAILS: "❌", claims.NO_DIFFERENCE: "➖"}
        named = ", ".join(f"{v.claim} {marks[v.outcome]}" for v in tested)
        share = "Half holds" if len(tested) == 2 else "Holds in part"
        return False, f"◐ **{share} here**: {named}"
    if claims.FAILS in outcomes:
        return False, _head(False)
    if claims.NO_DIFFERENCE in outcomes:
        return None, "➖ **No difference detected here**"
    return (True, _head(True)) if outcomes else (None, _head(None))


def _said(holds: bool | None, reasons: list[str]) -> Verdict:
    head = _head(holds)
    return Verdict(holds, f"{head}: {'; '.join(reasons)}." if reasons else f"{head}.")


@lru_cache(maxsize=8)
def spread_line(spread: unit_spread.UnitSpread, value: str, others: str = "Conv/MLP") -> str:
    """'over the 1000 bundled test images: MSA units lower it in 0 of 6 (in every resample of the images), unit by
    unit on 0% to 3% of the images; MLP units raise it in 8 of 8 (...), every one on 100% of the images', the other
    units named by what the model has (`others`)."""
    parts = []
    for kinds, lower, name, verb in ((claims.MSA, True, "MSA", "lower"), (claims.OTHERS, False, others, "raise")):
        measure = "variance" if value == "variance" else "high_frequency"
        attribute = f"{'msa_lower' if lower else 'others_raise'}_{measure}"
        count = getattr(spread, attribute)
        if count.units:
            shares = spread.shares(kinds, value, lower)
            low, high = f"{100 * min(shares):.0f}%", f"{100 * max(shares):.0f}%"
            each = f"every one on {low}" if low == high else f"unit by unit on {low} to {high}"  # never "100-100%"
            parts.append(f"{name} units {verb} it in {count.spread()}, {each} of the images")
    return f"over the {spread.images:,} bundled test images: {'; '.join(parts)}"


def _intact(result: ModelResult) -> str:
    """The model the stored spreads measured: `result`'s own label, or, for a model with units switched off on
    screen, its label as trained, said so (the spreads were measured with every unit in place)."""
    if working(result) is result:
        return result.label
    return f"{lesion_of(result.label)[0]} with every unit in place (as stored; not re-measured with units off)"


def stored_spread(results: list[ModelResult], value: str) -> str:
    """For each trained model on screen whose checkpoint the family's stored spreads measured, its counts over the
    bundled test images with their intervals ('' where none is)."""
    spreads = [(r, unit_spread.for_weights(r.weights)) for r in results if not r.random_weights]
    lines = [
        f"- {_intact(r)}, {spread_line(spread, value, others_named(r))}." for r, spread in spreads if spread is not None
    ]
    return "\n\n**How stable, over the bundled test subset**:\n" + "\n".join(lines) if lines else ""


def _unit_parts(results: list[ModelResult], value: str) -> list[claims.Verdict]:
    """The MSA and the other units' verdicts of Fig 8 (`value` "high_freq") or Fig 9 ("variance") on `results`."""
    models = [claims.Counted(r.label, r.random_weights, Evidence.of(r), others_named(r)) for r in results]
    return [claims.unit_verdict(models, value, which) for which in ("msa", "others")]


def verdict_line(results: list[ModelResult], value: str) -> str:
    """The counts' last line, as the tour heads the same step: whether the figure's claims hold on these results
    ('◐ Half holds here: MSAs are low-pass filters ✅, Convs are high-pass filters ❌'), or why they are not tested."""
    parts = _unit_parts(results, value)
    tested = [v for v in parts if v.outcome != claims.NOT_TESTED]
    if not tested:
        return "\n\n**Not tested here**: no trained model on screen has such units (random weights are shown apart)."
    _, head = headline(parts)
    named = "" if ":" in head else ": " + "; ".join(f"{v.claim} ({v.number})" for v in tested)
    return f"\n\n{head}{named}."


def unit_verdict(results: list[ModelResult], value: str) -> Verdict:
    """Figs 8 (`value` "high_freq") and 9 ("variance") on the results on screen (engine.paper.claims.unit_verdict):
    holds where, in every trained model, most MSA units lower the value and most Conv/MLP units raise it;
    random-weight models are shown apart and never counted."""
    found = _unit_parts(results, value)
    if all(v.outcome == claims.NOT_TESTED and not v.apart for v in found):
        return _said(None, [])
    holds, head = headline(found)
    body = "\n\n".join(v.markdown() for v in found)
    return Verdict(holds, f"{head}:\n\n{body}{stored_spread(results, value)}")


def distance_verdict(results: list[ModelResult]) -> Verdict:
    """Fig 5 / Raghu et al.: holds where every global-attention model's mean distance grows (by over 5%)
    from the first layer to the last."""
    holds, reasons = True, []
    for result in results:
        evidence = Evidence.of(result)
        if evidence.distance_first is None or result.attention is None or result.attention.kind != "global":
            continue
        grows = evidence.distance_last > evidence.distance_first * 1.05
        holds = holds and grows
        note = RANDOM_NOTE if result.random_weights else ""
        reasons.append(
            f"{result.label}{note}: {px(evidence.distance_first)} px in the first layer, "
            f"{px(evidence.distance_last)} px in the last"
        )
    return _said(holds if reasons else None, reasons)


def lens_verdict(results: list[ModelResult], lenses: list[LogitLensResult | None]) -> Verdict:
    """When the answer appears: a reading (nothing to hold), per model the depth from which it is top-1."""
    reasons = []
    for result, lens in zip(results, lenses):
        first = lens.first_top1 if lens else None
        if first is not None:
            reasons.append(f"{result.label} settles on {lens.final_label} at depth {first.normalized_depth:.2f}")
    return _said(None, reasons)


def verdict_of(verdicts: list[claims.Verdict], note: str = "") -> Verdict:
    """Engine verdicts as one shown verdict: holds where every tested one holds, headed as `headline` says (a claim
    that holds in part says which part), with each one's paper, here and verdict lines (and `note` after them)."""
    holds, head = headline(verdicts)
    numbers = "\n\n".join(n for v in verdicts if (n := v.numbers()))
    return Verdict(holds, f"{head}:\n\n" + "\n\n".join(v.markdown() for v in verdicts) + note, numbers)


def better_verdict(claim: str, ours: tuple[str, float], theirs: tuple[str, float], unit: str = "%") -> Verdict:
    """A comparison the paper makes (`ours` above `theirs`), on stored numbers: who has what."""
    (a, x), (b, y) = ours, theirs
    return _said(bool(x > y), [f"{claim}: {a} {x:.1f}{unit}, {b} {y:.1f}{unit}"])

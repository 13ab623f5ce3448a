"""Every verdict on the paper's claims, from the stored results in assets/ (the per-unit spreads, the bundled
checkpoints and their per-image bits, the paper figures): one rule per claim, used by the README's claims table
(scripts/claims_table.py), bench/paper_claims.py, the tour and the Paper figures tab.

    for v in all_verdicts(): print(v.line())
    figure_verdicts("lesion", section)     # the verdicts under one stored (or recomputed) figure
"""

from __future__ import annotations

import json

import numpy as np

from . import buildup, unit_spread
from .claims import APART, FAILS, HOLDS, NO_DIFFERENCE, NOT_TESTED, Counted, Verdict, others_named, unit_verdicts
from .findings import STORE, member_label, unpack_bits
from .map_verdicts import map_verdicts
from .paired import PairedDifference, in_words, paired, points

HIGH_BANDS = 0.5  # Fig 2b's high frequencies: the bands from 0.5π up
BLOCK_CONTRAST = 0.1  # Fig 10a: within-stage mean CKA above across-stage by this much reads as a block structure


def _trained(section: dict | None, *keys: str) -> dict[str, dict] | None:
    """The runs of `keys` in `section`, or None where one is missing or has random weights."""
    models = (section or {}).get("models", {})
    if any(key not in models or models[key].get("random_weights") for key in keys):
        return None
    return {key: models[key] for key in keys}


def _apart(section: dict | None) -> str:
    """The random-weight runs of a section, named apart."""
    labels = [run["label"] for run in (section or {}).get("models", {}).values() if run.get("random_weights")]
    return f"{', '.join(labels)}: random weights, {APART}" if labels else ""


def _compare(claim, figure, paper, rule, section, keys, here, ok: bool, number) -> Verdict:
    return Verdict(claim, figure, paper, rule, here, HOLDS if ok else FAILS, number, _apart(section))


def _untested(claim: str, figure: str, paper: str, rule: str, section: dict | None) -> Verdict:
    why = "not measured on trained weights of the members it compares (`python -m engine findings`)"
    return Verdict(claim, figure, paper, rule, why, NOT_TESTED, "-", _apart(section))


def landscape(section: dict | None) -> list[Verdict]:
    claim, figure = "ViT's loss landscape is flatter", "Fig 1a"
    paper, rule = (
        "the ViT's loss landscape is flatter than the ResNet's",
        "the ViT's highest NLL + ℓ2 on the grid is the lowest of the three",
    )
    runs = _trained(section, "step0", "step6", "vit")
    if runs is None:
        return [_untested(claim, figure, paper, rule, section)]
    top = {key: float(np.max(run["result"]["loss"])) for key, run in runs.items()}
    here = f"highest NLL + ℓ2 on the grid: ViT {top['vit']:.3g}, ResNet {top['step0']:.3g}, AlterNet {top['step6']:.3g}"
    ok = top["vit"] < min(top["step0"], top["step6"])
    return [
        _compare(claim, figure, paper, rule, section, runs, here, ok, f"{top['vit']:.3g} against {top['step0']:.3g}")
    ]


def trajectory(section: dict | None) -> list[Verdict]:
    claim, figure = "ResNet's trajectory irregular, ViT's smooth", "Fig 1b"
    paper = "the ResNet's weights wander irregularly during training, the ViT's move smoothly"
    rule = "a picture to read: no rule turns it into a number here"
    runs = (section or {}).get("models", {})
    if not runs:
        return [Verdict(claim, figure, paper, rule, "not recorded", NOT_TESTED, "-")]
    here = ", ".join(f"{run['label']} θ up to {max(run['result']['theta_deg']):.0f}°" for run in runs.values())
    return [Verdict(claim, figure, paper, rule, f"{here}; read the curves", NOT_TESTED, "read the plot")]


def hessian(section: dict | None) -> list[Verdict]:
    runs = _trained(section, "step0", "step6", "vit")
    claims = [
        (
            "ViT's Hessian eigenvalues smaller",
            "Figs 1c, 4",
            "the ViT's top Hessian eigenvalues are smaller than the ResNet's",
            "the ViT's mean top eigenvalue is below the ResNet's",
        ),
        (
            "ViT has negative Hessian eigenvalues",
            "Figs 1c, 4",
            "the ViT has negative Hessian eigenvalues, the ResNet few",
            "the ViT's share of negative eigenvalues (NEP) is above the ResNet's",
        ),
        (
            "AlterNet suppresses large eigenvalues",
            "Fig 12c",
            "AlterNet's top Hessian eigenvalues are smaller than the CNN's",
            "step 6's mean top eigenvalue is below step 0's",
        ),
    ]
    if runs is None:
        return [_untested(c, f, p, r, section) for c, f, p, r in claims]
    top = {key: float(np.mean(np.array(run["result"]["eigenvalues"])[:, 0])) for key, run in runs.items()}
    nep = {key: 100 * float(run["result"]["nep"]) for key, run in runs.items()}
    tops = f"mean top eigenvalue: ViT {top['vit']:.3g}, ResNet {top['step0']:.3g}, AlterNet {top['step6']:.3g}"
    neps = f"NEP: ViT {nep['vit']:.0f}%, ResNet {nep['step0']:.0f}%, AlterNet {nep['step6']:.0f}%"
    checks = [
        (tops, top["vit"] < top["step0"], f"{top['vit']:.3g} against {top['step0']:.3g}"),
        (neps, nep["vit"] > nep["step0"], f"NEP {nep['vit']:.0f}% against {nep['step0']:.0f}%"),
        (tops, top["step6"] < top["step0"], f"{top['step6']:.3g} against {top['step0']:.3g}"),
    ]
    return [
        _compare(c, f, p, r, section, runs, here, ok, number)
        for (c, f, p, r), (here, ok, number) in zip(claims, checks)
    ]


def noise(section: dict | None) -> list[Verdict]:
    claim, figure = "ViT robust to high-frequency noise, ResNet not", "Fig 2b"
    paper = "high-frequency noise hurts the ResNet's accuracy more than the ViT's"
    rule = f"the ViT's mean accuracy drop over the bands from {HIGH_BANDS}π up is below the ResNet's"
    runs = _trained(section, "step0", "vit")
    if runs is None:
        return [_untested(claim, figure, paper, rule, section)]
    drop = {}
    for key, run in runs.items():
        result = run["result"]
        drop[key] = 100 * float(
            np.mean([d for f, d in zip(result["frequencies"], result["accuracy_drop"]) if f >= HIGH_BANDS])
        )
    here = f"mean drop from {HIGH_BANDS}π to 1.0π: ViT {drop['vit']:.1f} points, ResNet {drop['step0']:.1f}"
    number = f"{drop['vit']:.1f} against {drop['step0']:.1f} points"
    return [_compare(claim, figure, paper, rule, section, runs, here, drop["vit"] < drop["step0"], number)]


def block_contrast(result: dict) -> float | None:
    """Mean linear CKA between units of the same stage minus between units of different stages (stages split at
    the pool units; None for a model without stages)."""
    kinds, cka = result["row_kinds"], np.array(result["cka"], float)
    stage, stages = 0, []
    for kind in kinds:
        stage += kind == "pool"
        stages.append(stage)
    stages = np.array(stages)
    if stages.max() == 0:
        return None
    same = stages[:, None] == stages[None, :]
    off = ~np.eye(len(kinds), dtype=bool)
    return float(cka[same & off].mean() - cka[~same].mean())


def similarity(section: dict | None) -> list[Verdict]:
    claim, figure = "Block structure in CKA for multi-stage models, not the ViT", "Fig 10a"
    paper = "feature maps of multi-stage models (ResNet, AlterNet) form a block per stage; the ViT's change smoothly"
    rule = (
        f"units within a stage are more alike than across stages by over {BLOCK_CONTRAST} mean CKA, for the ResNet "
        "and the AlterNet; the ViT has no stages"
    )
    runs = _trained(section, "step0", "step6", "vit")
    if runs is None:
        return [_untested(claim, figure, paper, rule, section)]
    contrast = {key: block_contrast(runs[key]["result"]) for key in ("step0", "step6")}
    mean = {key: float(np.mean(run["result"]["cka"])) for key, run in runs.items()}
    here = (
        f"within-stage minus across-stage mean CKA: ResNet {contrast['step0']:.2f}, AlterNet {contrast['step6']:.2f}; "
        f"mean CKA ResNet {mean['step0']:.2f}, AlterNet {mean['step6']:.2f}, ViT {mean['vit']:.2f}"
    )
    ok = all(c is not None and c > BLOCK_CONTRAST for c in contrast.values())
    number = f"block contrast {contrast['step0']:.2f} (ResNet), {contrast['step6']:.2f} (AlterNet)"
    return [_compare(claim, figure, paper, rule, section, runs, here, ok, number)]


def _stage(unit: dict) -> tuple[int, int]:
    """(stage, block) of a CNN unit named 'stages.S.B'."""
    _, stage, block = unit["name"].split(".")[:3]
    return int(stage), int(block)


def lesion(section: dict | None) -> list[Verdict]:
    cnn = (
        "Removing an early-stage unit hurts the ResNet more",
        "Fig 10b",
        "in ResNet, removing an early-stage layer hurts accuracy more than removing a late-stage one",
        "the ResNet's mean drop without a unit of stages 1-2 is above that of stages 3-4",
    )
    alter = (
        "Removing the MSA at a stage's end hurts AlterNet",
        "Fig 10b",
        "removing MSAs late in a stage (and Convs early in it) seriously impairs accuracy",
        "each MSA that ends a stage of step 6 costs more than step 6's median unit",
    )
    out = []
    for key, (claim, figure, paper, rule) in (("step0", cnn), ("step6", alter)):
        runs = _trained(section, key)
        if runs is None:
            out.append(_untested(claim, figure, paper, rule, section))
            continue
        units = runs[key]["result"]["units"]
        if key == "step0":
            stages = max(_stage(u)[0] for u in units) + 1
            early = [100 * u["drop"] for u in units if _stage(u)[0] < stages / 2]
            late = [100 * u["drop"] for u in units if _stage(u)[0] >= stages / 2]
            ok = np.mean(early) > np.mean(late)
            here = (
                f"mean drop {np.mean(early):.1f} points without a unit of the early stages, "
                f"{np.mean(late):.1f} without one of the late stages"
            )
            number = f"{np.mean(early):.1f} against {np.mean(late):.1f} points"
        else:
            last = {}
            for unit in units:
                stage, block = _stage(unit)
                last[stage] = max(last.get(stage, -1), block)
            ends = [u for u in units if u["kind"] == "msa" and _stage(u)[1] == last[_stage(u)[0]]]
            median = 100 * float(np.median([u["drop"] for u in units]))
            ok = bool(ends) and all(100 * u["drop"] > median for u in ends)
            drops = {kind: [100 * u["drop"] for u in units if u["kind"] == kind] for kind in ("msa", "conv")}
            ranges = ", ".join(
                f"{'MSAs' if k == 'msa' else 'Convs'} cost {min(d):.1f}-{max(d):.1f} points"
                for k, d in drops.items()
                if d
            )
            at_ends = ", ".join(f"{u['name']} {100 * u['drop']:.1f}" for u in ends) or "none"
            here = f"{ranges}; the MSAs ending a stage: {at_ends}; the median unit {median:.1f}"
            costs = ", ".join(f"{100 * u['drop']:.1f}" for u in ends)
            number = f"stage-end MSAs {costs} against a median {median:.1f} points"
        out.append(_compare(claim, figure, paper, rule, section, runs, here, bool(ok), number))
    return out


def corruption(section: dict | None) -> list[Verdict]:
    claim, figure = "AlterNet more robust to corruptions than the CNN", "Fig 12b"
    paper = "AlterNet is more accurate than the CNN on corrupted images"
    rule = (
        "step 6's accuracy on the corrupted images is above step 0's on the same images, McNemar's exact p < 0.05 "
        "with the corrupted copies of one test image tested and resampled together"
    )
    runs = _trained(section, "step0", "step6")
    if runs is None:
        return [_untested(claim, figure, paper, rule, section)]
    mean = {key: 100 * run["result"]["mean_accuracy"] for key, run in runs.items()}
    images = section["images"]
    if not all("correct" in run for run in runs.values()):
        here = (
            f"mean corrupted accuracy step 6 {mean['step6']:.1f}%, step 0 {mean['step0']:.1f}% on {images} images; "
            "per-image results not stored (scripts/score_test_split.py --corruption): no test"
        )
        number = f"{points(mean['step6'] - mean['step0'])} points, untested"
        return [Verdict(claim, figure, paper, rule, here, NOT_TESTED, number, _apart(section))]
    differences = corrupted_differences(section)
    d = differences["step6"]
    result = runs["step0"]["result"]
    copies = f"{len(result['corruptions'])} corruptions × {len(result['severities'])} severities"
    each = "; ".join(f"{other.a} {other.numbers()}" for other in differences.values())
    here = (
        f"accuracy on {d.images:,} corrupted copies ({copies} of {images} test images) minus step 0's "
        f"({100 * d.accuracy_b:.1f}%) on the same copies, 95% bootstrap over the {d.sources} images: {each}"
    )
    outcome = NO_DIFFERENCE if not d.detected else (HOLDS if d.difference > 0 else FAILS)
    words = (
        f"on {d.images:,} corrupted copies of {images} test images, the AlterNet (step 6) gets "
        f"{100 * d.accuracy_a:.1f}% right and the CNN (step 0) {100 * d.accuracy_b:.1f}%: "
        f"{in_words(d.detected, d.difference, 'the AlterNet', 'the CNN')}."
    )
    return [Verdict(claim, figure, paper, rule, here, outcome, d.numbers(), _apart(section), words)]


def corrupted_differences(section: dict) -> dict[str, PairedDifference]:
    """Each trained member with stored bits against the CNN (step 0) on the same corrupted images, the copies of
    one test image grouped (engine.paper.paired's `groups`: resampled and tested together), in the section's order."""
    models = section["models"]
    first = models["step0"]["result"]
    cells = len(first["corruptions"]) * len(first["severities"])
    count, sources = cells * section["images"], np.tile(np.arange(section["images"]), cells)
    cnn = unpack_bits(models["step0"]["correct"], count)
    return {
        key: paired(unpack_bits(run["correct"], count), cnn, member_label(key), member_label("step0"), groups=sources)
        for key, run in models.items()
        if key != "step0" and "correct" in run and not run.get("random_weights")
    }


FIGURE_VERDICTS = {
    "landscape": landscape,
    "trajectory": trajectory,
    "hessian": hessian,
    "noise": noise,
    "similarity": similarity,
    "lesion": lesion,
    "corruption": corruption,
    "maps": map_verdicts,  # not the paper's: which of the app's map methods pass (engine.paper.map_verdicts)
}


def stored_sections() -> dict[str, dict]:
    return json.loads(STORE.read_text())["findings"] if STORE.is_file() else {}


def figure_verdicts(name: str, section: dict | None) -> list[Verdict]:
    """The verdicts under stored (or recomputed) figure `name`."""
    return FIGURE_VERDICTS[name](section)


def stored_units() -> list[Counted]:
    """The stored per-unit spreads of the trained members, as counted models."""
    return [Counted(s.label, False, s, others_named({u.kind for u in s.units})) for s in unit_spread.stored().values()]


def all_verdicts() -> list[Verdict]:
    """Every claim, in the README table's order: the per-unit claims, Fig 12a, then the stored figures."""
    sections = stored_sections()
    verdicts = [*unit_verdicts(stored_units()), buildup.alternet_verdict()]
    for name in ("landscape", "trajectory", "hessian", "noise", "similarity", "lesion", "corruption"):
        verdicts += figure_verdicts(name, sections.get(name))
    return verdicts


def short_table(verdicts: list[Verdict]) -> str:
    """The README's claims table: the claim and its figure, whether it holds here, one number."""
    rows = ["| claim | holds here | one number |", "|---|---|---|"]
    rows += [f"| {v.claim} ({v.figure}) | **{v.outcome}** | {v.number} |" for v in verdicts]
    return "\n".join(rows)


def full_table(verdicts: list[Verdict]) -> str:
    """The full table: the paper's statement, the rule, the observation, the verdict."""
    rows = ["| claim | paper | the paper says | rule here | seen here | verdict |", "|---|---|---|---|---|---|"]
    for v in verdicts:
        here = v.here + (f" ({v.apart})" if v.apart else "")
        rows.append(f"| {v.claim} | {v.figure} | {v.paper} | {v.rule} | {here} | **{v.outcome}** ({v.number}) |")
    return "\n".join(rows)

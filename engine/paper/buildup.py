"""Fig 12a on the bundled family: each build-up step's runs (seed 0's checkpoint and any further seeds bundled as
`<stem>-seed<N>`), their accuracy on the 10,000 test images, each step's paired difference to the CNN on the same
images, and the verdict on "AlterNet beats the CNN", decided on the seeds where more than one is bundled.

    runs = buildup_runs()                    # step: [Run(seed 0), Run(seed 1), ...]
    step_differences(runs)[6].sentence()     # 'step 6 − step 0: −0.2 points [−0.7, +0.3], p = 0.42: ...'
    alternet_verdict(runs).line()
"""

from __future__ import annotations

from ..models.cifar_family import bundled_path
from ..models.member_accuracy import MemberAccuracy, Run, runs_at, seeds_text
from ..models.placement import PAPER_DEPTHS, buildup_sequence
from .claims import FAILS, HOLDS, NO_DIFFERENCE, NOT_TESTED, Verdict
from .paired import PairedDifference, SeedDifference, in_words, over_seeds, paired

LAST = len(buildup_sequence(PAPER_DEPTHS)) - 1  # step 6: the paper's AlterNet


def runs_of(step: int) -> list[Run]:
    """Step `step`'s bundled runs, seed 0 first ([] when none is bundled)."""
    name, options = (
        ("preact_resnet", {}) if step == 0 else ("alternet", {"msa": str(buildup_sequence(PAPER_DEPTHS)[step])})
    )
    first = bundled_path(name, options)
    return [] if first is None else runs_at(first)


def buildup_runs() -> dict[int, list[Run]]:
    """Step: its runs, for the steps with a bundled checkpoint."""
    return {n: runs for n in range(LAST + 1) if (runs := runs_of(n))}


def label(step: int) -> str:
    return f"step {step}"


def step_differences(runs: dict[int, list[Run]]) -> dict[int, PairedDifference]:
    """Step n's seed-0 accuracy minus the CNN's (step 0, seed 0) on the same test images, for every step with
    stored bits and the same training length as the CNN."""
    if 0 not in runs or runs[0][0].correct is None:
        return {}
    cnn = runs[0][0]
    return {
        n: paired(r[0].correct, cnn.correct, label(n), label(0))
        for n, r in runs.items()
        if n and r[0].correct is not None and r[0].epochs == cnn.epochs
    }


def seed_pairs(runs: dict[int, list[Run]], step: int = LAST) -> list[tuple[int, PairedDifference]]:
    """Step `step` against the CNN, seed k against seed k, for every seed both have with stored bits."""
    cnn = {r.seed: r for r in runs.get(0, []) if r.correct is not None}
    return [
        (r.seed, paired(r.correct, cnn[r.seed].correct, f"{label(step)} seed {r.seed}", f"{label(0)} seed {r.seed}"))
        for r in runs.get(step, [])
        if r.seed in cnn and r.correct is not None
    ]


def seed_difference(runs: dict[int, list[Run]], step: int = LAST) -> SeedDifference | None:
    """The difference of mean accuracies over seeds, where step `step` and the CNN both have two or more."""
    ours, theirs = runs.get(step, []), runs.get(0, [])
    if min(len(ours), len(theirs)) < 2:
        return None
    return over_seeds([r.accuracy for r in ours], [r.accuracy for r in theirs], label(step), label(0))


def alternet_verdict(runs: dict[int, list[Run]] | None = None) -> Verdict:
    """ "AlterNet beats the CNN" (Fig 12a): with two or more seeds of each, decided on Welch's 95% interval of
    the difference of mean test accuracies over the seeds (the paired test of each seed pair beside it); with
    one seed each, on the paired test of seed 0 (McNemar p < 0.05, the sign of the difference)."""
    runs = buildup_runs() if runs is None else runs
    claim, figure = "AlterNet beats the CNN", "Fig 12a"
    paper = "AlterNet (step 6, MSAs at the end of stages) is more accurate than the CNN it is built from (step 0)"
    ours, theirs = runs.get(LAST, []), runs.get(0, [])
    if not ours or not theirs:
        rule = "the AlterNet's test accuracy is higher than the CNN's, beyond chance"
        return Verdict(claim, figure, paper, rule, "the CNN or the AlterNet has no bundled checkpoint", NOT_TESTED, "-")
    if ours[0].epochs != theirs[0].epochs:
        rule = "both trained with the same recipe for the same number of epochs"
        here = f"step {LAST} trained {ours[0].epochs:g} epochs, step 0 {theirs[0].epochs:g}: not comparable"
        return Verdict(claim, figure, paper, rule, here, NOT_TESTED, "-")
    accuracies = f"step {LAST} {seeds_text(ours)}, step 0 {seeds_text(theirs)} on the 10,000 test images"
    scores = (
        f"the AlterNet (step {LAST}) scores {MemberAccuracy(tuple(ours)).short()} and the CNN it is built from "
        f"(step 0) {MemberAccuracy(tuple(theirs)).short()} on the 10,000 test images"
    )
    pairs = seed_pairs(runs)
    tests = "; ".join(f"seed {seed}: {d.numbers()}" for seed, d in pairs)
    over = seed_difference(runs)
    if over is not None:
        rule = "decided on the seeds: Welch's 95% interval of the difference of mean accuracies lies above 0"
        outcome = NO_DIFFERENCE if not over.detected else (HOLDS if over.difference > 0 else FAILS)
        here = f"{accuracies}; mean of seeds {over.numbers()}" + (
            f"; paired test per seed pair: {tests}" if tests else ""
        )
        words = f"{scores}: {in_words(over.detected, over.difference, 'the AlterNet', 'the CNN')}."
        return Verdict(claim, figure, paper, rule, here, outcome, over.numbers(), words=words)
    bundled = (
        "one seed of each is bundled"
        if len(ours) == len(theirs) == 1
        else f"step {LAST} has {len(ours)} seed{'s' * (len(ours) > 1)} bundled and step 0 {len(theirs)}"
    )
    rule = (
        f"{bundled} (Welch's interval over seeds needs two of each), so the verdict rests on the paired test "
        "of seed 0 on the same 10,000 images (McNemar's exact p < 0.05, AlterNet ahead)"
    )
    if not pairs or pairs[0][0] != 0:
        here = f"{accuracies}; per-image results missing (scripts/score_test_split.py)"
        return Verdict(claim, figure, paper, rule, here, NOT_TESTED, "-")
    d = pairs[0][1]
    outcome = NO_DIFFERENCE if not d.detected else (HOLDS if d.difference > 0 else FAILS)
    each = "only one seed each" if len(ours) == len(theirs) == 1 else "seed 0 of each"
    here = f"{accuracies}; {each}: {d.sentence()}" + (f"; paired test per seed pair: {tests}" if len(pairs) > 1 else "")
    words = f"{scores}: on the same images, {in_words(d.detected, d.difference, 'the AlterNet', 'the CNN')}."
    return Verdict(claim, figure, paper, rule, here, outcome, d.numbers(), words=words)

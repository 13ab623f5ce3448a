"""Which map methods pass, from the stored map checks (engine.analyses.map_checks, the "maps" section of
assets/paper_figures.json); one verdict per method, in the paper claims' own terms (claims.Verdict).

    for v in map_verdicts(section): print(v.line())
    table(section)          # methods x models, Markdown

Four checks per method and model, each paired over the same images:
- deletion and insertion against random pixel order, pixels taken away by the blur (as the line under every map on
  the page, and RISE's insertion);
- ROAD's own test (Rong et al. 2022), pixels taken away by noisy linear imputation, which keeps the image closest to
  the training images: the map's pixels taken away least relevant first must keep the class longer than most
  relevant first. Taking away the top fraction f least relevant first leaves the same image as putting back the top
  1 - f, so that curve's area is the insertion curve's: the check is the insertion area minus the deletion area.
  ROAD is not set against random order: scattered random pixels are imputed almost perfectly from their neighbours,
  so random order barely moves the class when deleting and restores it at once when inserting;
- the randomization test (Adebayo et al. 2018): the mean Spearman ρ of the maps with every weight randomized against
  the trained maps stays under ALIKE (its 95% interval).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .claims import APART, FAILS, HOLDS, NOT_TESTED, Verdict
from .paired import MeanDifference, mean_difference

ALIKE = 0.5  # a randomized model's maps whose mean Spearman ρ with the trained maps may reach this are still alike
AGAINST_RANDOM = "blur"  # the fill of the comparisons with random order
IN_DISTRIBUTION = "road"  # the fill of ROAD's most- against least-relevant-first test
FIGURE = "Map checks"
PAPER = (
    "not a claim of the paper: a map that shows what the model uses drops the class's probability faster than random "
    "pixels when its top pixels are removed, raises it faster when they are put back (Petsiuk et al. 2018), keeps it "
    "longer when its least relevant pixels go first than its most relevant (ROAD, Rong et al. 2022), and changes "
    "when the model's weights are randomized (Adebayo et al. 2018)"
)
RULE = (
    "on every trained model it applies to, paired over the images (Wilcoxon p < 0.05): blurring its top pixels "
    "away lowers the class's probability faster than random order (deletion area) and putting them back raises it "
    "faster (insertion area); with ROAD's imputation its least-relevant-first curve stays above its most-relevant-"
    f"first; and with every weight randomized its maps' mean Spearman ρ with the trained maps has its 95% interval "
    f"under {ALIKE}"
)


@dataclass(frozen=True)
class MethodCell:
    """One method on one model: its four checks (None where not measured: a fill left out, no randomized images)."""

    deletion: MeanDifference | None  # blur: random order's deletion area minus the map's, per image
    insertion: MeanDifference | None  # blur: the map's insertion area minus random order's
    road: MeanDifference | None  # ROAD: least- minus most-relevant-first area (insertion minus deletion)
    rho: MeanDifference | None  # Spearman ρ, trained against every weight randomized
    ssim: float | None

    @property
    def randomization(self) -> bool | None:
        return None if self.rho is None else self.rho.high < ALIKE

    def checks(self) -> dict[str, bool | None]:
        """Each check's outcome (None: not measured)."""
        above = {key: None if d is None else d.above for key, d in self.differences().items()}
        return {**above, "randomization": self.randomization}

    def differences(self) -> dict[str, MeanDifference | None]:
        return {"deletion": self.deletion, "insertion": self.insertion, "ROAD": self.road}

    @property
    def passes(self) -> bool:
        """Every check measured passes (and one at least was)."""
        measured = [ok for ok in self.checks().values() if ok is not None]
        return bool(measured) and all(measured)

    def said(self) -> str:
        """Each check's numbers and mark: 'deletion +0.041 [+0.030, +0.052], p < 0.001 ✓; ...'."""
        parts = [f"{key} {d.numbers()} {mark(d.above)}" for key, d in self.differences().items() if d is not None]
        if self.rho is not None:
            parts.append(f"ρ {self.rho.numbers(2).split(', p')[0]} {mark(self.randomization)}")
        return "; ".join(parts)


def mark(ok: bool | None) -> str:
    return {True: "✓", False: "✗", None: "-"}[ok]


@lru_cache(maxsize=1024)
def _difference_of(data: bytes) -> MeanDifference:
    return mean_difference(np.frombuffer(data, dtype=np.float64))


def difference(values: list[float] | np.ndarray) -> MeanDifference:
    """paired.mean_difference of `values`, made once per process for the same values (the page draws the stored
    checks' figures, table, verdicts and tour step from the same numbers: 10,000 resamples each)."""
    return _difference_of(np.asarray(values, dtype=np.float64).tobytes())


def _difference(values: list[float], minus: list[float]) -> MeanDifference:
    return difference(np.subtract(values, minus))


def cell(result: dict, method: str) -> MethodCell:
    """Method `method`'s checks on one model's stored result."""
    checks = result["methods"][method]
    fills = checks["fills"]
    deletion = insertion = road = None
    if AGAINST_RANDOM in fills:
        mine, random = fills[AGAINST_RANDOM], result["random"][AGAINST_RANDOM]
        deletion = _difference(random["deletion"], mine["deletion"])
        insertion = _difference(mine["insertion"], random["insertion"])
    if IN_DISTRIBUTION in fills:
        road = _difference(fills[IN_DISTRIBUTION]["insertion"], fills[IN_DISTRIBUTION]["deletion"])
    last = checks["spearman"][-1] if checks["spearman"] else []
    rho = difference(last) if len(last) > 1 else None
    ssim = float(np.mean(checks["ssim"][-1])) if checks["ssim"] and checks["ssim"][-1] else None
    return MethodCell(deletion, insertion, road, rho, ssim)


def methods(section: dict | None) -> list[str]:
    """Every method checked on some model of `section`, in the order first stored."""
    found: list[str] = []
    for run in (section or {}).get("models", {}).values():
        found += [name for name in run["result"]["methods"] if name not in found]
    return found


def cells(section: dict | None) -> dict[str, dict[str, MethodCell]]:
    """Method: run key: its cell, for every run of `section` the method applies to."""
    runs = (section or {}).get("models", {})
    return {
        name: {key: cell(run["result"], name) for key, run in runs.items() if name in run["result"]["methods"]}
        for name in methods(section)
    }


def map_verdicts(section: dict | None) -> list[Verdict]:
    """One verdict per method: whether its maps pass the checks on the trained models."""
    runs = (section or {}).get("models", {})
    random = [run["label"] for run in runs.values() if run.get("random_weights")]
    apart = f"{', '.join(random)}: random weights, {APART}" if random else ""
    if not runs:
        return [Verdict("Maps show what the model uses", FIGURE, PAPER, RULE, "not measured", NOT_TESTED, "-")]
    verdicts = []
    for name, by_run in cells(section).items():
        trained = {key: c for key, c in by_run.items() if not runs[key].get("random_weights")}
        claim = f"{name} maps show what the model uses"
        if not trained:
            verdicts.append(Verdict(claim, FIGURE, PAPER, RULE, "no trained model checked", NOT_TESTED, "-", apart))
            continue
        here = " · ".join(f"{runs[key]['label']}: {c.said()}" for key, c in trained.items())
        passed = [key for key, c in trained.items() if c.passes]
        number = f"passes on {len(passed)} of {len(trained)} models"
        outcome = HOLDS if len(passed) == len(trained) else FAILS
        verdicts.append(Verdict(claim, FIGURE, PAPER, RULE, here, outcome, number, apart, _in_words(trained, runs)))
    return verdicts


FAILED = {  # a check failed, in words
    "deletion": "removing its top pixels does not drop the class faster than removing random ones",
    "insertion": "putting its top pixels back does not restore the class faster than random ones",
    "ROAD": "with in-distribution filling, its top pixels do not matter more than its bottom ones",
    "randomization": "its maps stay alike when the weights are randomized",
}


def _in_words(trained: dict[str, MethodCell], runs: dict) -> str:
    """What the numbers say, a sentence per model, without statistics: every check passed, or those failed."""
    said = []
    for key, c in trained.items():
        failed = [FAILED[check] for check, ok in c.checks().items() if ok is False]
        said.append(f"On {runs[key]['label']}: {'; '.join(failed) if failed else 'it passes every check'}.")
    return " ".join(said)


def table(section: dict | None) -> str:
    """Methods x models in Markdown: each cell's four checks, ✓ where it passes."""
    runs = (section or {}).get("models", {})
    if not runs:
        return ""
    note = (
        "Each cell, per image, mean: deletion and insertion, the map's gain over random order (area under the curve, "
        "blur fill); ROAD, its least- minus most-relevant-first area (noisy linear imputation); ρ, the Spearman "
        "correlation of its maps with every weight randomized against the trained ones; ✓ passes, ✗ fails."
    )
    head = "| method | " + " | ".join(run["label"] for run in runs.values()) + " |"
    rows = [note, "", head, "|---" * (len(runs) + 1) + "|"]
    for name, by_run in cells(section).items():
        texts = []
        for key in runs:
            c = by_run.get(key)
            texts.append("does not apply" if c is None else _short(c))
        rows.append(f"| {name} | " + " | ".join(texts) + " |")
    return "\n".join(rows)


def _short(c: MethodCell) -> str:
    short = {"deletion": "del", "insertion": "ins", "ROAD": "ROAD"}
    parts = [f"{short[key]} {d.mean:+.3f} {mark(d.above)}" for key, d in c.differences().items() if d is not None]
    if c.rho is not None:
        parts.append(f"ρ {c.rho.mean:.2f} {mark(c.randomization)}")
    return " · ".join(parts).replace("-", "−")

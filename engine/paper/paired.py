"""How sure an accuracy comparison is: two models scored on the same images (a paired bootstrap interval and
McNemar's exact test), and two members trained with several seeds (Welch's t interval over the seeds).

    d = paired(step6.correct, step0.correct, "step 6", "step 0")
    d.sentence()   # 'step 6 − step 0: −0.2 points [−0.7, +0.3], p = 0.42: no difference detected'

The rule: a difference is detected where McNemar's exact test on the images only one model gets right gives
p < 0.05 (ALPHA); the bootstrap interval (10,000 resamples of the images, seeded) says how large it may be.
Where several images come from one source (Fig 12b's 70 corrupted copies of each test image), `groups` names
each image's source: the bootstrap resamples sources and the test flips the two models' labels per source
(McNemar's exact test with a source for an image: the two are equal where each source has one image), since
copies of one image are not independent trials.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
RESAMPLES = 10_000


def points(value: float, signed: bool = True) -> str:
    """A difference in points with one decimal and a true minus sign: '+0.3', '−0.7', '0.0'."""
    text = f"{value:+.1f}" if signed else f"{value:.1f}"
    if text.lstrip("+-") == "0.0":
        return "0.0"
    return text.replace("-", "−")


@dataclass(frozen=True)
class PairedDifference:
    """Model A's accuracy minus model B's on the same images, in points, with its paired bootstrap 95%
    interval and McNemar's exact p over the discordant images."""

    a: str
    b: str
    accuracy_a: float  # fraction
    accuracy_b: float
    images: int
    only_a: int  # images A gets right and B wrong
    only_b: int
    low: float  # points
    high: float
    p: float
    sources: int = 0  # independent sources the images were grouped by (0: each image its own)

    @property
    def difference(self) -> float:
        """A − B in points."""
        return 100 * (self.only_a - self.only_b) / self.images

    @property
    def detected(self) -> bool:
        return self.p < ALPHA

    @property
    def outcome(self) -> str:
        """'A higher', 'A lower' or 'no difference detected'."""
        if not self.detected:
            return "no difference detected"
        return f"{self.a} {'higher' if self.difference > 0 else 'lower'}"

    def interval(self) -> str:
        return f"[{points(self.low)}, {points(self.high)}]"

    def numbers(self) -> str:
        """'−0.2 points [−0.7, +0.3], p = 0.42' (or 'p < 0.001')."""
        p = p_value(self.p)
        return f"{points(self.difference)} points {self.interval()}, p {p if p.startswith('<') else f'= {p}'}"

    def sentence(self) -> str:
        """'step 6 − step 0: −0.2 points [−0.7, +0.3], p = 0.42: no difference detected'."""
        return f"{self.a} − {self.b}: {self.numbers()}: {self.outcome}"


def in_words(detected: bool, difference: float, a: str, b: str) -> str:
    """A difference said without statistics: 'no difference we can detect between the two', or 'the AlterNet is
    ahead, by more than chance explains' (`a` and `b` named as a sentence names them)."""
    if not detected:
        return "no difference we can detect between the two"
    return f"{a if difference > 0 else b} is ahead, by more than chance explains"


def p_value(p: float) -> str:
    """Two significant digits, or '< 0.001'."""
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def _stats():
    """scipy.stats, imported on first use: it takes a second, and most pages and runs compute no interval."""
    from scipy import stats

    return stats


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact two-sided p: the discordant images split as a fair coin would (1.0 with none)."""
    discordant = only_a + only_b
    return 1.0 if discordant == 0 else float(_stats().binomtest(only_a, discordant, 0.5).pvalue)


def sign_flip_exact(per_source: np.ndarray) -> float:
    """The exact two-sided p that the sum of the sources' differences (A's correct images minus B's, per source)
    is as far from 0 as observed when each source's two models swap labels with probability 1/2 (no difference):
    the exact distribution of the sum of ±d over the sources, convolved source by source."""
    d = np.abs(np.asarray(per_source, np.int64))
    d = d[d != 0]
    if not len(d):
        return 1.0
    total = int(d.sum())
    distribution = np.zeros(2 * total + 1)
    distribution[total] = 1.0
    for value in d:  # the support stays inside [-total, total], so the shifts never wrap around
        distribution = 0.5 * (np.roll(distribution, value) + np.roll(distribution, -value))
    observed = abs(int(np.sum(per_source)))
    far = np.abs(np.arange(-total, total + 1)) >= observed
    return float(min(1.0, distribution[far].sum()))


def paired(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    a: str = "A",
    b: str = "B",
    resamples: int = RESAMPLES,
    seed: int = 0,
    groups: np.ndarray | None = None,
) -> PairedDifference:
    """A's accuracy minus B's on the same images (bit per image, in the same order). The bootstrap resamples
    the images with replacement; as each image's difference is -1, 0 or +1, a resample is the multinomial
    draw of how many of each it takes, which is the same distribution computed without an index per image.
    With `groups` (each image's source, equal-sized sources) the bootstrap resamples the sources and the p is
    the sign-flip test over them (sign_flip_exact)."""
    correct_a, correct_b = np.asarray(correct_a, bool), np.asarray(correct_b, bool)
    if correct_a.shape != correct_b.shape or correct_a.ndim != 1 or not len(correct_a):
        raise ValueError(
            f"paired comparison needs two equal non-empty bit vectors, not {correct_a.shape} and {correct_b.shape}"
        )
    n = len(correct_a)
    only_a, only_b = int((correct_a & ~correct_b).sum()), int((correct_b & ~correct_a).sum())
    rng = np.random.default_rng(seed)
    if groups is None:
        draws = rng.multinomial(n, [only_a / n, only_b / n, 1 - (only_a + only_b) / n], resamples)
        differences = 100 * (draws[:, 0] - draws[:, 1]) / n
        p, sources = mcnemar_exact(only_a, only_b), 0
    else:
        _, source, sizes = np.unique(np.asarray(groups), return_inverse=True, return_counts=True)
        if len(groups) != n or np.ptp(sizes):
            raise ValueError(f"groups need one source per image and as many images per source, not {sizes.tolist()}")
        per_source = np.bincount(source, correct_a.astype(np.int64) - correct_b.astype(np.int64)).astype(np.int64)
        sources = len(per_source)
        differences = 100 * per_source[rng.integers(0, sources, (resamples, sources))].sum(1) / n
        p = sign_flip_exact(per_source)
    low, high = np.percentile(differences, [2.5, 97.5])
    return PairedDifference(
        a,
        b,
        float(correct_a.mean()),
        float(correct_b.mean()),
        n,
        only_a,
        only_b,
        float(low),
        float(high),
        p,
        sources,
    )


@dataclass(frozen=True)
class SeedDifference:
    """The mean accuracy over A's seeds minus B's, in points, with Welch's t 95% interval over the seeds
    (each seed one run of the same recipe)."""

    a: str
    b: str
    runs_a: tuple[float, ...]  # accuracy of each seed, fractions
    runs_b: tuple[float, ...]
    low: float  # points
    high: float

    @property
    def difference(self) -> float:
        return 100 * (float(np.mean(self.runs_a)) - float(np.mean(self.runs_b)))

    @property
    def detected(self) -> bool:
        return self.low > 0 or self.high < 0

    @property
    def outcome(self) -> str:
        if not self.detected:
            return "no difference detected"
        return f"{self.a} higher" if self.difference > 0 else f"{self.a} lower"

    def numbers(self) -> str:
        """'−0.2 points [−1.1, +0.7] over 3 and 3 seeds'."""
        return (
            f"{points(self.difference)} points [{points(self.low)}, {points(self.high)}] "
            f"over {len(self.runs_a)} and {len(self.runs_b)} seeds"
        )

    def sentence(self) -> str:
        return f"{self.a} − {self.b}, mean of seeds: {self.numbers()}: {self.outcome}"


def over_seeds(runs_a: list[float], runs_b: list[float], a: str = "A", b: str = "B") -> SeedDifference:
    """Welch's t interval for the difference of mean accuracies; needs two seeds or more on each side."""
    if min(len(runs_a), len(runs_b)) < 2:
        raise ValueError("a difference over seeds needs at least two seeds of each model")
    if np.ptp(runs_a) == 0 and np.ptp(runs_b) == 0:  # every seed scored alike: no spread to widen the interval
        low = high = 100 * (float(np.mean(runs_a)) - float(np.mean(runs_b)))
    else:
        ci = _stats().ttest_ind(runs_a, runs_b, equal_var=False).confidence_interval(1 - ALPHA)
        low, high = 100 * float(ci.low), 100 * float(ci.high)
    return SeedDifference(a, b, tuple(runs_a), tuple(runs_b), low, high)


@dataclass(frozen=True)
class MeanDifference:
    """The mean of per-image differences (a map's score minus random order's on the same images), with its paired
    bootstrap 95% interval (scipy.stats.bootstrap, percentile, seeded) and the Wilcoxon signed-rank p."""

    mean: float
    low: float
    high: float
    p: float
    images: int

    @property
    def detected(self) -> bool:
        return self.p < ALPHA

    @property
    def above(self) -> bool:
        """Above 0 by more than chance explains."""
        return self.detected and self.mean > 0

    def numbers(self, digits: int = 3) -> str:
        """'+0.041 [+0.030, +0.052], p < 0.001' (true minus signs)."""
        text = f"{self.mean:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]".replace("-", "−")
        p = p_value(self.p)
        return f"{text}, p {p if p.startswith('<') else f'= {p}'}"


def mean_difference(differences: np.ndarray, resamples: int = RESAMPLES, seed: int = 0) -> MeanDifference:
    """The mean of `differences` (one per image, paired), its bootstrap interval and Wilcoxon's p (1.0 where every
    difference is 0)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"a mean difference needs two or more paired values, not shape {d.shape}")
    if not np.any(d):
        return MeanDifference(0.0, 0.0, 0.0, 1.0, len(d))
    ci = (
        _stats()
        .bootstrap((d,), np.mean, confidence_level=1 - ALPHA, n_resamples=resamples, method="percentile", rng=seed)
        .confidence_interval
    )
    return MeanDifference(float(d.mean()), float(ci.low), float(ci.high), float(_stats().wilcoxon(d).pvalue), len(d))

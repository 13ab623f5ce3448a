"""Paired comparisons (engine.paper.paired) against computations made another way: McNemar's exact p from the binomial
sum written out, the paired bootstrap against a bootstrap that resamples image indices, Welch's interval from its
formula."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from engine.paper.paired import over_seeds, paired, points


def bits(both: int, only_a: int, only_b: int, neither: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two models' per-image correctness with a given contingency table, images shuffled."""
    a = np.array([1] * both + [1] * only_a + [0] * only_b + [0] * neither, bool)
    b = np.array([1] * both + [0] * only_a + [1] * only_b + [0] * neither, bool)
    order = np.random.default_rng(seed).permutation(len(a))
    return a[order], b[order]


def exact_two_sided(k: int, n: int) -> float:
    """McNemar's exact p by hand: twice the smaller binomial tail of k in n at 1/2, capped at 1."""
    tail = sum(math.comb(n, i) for i in range(0, min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def test_mcnemar_and_the_difference_match_a_contingency_table_by_hand():
    a, b = bits(800, 40, 20, 140)
    d = paired(a, b, "A", "B")
    assert (d.only_a, d.only_b, d.images) == (40, 20, 1000)
    assert d.difference == pytest.approx(2.0) and d.accuracy_a == pytest.approx(0.84)
    assert d.p == pytest.approx(exact_two_sided(20, 60), rel=1e-9)
    assert d.p == pytest.approx(stats.binomtest(40, 60, 0.5).pvalue, rel=1e-9)
    assert d.detected and d.outcome == "A higher" and d.p < 0.05


def test_the_bootstrap_interval_matches_resampling_images_by_index():
    a, b = bits(8000, 130, 150, 1720, seed=3)
    d = paired(a, b, "step 6", "step 0")
    rng = np.random.default_rng(7)
    diff = a.astype(int) - b.astype(int)
    slow = [100 * diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(3000)]
    low, high = np.percentile(slow, [2.5, 97.5])
    assert abs(d.low - low) < 0.05 and abs(d.high - high) < 0.05
    se = math.sqrt((130 + 150) - (130 - 150) ** 2 / 10_000) / 10_000  # the paired difference's standard error
    assert d.low == pytest.approx(-0.2 - 196 * se, abs=0.03) and d.high == pytest.approx(-0.2 + 196 * se, abs=0.03)
    assert not d.detected and d.sentence() == (
        f"step 6 − step 0: −0.2 points [{points(d.low)}, {points(d.high)}], p = {d.p:.2g}: no difference detected"
    )


def test_identical_models_differ_by_nothing():
    a, _ = bits(900, 0, 0, 100)
    d = paired(a, a.copy())
    assert (d.difference, d.low, d.high, d.p) == (0.0, 0.0, 0.0, 1.0)
    assert d.numbers() == "0.0 points [0.0, 0.0], p = 1"
    assert paired(*bits(500, 100, 0, 400)).numbers().endswith("], p < 0.001")
    with pytest.raises(ValueError):
        paired(a, a[:10])


def test_welch_interval_over_seeds_matches_its_formula():
    ours, theirs = [0.877, 0.881, 0.874], [0.879, 0.885, 0.883]
    d = over_seeds(ours, theirs, "step 6", "step 0")
    va, vb = np.var(ours, ddof=1) / 3, np.var(theirs, ddof=1) / 3
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 2)
    half = 100 * stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    centre = 100 * (np.mean(ours) - np.mean(theirs))
    assert d.low == pytest.approx(centre - half) and d.high == pytest.approx(centre + half)
    assert d.numbers().endswith("over 3 and 3 seeds") and d.outcome == "no difference detected"
    far = over_seeds([0.90, 0.901, 0.899], [0.85, 0.851, 0.849], "A", "B")
    assert far.detected and far.outcome == "A higher"
    with pytest.raises(ValueError):
        over_seeds([0.9], [0.8, 0.81])


def test_grouped_by_single_images_is_mcnemars_exact_test():
    a, b = bits(800, 40, 20, 140)
    plain, grouped = paired(a, b), paired(a, b, groups=np.arange(len(a)))
    assert grouped.p == pytest.approx(plain.p, rel=1e-9) and grouped.sources == len(a) and plain.sources == 0
    assert abs(grouped.low - plain.low) <= 0.3 and abs(grouped.high - plain.high) <= 0.3


def test_copies_of_one_image_are_tested_and_resampled_together():
    """100 source images, 10 copies each sharing their source's outcome: 60 copies against 30 look decisive, 6
    sources against 3 are not; the grouped p is McNemar's on the sources, its interval a bootstrap over them."""
    a_source, b_source = bits(80, 6, 3, 11, seed=2)
    a, b, groups = np.repeat(a_source, 10), np.repeat(b_source, 10), np.repeat(np.arange(100), 10)
    plain, grouped = paired(a, b), paired(a, b, groups=groups)
    assert plain.difference == grouped.difference == pytest.approx(3.0) and grouped.sources == 100
    assert grouped.p == pytest.approx(exact_two_sided(3, 9), rel=1e-9) and plain.p < 0.05 < grouped.p
    rng = np.random.default_rng(11)
    diff = a_source.astype(int) - b_source.astype(int)
    slow = [100 * diff[rng.integers(0, 100, 100)].mean() for _ in range(3000)]
    low, high = np.percentile(slow, [2.5, 97.5])
    assert abs(grouped.low - low) <= 1.0 and abs(grouped.high - high) <= 1.0  # steps of 1 point
    assert grouped.high - grouped.low > 2 * (plain.high - plain.low)


def test_the_grouped_p_is_the_sign_flip_distribution_enumerated():
    """Per-source differences of unequal size: the p counts the sign patterns whose sum is as far from 0."""
    per_source = [3, -1, 2, 0, 5, -2]
    a, b = np.zeros((6, 6), bool), np.zeros((6, 6), bool)
    for source, d in enumerate(per_source):
        (a if d > 0 else b)[source, : abs(d)] = True
    d = paired(a.ravel(), b.ravel(), groups=np.repeat(np.arange(6), 6))
    observed = abs(sum(per_source))
    sums = [sum(s * abs(v) for s, v in zip(signs, per_source)) for signs in itertools.product((-1, 1), repeat=6)]
    assert d.p == pytest.approx(np.mean([abs(total) >= observed for total in sums]), rel=1e-12)
    assert d.difference == pytest.approx(100 * 7 / 36)
    with pytest.raises(ValueError, match="as many images per source"):
        paired(a.ravel(), b.ravel(), groups=np.arange(36) % 5)

"""Fig 12a's verdict (engine.paper.buildup): the stored per-image bits cover the test split; each step's paired
difference to the CNN equals one made by hand from the stored bits; the verdict decides on seeds where there are
several and on the paired test of seed 0 where there is one."""

from __future__ import annotations

import numpy as np

from engine.models import correctness
from engine.models.cifar_family import CHECKPOINTS
from engine.paper.buildup import Run, alternet_verdict, buildup_runs, step_differences
from engine.paper.claims import FAILS, HOLDS, NO_DIFFERENCE


def test_the_stored_bits_cover_the_test_split_and_the_verdicts_pair():
    scored = [path for path in CHECKPOINTS.glob("*.safetensors") if correctness.path_for(path).is_file()]
    assert {"preact_resnet", "alternet-s2b4-s3b2-s3b4-s3b6-s4b2-s4b4"} <= {path.stem for path in scored}
    for path in scored:
        stored = correctness.load(path)
        assert len(stored.correct) == 10_000 and np.bincount(stored.labels).tolist() == [1000] * 10, path.name


def test_paired_differences_match_the_stored_bits():
    runs = buildup_runs()
    differences = step_differences(runs)
    cnn = correctness.load(CHECKPOINTS / "preact_resnet.safetensors")
    assert set(differences) == {n for n, r in runs.items() if n and r[0].correct is not None} and 6 in differences
    for step, d in differences.items():
        ours = runs[step][0].correct
        assert d.only_a == int((ours & ~cnn.correct).sum()) and d.only_b == int((cnn.correct & ~ours).sum())
        assert d.low <= d.difference <= d.high and 0 < d.p <= 1


def run(seed: int, accuracy: float, correct: np.ndarray) -> Run:
    return Run(seed, f"toy-seed{seed}", 40, accuracy, correct)


def test_one_seed_each_rests_on_the_paired_test_of_seed_0():
    rng = np.random.default_rng(0)
    cnn = rng.random(10_000) < 0.88
    better = cnn | (rng.random(10_000) < 0.05)  # right wherever the CNN is, and on some more
    verdict = alternet_verdict({0: [run(0, cnn.mean(), cnn)], 6: [run(0, better.mean(), better)]})
    assert verdict.outcome == HOLDS and "only one seed each" in verdict.here and "paired test of seed 0" in verdict.rule
    same = alternet_verdict({0: [run(0, cnn.mean(), cnn)], 6: [run(0, cnn.mean(), cnn.copy())]})
    assert same.outcome == NO_DIFFERENCE


def test_several_seeds_decide_on_the_difference_of_means():
    rng = np.random.default_rng(1)
    bits = [rng.random(10_000) < 0.88 for _ in range(3)]
    cnn = [run(s, a, b) for s, (a, b) in enumerate(zip([0.880, 0.882, 0.881], bits))]
    worse = [run(s, a, b) for s, (a, b) in enumerate(zip([0.870, 0.871, 0.869], bits))]
    verdict = alternet_verdict({0: cnn, 6: worse})
    assert verdict.outcome == FAILS and "over 3 and 3 seeds" in verdict.number
    assert "87.0% (87.0, 87.1, 86.9 over seeds 0, 1, 2)" in verdict.here and "seed 2:" in verdict.here
    assert "Welch" in verdict.rule


def test_uneven_seeds_say_so_and_rest_on_seed_0():
    rng = np.random.default_rng(2)
    bits = [rng.random(10_000) < 0.88 for _ in range(2)]
    cnn = [run(s, float(b.mean()), b) for s, b in enumerate(bits)]
    verdict = alternet_verdict({0: cnn, 6: [run(0, float(bits[0].mean()), bits[0].copy())]})
    assert verdict.outcome == NO_DIFFERENCE and "step 6 has 1 seed bundled and step 0 2" in verdict.rule
    assert "seed 0 of each" in verdict.here and "only one seed each" not in verdict.here

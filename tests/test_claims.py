"""The claims counted under Figs 8 and 9 (engine.paper.claims, app.views.evidence): on made-up results where a
claim holds and where it fails, the counts and the words follow the numbers; on a real model the counts
equal a count made by hand from the block list."""

from __future__ import annotations

import numpy as np
from PIL import Image

import engine
from app.views.evidence import distance_here, high_frequency_here, variance_here
from engine.paper.claims import Count, Evidence
from engine.results import AttentionLayer, AttentionResult
from tests.helpers.claims import KINDS, result


def test_the_paper_holding_is_counted_and_said():
    holds = result(KINDS, [1, 0.5, 2, 1, 3, 5, 4], [0, -1, 1, 0, 2, 3, 1])
    e = Evidence.of(holds)
    assert (e.msa_lower_variance, e.others_raise_variance) == (Count(3, 3), Count(2, 2))
    assert e.msa_lower_high_frequency == Count(3, 3) and e.others_raise_high_frequency == Count(2, 2)
    assert "MSA units lowered it in 3 of 3; MLP units raised it in 2 of 2" in variance_here([holds])


def test_the_paper_failing_is_counted_and_said():
    fails = result(KINDS, [1, 2, 1, 3, 2, 1, 5], [0, 1, 0, 1, 0, 0, 2], random=True)
    e = Evidence.of(fails)
    assert e.msa_lower_variance == Count(0, 3) and e.others_raise_variance == Count(0, 2)
    text = high_frequency_here([fails])
    assert "MSA units lowered it in 0 of 3" in text and "MLP units raised it in 0 of 2" in text
    assert "random weights" in text
    assert Count(0, 0).share is None and str(Count(2, 5)) == "2 of 5"


def test_attention_distance_is_read_from_the_layers():
    toy = result(KINDS, [1] * 7, [0] * 7, random=True)
    layers = [AttentionLayer(f"l{i}", i, np.zeros((1, 2, 2, 2)), [d, d]) for i, d in enumerate([100.0, 101.0, 99.0])]
    toy.attention = AttentionResult("global", layers)
    assert distance_here(toy) == (
        "Mean attention distance here: 100 px in layer 1, 99 px in layer 3: it stays about the same, "
        "as expected of random weights."
    )
    toy.attention = AttentionResult("global", [layers[0], AttentionLayer("l9", 9, layers[0].maps, [30.0, 250.0])])
    assert "it grows" in distance_here(toy) and "140 px in layer 2" in distance_here(toy)
    maps = layers[0].maps
    cifar = [AttentionLayer(f"l{i}", i, maps, [d, d], even_distance=16.66) for i, d in enumerate([16.1, 15.5])]
    toy.attention = AttentionResult("global", cifar)  # a 32-pixel image: tenths, and the even spread to compare
    said = distance_here(toy)
    assert "16.1 px in layer 1, 15.5 px in layer 2 (attention spread evenly over the patches: 16.7 px)" in said


def test_counts_on_a_real_model_match_a_count_by_hand(photos):
    real = engine.Analyzer(engine.create_model("vit_cifar", "random")).attribute(
        [Image.fromarray(np.asarray(photos[0]))]
    )
    v = [b.variance for b in real.blocks]
    hand = sum(v[i] < v[i - 1] for i, b in enumerate(real.blocks) if b.kind == "msa")
    assert Evidence.of(real).msa_lower_variance == Count(hand, sum(b.kind == "msa" for b in real.blocks))
    assert f"MSA units lowered it in {hand} of 8" in variance_here([real])


def test_engine_verdicts_state_rule_and_observation_apart_and_never_count_random_weights():
    from engine.paper.claims import FAILS, HOLDS, NOT_TESTED, Counted, unit_verdict

    holds = Evidence.of(result(KINDS, [1, 0.5, 2, 1, 3, 5, 4], [0, -1, 1, 0, 2, 3, 1]))
    fails = Evidence.of(result(KINDS, [1, 2, 1, 3, 2, 1, 5], [0, 1, 0, 1, 0, 0, 2]))
    trained, random = Counted("Trained", False, holds), Counted("Random", True, fails)
    verdict = unit_verdict([trained, random], "variance", "msa")
    assert verdict.outcome == HOLDS and "Trained 3 of 3" in verdict.here and "Random" not in verdict.here
    assert verdict.apart == "Random 0 of 3: random weights, architecture alone, not a test of the claim"
    line = verdict.line()
    assert line.startswith("The paper: MSAs ensemble feature maps") and " · Here: MSA units lower it in: " in line
    assert " · Verdict: holds (3 of 3 units over 1 model) · Rule: in every trained model, most MSA units lower" in line
    assert unit_verdict([Counted("Trained", False, fails)], "variance", "msa").outcome == FAILS
    alone = unit_verdict([random], "variance", "msa")  # random weights only: nothing is tested
    assert alone.outcome == NOT_TESTED and alone.apart and alone.holds is None


def test_the_tour_verdict_shows_random_weights_apart(photos):
    from app.views.evidence import unit_verdict as shown_verdict

    holds = result(KINDS, [1, 0.5, 2, 1, 3, 5, 4], [0, -1, 1, 0, 2, 3, 1])
    fails = result(KINDS, [1, 2, 1, 3, 2, 1, 5], [0, 1, 0, 1, 0, 0, 2], random=True)
    said = shown_verdict([holds, fails], "variance")
    assert said.holds is True and "**Verdict**: ✅ holds" in said.text  # the random model fails but is not counted
    assert "*Toy 0 of 3: random weights, architecture alone, not a test of the claim*" in said.text
    assert shown_verdict([fails], "variance").holds is None

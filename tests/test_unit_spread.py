"""Figs 8 and 9 image by image (engine.paper.unit_spread): shares and bootstrap counts on made-up values where the
answer is known, and on a real model the counts on the image mean equal engine.paper.claims.Evidence over the
same images."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

import engine
from app.views.evidence import spread_line
from engine.models.cifar_family import bundled
from engine.paper import unit_spread
from engine.paper.claims import Evidence
from engine.paper.unit_spread import UnitSpread, measure, spread, stored

KINDS = ["embed", "msa", "mlp", "pool", "msa"]


def test_shares_and_counts_on_known_values():
    images = 200
    rng = np.random.default_rng(0)
    variance = np.ones((5, images))
    variance[1] = 0.5 + 0.01 * rng.random(images)  # the first MSA lowers it on every image
    variance[2] = np.where(np.arange(images) < 50, 0.4, 2.0)  # the MLP raises it on 150 of 200 images
    variance[3] = 3.0
    variance[4] = np.where(np.arange(images) < 60, 2.0, 4.0)  # the second MSA lowers it on 60 of 200, not on the mean
    high = -variance
    s = spread("toy", "trained", [f"b{i}" for i in range(5)], KINDS, variance, high)
    assert [u.name for u in s.units] == ["b1", "b2", "b4"]
    assert [u.lowers_variance for u in s.units] == [1.0, 0.25, 0.3]
    assert s.shares(("mlp",), "variance", lower=False) == [0.75]
    assert (s.msa_lower_variance.changed, s.msa_lower_variance.units) == (1, 2)
    assert s.msa_lower_variance.low == 1 and s.msa_lower_variance.high == 1  # every resample agrees
    assert s.msa_lower_variance.spread() == "1 of 2 (in every resample of the images)"
    assert s.msa_lower_high_frequency.changed == 1 and s.others_raise_variance.changed == 1
    assert UnitSpread.from_json(s.to_json()) == s


def test_a_close_call_gets_a_wide_interval():
    images = 400
    variance = np.ones((3, images))
    variance[1] = np.where(np.arange(images) % 2 == 0, 0.9, 1.1)  # lowers it on half the images, not on the mean
    variance[1, :4] = 0.5  # ... and on the mean, by a hair
    s = spread("toy", "trained", ["e", "m", "x"], ["embed", "msa", "pool"], variance, variance.copy())
    count = s.msa_lower_variance
    assert count.changed == 1 and count.low == 0 and count.high == 1
    assert "(0 to 1 in 95 of 100 resamples of the images)" in count.spread()


def test_counts_on_a_real_model_equal_the_evidence_on_the_same_images():
    model = engine.create_model("alternet", "random", msa="s4:2,s4:4")
    images = np.random.default_rng(1).integers(0, 256, (20, 32, 32, 3), dtype=np.uint8)
    ours = measure(model, "AlterNet", images)
    theirs = Evidence.of(engine.Analyzer(model, batch_size=20).attribute(list(images)))
    for name in ("msa_lower_variance", "others_raise_variance", "msa_lower_high_frequency"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a.changed, a.units) == (b.changed, b.units), name
    assert ours.images == 20 and {u.kind for u in ours.units} == {"msa", "conv"}


def test_the_store_holds_every_trained_member():
    spreads = stored()
    assert set(spreads) == {f"step{n}" for n in range(7)} | {"vit"}
    assert all(s.images == 1000 and not s.weights.startswith("random") for s in spreads.values())
    assert spreads["step0"].msa_lower_variance.units == 0 and spreads["step6"].msa_lower_variance.units == 6


def test_the_app_never_prints_a_range_whose_ends_are_equal():
    """Two MLPs raising the variance on every image: 'each on 100% of the images', not '100-100%'; two MSAs whose
    shares differ read as a range in words."""
    images, kinds = 100, ["embed", "msa", "mlp", "msa", "mlp"]
    variance = np.ones((5, images))
    variance[1], variance[2], variance[4] = 0.5, 2.0, 5.0  # the first MSA lowers it, both MLPs raise it, everywhere
    variance[3] = np.where(np.arange(images) < 70, 1.0, 4.0)  # the second MSA lowers it on 70 of 100 images
    line = spread_line(spread("toy", "trained", [f"b{i}" for i in range(5)], kinds, variance, -variance), "variance")
    assert "unit by unit on 70% to 100% of the images" in line and "raise it in 2 of 2" in line, line
    assert "every one on 100% of the images" in line and not re.search(r"(\d+)%?-\1%", line), line
    assert "each on" not in line


def test_a_stored_spread_is_read_for_the_checkpoint_it_measured_only(monkeypatch):
    """A model's label names its checkpoint file; its stored spread is shown while that checkpoint is the one measured
    (whatever the label's wording), and not once it is retrained."""
    label = bundled("preact_resnet", "the CNN")[1]
    assert unit_spread.for_weights(label).label == "ResNet (step 0)"
    assert unit_spread.for_weights(label.replace("(preact_resnet.", "(another.")) is None
    spreads = unit_spread.stored()
    spreads["step0"] = replace(spreads["step0"], checkpoint="15 epochs, finished 2026-11-01T00:00:00+00:00")
    monkeypatch.setattr(unit_spread, "stored", lambda: spreads)
    assert unit_spread.for_weights(label) is None

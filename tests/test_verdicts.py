"""The verdicts on the stored paper figures (engine.paper.verdicts) and where they are shown: each rule checked by hand
on the stored numbers, random-weight runs never counted, Fig 12b's per-image bits made as the analysis makes its
images, and a verdict under every figure of the Paper figures tab."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import engine
from app.exports.paper_findings import caption, sections
from engine.analyses.corruption import CorruptionRobustness
from engine.paper.claims import FAILS, HOLDS, NO_DIFFERENCE, NOT_TESTED
from engine.paper.findings import FINDINGS, corruption_correct, pack_bits, unpack_bits
from engine.paper.verdicts import FIGURE_VERDICTS, corruption, figure_verdicts, lesion, noise, stored_sections


def test_every_figure_of_the_paper_tab_carries_its_verdicts():
    shown = sections({})
    for name in FIGURE_VERDICTS:
        text = caption(name, shown[name])
        for verdict in figure_verdicts(name, shown[name]):
            if name == "maps":  # a verdict per row of its table: the checks and the rule once, the numbers after
                assert f"**{verdict.claim}: {verdict.outcome}** ({verdict.number}). {verdict.words}" in text
                assert verdict.here in text and verdict.rule in text and text.count(verdict.rule) == 1
            else:
                assert verdict.inline() in text and f"**Verdict: {verdict.outcome}**" in text
            assert verdict.paper and verdict.rule and verdict.here


def test_the_lesion_verdicts_follow_the_stored_drops():
    section = stored_sections()["lesion"]
    resnet, alternet = lesion(section)
    units = section["models"]["step6"]["result"]["units"]
    median = np.median([u["drop"] for u in units])
    ends = [u for u in units if u["kind"] == "msa" and u["name"] in ("stages.1.3", "stages.2.5", "stages.3.3")]
    assert alternet.outcome == (HOLDS if all(u["drop"] > median for u in ends) else FAILS)
    cnn = section["models"]["step0"]["result"]["units"]
    early = np.mean([u["drop"] for u in cnn if int(u["name"].split(".")[1]) < 2])
    late = np.mean([u["drop"] for u in cnn if int(u["name"].split(".")[1]) >= 2])
    assert resnet.outcome == (HOLDS if early > late else FAILS)
    assert f"{100 * early:.1f} points" in resnet.here


def test_random_weights_are_never_counted_in_a_verdict():
    section = copy.deepcopy(stored_sections()["noise"])
    assert noise(section)[0].outcome in (HOLDS, FAILS)
    section["models"]["vit"]["random_weights"] = True
    verdict = noise(section)[0]
    assert verdict.outcome == NOT_TESTED and verdict.holds is None
    assert "ViT: random weights, architecture alone, not a test of the claim" in verdict.apart


def test_fig_12b_bits_are_the_analysis_images_and_give_a_paired_verdict():
    model = engine.create_model("preact_resnet", "random")
    images, labels = FINDINGS["corruption"].data(10)
    result = CorruptionRobustness(model, ["gaussian_noise", "contrast"], [1, 5]).attribute(images, labels).to_json()
    run = {"label": "ResNet (step 0)", "random_weights": False, "result": result}
    section = {"images": 10, "models": {"step0": run, "step6": copy.deepcopy(run)}}
    bits = corruption_correct({"step0": model}, section)["step0"]
    measured = [a for accuracies in result["accuracy"].values() for a in accuracies]
    assert len(bits) == 40 and bits.mean() == pytest.approx(np.mean(measured))
    assert (unpack_bits(pack_bits(bits), 40) == bits).all()
    assert corruption(section)[0].outcome == NOT_TESTED  # no bits stored: no test
    for key in ("step0", "step6"):
        section["models"][key]["correct"] = pack_bits(bits)
    verdict = corruption(section)[0]
    assert verdict.outcome == NO_DIFFERENCE and "p = 1" in verdict.number  # the same model twice

"""One test accuracy per member of the bundled family, the same wherever it is shown (the model's label, the AlterNet
tab's table, the guided tour's Fig 12a verdict, the README and docs/training.md), computed here from the stored
per-image bits of every bundled seed: the mean over seeds where there are several, which the label and the table
say."""

from __future__ import annotations

import re

import numpy as np
import pytest

from app.views.alternet import steps_markdown
from engine.models.cifar_family import CHECKPOINTS, bundled, checkpoint_stem
from engine.models.placement import PAPER_DEPTHS, buildup_sequence
from engine.paper.buildup import alternet_verdict
from tests.conftest import ROOT

STEPS = {
    n: checkpoint_stem("preact_resnet", {}) if n == 0 else checkpoint_stem("alternet", {"msa": placement})
    for n, placement in enumerate(buildup_sequence(PAPER_DEPTHS))
}


def by_hand(stem: str) -> tuple[str, int]:
    """The member's accuracy ('88.1%') and its number of seeds, from the bits files themselves."""
    files = [CHECKPOINTS / f"{stem}.correct.npz"] + [
        path
        for path in CHECKPOINTS.glob(f"{stem}-seed*.correct.npz")
        if re.fullmatch(rf"{stem}-seed\d+", path.name[:-12])
    ]
    accuracies = []
    for path in files:
        with np.load(path) as stored:
            accuracies.append(np.unpackbits(stored["bits"])[: int(stored["count"])].mean())
    return f"{100 * np.mean(accuracies):.1f}%", len(files)


def row(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_build_up_step_has_one_accuracy_in_the_app_the_readme_and_the_docs(step):
    accuracy, seeds = by_hand(STEPS[step])
    several = "mean of 3 seeds" if seeds == 3 else "mean of"
    label = bundled(STEPS[step], f"step {step}")[1]
    table = row(steps_markdown(), f"| {step} |")
    readme = row((ROOT / "README.md").read_text(), f"| step {step}:")
    training = row((ROOT / "docs/training.md").read_text(), f"| step{step}: ")
    assert f", {accuracy} CIFAR-10 test accuracy" in label, label
    assert f"✓ {accuracy}" in table, table
    assert f"| {accuracy}" in readme, readme
    assert f"| {accuracy}" in training, training
    assert (several in label and several in table and several in training) == (seeds > 1), (seeds, label, table)


def test_the_vit_and_the_tours_verdict_give_the_same_numbers():
    accuracy, _ = by_hand("vit_cifar")
    assert f", {accuracy} CIFAR-10 test accuracy" in bundled("vit_cifar", "the ViT")[1]
    assert f"| {accuracy}" in row((ROOT / "README.md").read_text(), "| ViT (CIFAR)")
    assert f"| {accuracy}" in row((ROOT / "docs/training.md").read_text(), "| vit_cifar")
    here = alternet_verdict().here  # the tour's Fig 12a step and the claims tables
    assert f"step 6 {by_hand(STEPS[6])[0]}" in here and f"step 0 {by_hand(STEPS[0])[0]}" in here, here

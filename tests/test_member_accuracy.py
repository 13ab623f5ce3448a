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


MEMBER_STEMS = {**{f"AlterNet step {n}": stem for n, stem in STEPS.items() if n}, "ResNet (step 0)": STEPS[0]}
MEMBER_STEMS["ViT"] = "vit_cifar"
SUBSET_ACCURACY = re.compile(r"(clean )?accuracy \d+\.\d%")


def test_every_paper_figure_names_a_model_with_its_one_accuracy_and_its_own_images():
    """Each model line under a stored Paper figure carries the member's accuracy on the 10,000 test images, and
    an accuracy measured on the figure's subset says which images it is on."""
    from app.exports.paper_findings import ORDER
    from app.tabs.paper import PaperTab

    seen = 0
    for name in ORDER:
        caption = PaperTab.section(name, {}).caption
        for line in caption.splitlines():
            model = re.match(r"- \*\*(ResNet \(step 0\)|AlterNet step \d|ViT)\*\*( \(|:)", line)
            if not model:
                continue
            accuracy, seeds = by_hand(MEMBER_STEMS[model.group(1)])
            assert line.startswith(f"- **{model.group(1)}** ({accuracy} on the 10,000 CIFAR-10 test images"), line
            assert ("mean of 3 seeds" in line) == (seeds == 3), line
            if SUBSET_ACCURACY.search(line):
                assert re.search(r"\): on these [\d,]+ images, ", line), line
            seen += 1
    assert seen >= 20, seen  # every figure's models were read


def test_the_alternet_tabs_average_says_its_images_beside_each_models_accuracy():
    from app.backend.cifar_lab import CifarLab
    from app.backend.service import Service
    from app.views.alternet import accuracy_markdown

    run = CifarLab(Service.start(seed=0)).analyze_subset(buildup_sequence(PAPER_DEPTHS)[-1], 10)
    said = accuracy_markdown(run)
    assert said.startswith("**Top-1 accuracy on these 10 CIFAR-10 test images**"), said
    for stem, label in ((STEPS[6], "AlterNet, step 6"), (STEPS[0], "PreAct ResNet"), ("vit_cifar", "ViT/4")):
        line = row(said, f"- {label}")
        assert f"(the model: {by_hand(stem)[0]} on the 10,000 CIFAR-10 test images" in line, line

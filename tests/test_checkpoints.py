"""The bundled CIFAR-10 checkpoints: each rebuilds its architecture from its sidecar alone and classifies the
bundled test images as it did when it was scored, image by image; its stored bits agree with the accuracy its
sidecar recorded at the end of training."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from engine.data.cifar_subset import SUBSET
from engine.data.training_data import Split, subset_split
from engine.models import correctness
from engine.models.cifar_family import CHECKPOINTS, CIFAR10_CLASSES, checkpoint_stem
from engine.models.member_accuracy import member_accuracy
from engine.models.placement import PAPER_DEPTHS, buildup_sequence
from engine.models.registry import create_model, load_checkpoint
from engine.training.train import evaluate

SIDECARS = sorted(CHECKPOINTS.glob("*.json"))
# the first priority: build-up steps 0, 2, 4 and 6 (the paper's placement) and the CIFAR ViT
FIRST = [checkpoint_stem("alternet", {"msa": buildup_sequence(PAPER_DEPTHS)[n]}) for n in (0, 2, 4, 6)] + ["vit_cifar"]


def test_the_first_members_of_the_family_are_bundled():
    assert {path.stem for path in SIDECARS} >= set(FIRST)


def place_in_test_split(file: str) -> int:
    """The place of a subset image (`test/<class>/NNNN.jpg`) in the 10,000-image test split as ImageFolder reads it
    (classes in order, 1,000 files each), which is the order of a checkpoint's correctness bits."""
    _, name, stem = file.split("/")
    return CIFAR10_CLASSES.index(name) * 1000 + int(stem.removesuffix(".jpg"))


def subset_in_test_order() -> tuple[np.ndarray, np.ndarray]:
    """Each bundled subset image's place in the test split, and its label."""
    with np.load(SUBSET) as data:
        return np.array([place_in_test_split(str(file)) for file in data["files"]]), data["labels"]


SLICE = slice(None, None, 10)  # 100 of the 1,000 subset images, ten of each class


@pytest.mark.parametrize("sidecar", SIDECARS, ids=lambda path: path.stem)
def test_checkpoint_rebuilds_from_its_sidecar_and_classifies_each_image_as_when_it_was_scored(sidecar):
    """Rebuilt from its sidecar alone, a checkpoint gets right and wrong the same subset images as the bits stored
    when it was scored on the whole test split; the bits over the subset give the sidecar's subset accuracy."""
    meta = json.loads(sidecar.read_text())
    assert "JPEG-q75 re-encoding" in meta["data"] and meta["classes"][0] == "airplane"
    assert meta["epochs"] > 0 and meta["test_images"] == 10_000 and meta["minutes"] > 0 and meta["images_per_s"] > 0
    model, loaded = load_checkpoint(sidecar)  # the registry builds what the sidecar names, loaded strictly
    assert type(model).__name__ in ("AlterNet", "VisionTransformer") and loaded.options == meta["options"]
    places, labels = subset_in_test_order()
    stored = correctness.load(sidecar)
    assert np.array_equal(stored.labels[places], labels)  # the bits' images are the subset's
    assert abs(stored.correct[places].mean() - meta["subset_accuracy"]) <= 0.005
    split = subset_split()
    some = Split(split.images[SLICE], split.labels[SLICE])
    correct = evaluate(model, some, torch.device("cpu"), batch_size=100).correct.numpy()  # fp32
    assert (correct != stored.correct[places][SLICE]).sum() <= 1  # a near tie may fall the other way on another CPU
    assert correct.mean() > 0.25  # far above chance (10%): training took


def test_the_app_loads_the_bundled_checkpoint_as_pretrained_weights_with_its_label():
    model = create_model("alternet", "pretrained", device="cpu")  # the paper's placement at DEFAULT_WIDTH
    stem = checkpoint_stem("alternet", {})
    meta = json.loads((CHECKPOINTS / f"{stem}.json").read_text())
    accuracy = f"{member_accuracy(CHECKPOINTS / stem).short().split()[0]} CIFAR-10 test accuracy"
    assert not model.random and model.weights.startswith(f"trained here: {meta['epochs']:g} epochs, {accuracy}")


def test_the_buildup_table_names_each_steps_accuracy_and_epochs_from_its_sidecar():
    from app.views.alternet import steps_markdown

    table = steps_markdown()
    for step, placement in enumerate(buildup_sequence(PAPER_DEPTHS)):
        stem = checkpoint_stem("preact_resnet", {}) if step == 0 else checkpoint_stem("alternet", {"msa": placement})
        meta = json.loads((CHECKPOINTS / f"{stem}.json").read_text())
        row = next(line for line in table.splitlines() if line.startswith(f"| {step} |"))
        accuracy = member_accuracy(CHECKPOINTS / stem)
        seeds = f"mean of {len(accuracy.runs)} seeds, " if len(accuracy.runs) > 1 else ""
        assert f"{100 * accuracy.mean:.1f}% ({seeds}{meta['epochs']:g} ep.)" in row, row

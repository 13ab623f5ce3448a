"""scripts/train_family.py says where each member stands: finished, trained but not bundled, resumable, to do."""

import json
import sys

from engine.models.cifar_family import CHECKPOINTS
from engine.models.member_accuracy import member_accuracy
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from train_family import ORDER, family, recipe_of, standing  # noqa: E402


def test_standing_follows_the_bundled_sidecar_and_the_state_outside_the_work_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("VIT_EXPLORER_STATE", str(tmp_path))
    stem = family()["step6"][1]
    bundled = json.loads((CHECKPOINTS / f"{stem}.json").read_text())
    epochs = int(bundled["epochs"])
    accuracy = member_accuracy(CHECKPOINTS / stem)
    seeds = f", mean of {len(accuracy.runs)} seeds" if len(accuracy.runs) > 1 else ""
    meanwhile = f"(bundled meanwhile: {epochs} epochs, {100 * accuracy.mean:.1f}% CIFAR-10 test accuracy{seeds})"
    if bundled["recipe"].get("name") == recipe_of("step6", epochs):
        assert standing("step6", stem, epochs) == "finished"
    longer = epochs + 25
    assert standing("step6", stem, longer) == f"to do {meanwhile}"

    run = tmp_path / recipe_of("step6", longer) / stem
    run.parent.mkdir(parents=True)
    run.with_suffix(".json").write_text(json.dumps({"epochs": 3.5, "recipe": {"name": recipe_of("step6", longer)}}))
    run.with_suffix(".state.pt").write_bytes(b"")
    assert standing("step6", stem, longer) == f"resumable at epoch 3.5 {meanwhile}"

    done = {"epochs": longer, "recipe": {"name": recipe_of("step6", longer)}, "subset_accuracy": 0.9}
    run.with_suffix(".json").write_text(json.dumps(done))
    assert standing("step6", stem, longer) == "trained, not yet bundled"


def test_the_family_is_the_buildup_and_the_vit_in_the_issues_order():
    members = family()
    assert list(ORDER) == ["step6", "step0", "vit", "step3", "step1", "step5", "step2", "step4"]
    assert sorted(members) == sorted(ORDER)
    assert recipe_of("vit", 40) == "vit-adamw-40" and recipe_of("step3", 40) == "cnn-adamw-40"
    assert all((CHECKPOINTS / f"{stem}.json").is_file() for _, stem in members.values())

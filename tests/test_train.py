"""The trainer on a small synthetic ImageFolder, checkpoints, resuming, and strict loading."""

import json
import math

import pytest
import torch

from engine.data.training_data import crop_flip
from engine.errors import CheckpointError, EngineError
from engine.models import checkpoint as ckpt
from engine.models import cifar_family
from engine.models.registry import create_model, load_checkpoint
from engine.training.train import lr_at, main, resolve_precision
from tests.conftest import two_class_folder

TINY = ["--model", "alternet", "--width", "4", "--depths", "1,1,2,2", "--msa", "s3:2,s4:2", "--batch-size", "16"]
QUICK = ["--mixup", "0", "--cutmix", "0", "--lr", "3e-3", "--warmup-epochs", "0.5", "--device", "cpu", "--no-progress"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two classes told apart by colour and stripes: 32 training and 8 test images each."""
    return two_class_folder(tmp_path_factory.mktemp("shapes"), train=32, test=8, stripes=True)


def test_training_lowers_loss_and_checkpoint_reloads_identically(folder, tmp_path, monkeypatch):
    out = tmp_path / "alternet-s3b2-s4b2-d1_1_2_2-w4"  # the name `pretrained` looks for
    result = main([*TINY, *QUICK, "--data", str(folder), "--epochs", "3", "--out", str(out)])
    assert result.epoch_losses[-1] < result.epoch_losses[0]
    assert result.evaluation.count == 16 and result.evaluation.nll < math.log(2)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["architecture"] == "alternet" and meta["epochs"] == 3
    assert meta["options"] == {"num_classes": 2, "msa": "s3:2,s4:2", "depths": [1, 1, 2, 2], "width": 4}
    assert meta["classes"] == ["blues", "reds"] and meta["test_nll"] == pytest.approx(result.evaluation.nll)
    assert meta["recipe"]["optimizer"] == "AdamW" and meta["date"]
    loaded, loaded_meta = load_checkpoint(out)
    x = torch.randn(4, 3, 32, 32)
    trained = result.model.state_dict()
    assert all(torch.equal(v, trained[k]) for k, v in loaded.state_dict().items())
    with torch.no_grad():  # same weights; oneDNN may pick another kernel for another memory layout
        torch.testing.assert_close(loaded(x), result.model(x), rtol=0, atol=1e-5)
    assert loaded_meta.test_accuracy == result.evaluation.accuracy
    assert meta["precision"] == resolve_precision("auto", torch.device("cpu")) and meta["device"].startswith("cpu")
    assert meta["images_per_s"] > 0 and meta["minutes"] >= 0 and meta["test_images"] == 16
    assert meta["subset_accuracy"] is None  # two classes: not CIFAR-10, so no subset evaluation
    monkeypatch.setattr(cifar_family, "CHECKPOINTS", tmp_path)
    bundled = create_model("alternet", msa="s3:2,s4:2", depths=(1, 1, 2, 2), width=4, device="cpu")
    assert bundled.weights.startswith("trained here: 3 epochs") and "ImageFolder" in bundled.weights
    with torch.no_grad():
        torch.testing.assert_close(bundled.module(x), result.model(x), rtol=0, atol=1e-5)


def test_resumed_run_repeats_uninterrupted_run(folder, tmp_path):
    common = [*TINY, *QUICK, "--data", str(folder), "--limit-test", "4", "--drop-path", "0.1", "--epochs", "2"]
    straight = main([*common, "--out", str(tmp_path / "straight")])
    main([*common, "--stop-after", "1", "--out", str(tmp_path / "first")])
    assert json.loads((tmp_path / "first.json").read_text())["epochs"] == 1
    resumed = main([*common, "--resume", str(tmp_path / "first"), "--out", str(tmp_path / "resumed")])
    assert json.loads((tmp_path / "resumed.json").read_text())["epochs"] == 2
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


def test_checkpoint_that_does_not_fit_names_the_keys(tmp_path):
    torch.manual_seed(0)
    model = cifar_family.build_alternet("s4:2", depths=(1, 1, 2, 2), width=4)
    meta = ckpt.CheckpointMeta("alternet", {"msa": "s4:2", "depths": [1, 1, 2, 2], "width": 4}, ["a", "b"])
    ckpt.save(model, tmp_path / "m", meta, half=True)
    loaded, _ = load_checkpoint(tmp_path / "m.safetensors")
    for key, value in model.state_dict().items():
        expected = value.half().float() if value.is_floating_point() else value
        assert torch.equal(loaded.state_dict()[key], expected), key
    sidecar = tmp_path / "m.json"
    sidecar.write_text(sidecar.read_text().replace('"msa": "s4:2"', '"msa": "s3:2"'))
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(tmp_path / "m")
    message = str(info.value)
    assert "missing: stages.2.1.attn.proj.bias" in message and "unexpected: stages.2.1.act2.0.bias" in message
    sidecar.unlink()
    with pytest.raises(CheckpointError, match="has no sidecar"):
        load_checkpoint(tmp_path / "m")


def test_crop_flip_moves_whole_images():
    x = torch.arange(2 * 3 * 32 * 32, dtype=torch.float32).view(2, 3, 32, 32)
    out = crop_flip(x, torch.Generator().manual_seed(0))
    assert out.shape == x.shape
    for image, source in zip(out, x):
        center = image[:, 4:28, 4:28]  # inside the crop's padding margin, always from the image
        assert torch.isin(center, source).all()


def test_lr_schedule_warms_up_then_decays_to_zero():
    assert lr_at(0, 100, 10, 1.0) == pytest.approx(0.1)
    assert lr_at(9, 100, 10, 1.0) == pytest.approx(1.0)
    assert lr_at(55, 100, 10, 1.0) == pytest.approx(0.5)
    assert lr_at(100, 100, 10, 1.0) == pytest.approx(0.0)
    # with a time budget the cosine follows elapsed / budget, whatever the step count
    assert lr_at(500, 100, 10, 1.0, progress=0.5) == pytest.approx(0.5)
    assert lr_at(5, 100, 10, 1.0, progress=0.9) == pytest.approx(0.6)  # still warming up


@pytest.mark.slow  # over 3 s on the 2-core machine
def test_a_time_budget_ends_the_run_on_time_mid_epoch(folder, tmp_path):
    out = tmp_path / "budget"
    result = main([*TINY, *QUICK, "--data", str(folder), "--budget", "0.03", "--out", str(out)])  # 1.8 s
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["recipe"]["budget"] == 0.03 and meta["minutes"] == pytest.approx(0.03, abs=0.05)
    assert meta["epochs"] == pytest.approx(len(result.epoch_losses), abs=1) and meta["epochs"] > 0
    assert meta["epochs"] * 4 == pytest.approx(round(meta["epochs"] * 4))  # whole steps of 16 of 64 images


def test_bf16_training_on_the_cpu_runs_and_is_recorded(folder, tmp_path):
    out = tmp_path / "bf16"
    main(
        [
            *TINY,
            *QUICK,
            "--data",
            str(folder),
            "--epochs",
            "1",
            "--limit-train",
            "32",
            "--precision",
            "bf16",
            "--out",
            str(out),
        ]
    )
    assert json.loads(out.with_suffix(".json").read_text())["precision"] == "bf16"
    with pytest.raises(EngineError, match="precision must be auto, bf16 or fp32"):
        resolve_precision("fp8", torch.device("cpu"))


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_a_run_resumed_mid_epoch_gives_the_weights_of_an_uninterrupted_one(folder, tmp_path, optimizer):
    common = [
        *TINY,
        *QUICK,
        "--data",
        str(folder),
        "--limit-test",
        "4",
        "--drop-path",
        "0.1",
        "--epochs",
        "2",
        "--optimizer",
        optimizer,
        "--ema",
        "0.9",
        "--precision",
        "fp32",
        "--recipe",
        "test-recipe",
    ]
    straight = main([*common, "--out", str(tmp_path / "straight")])
    main(
        [*common, "--stop-after-steps", "3", "--out", str(tmp_path / "part")]
    )  # 4 steps an epoch: stops inside epoch 1
    assert json.loads((tmp_path / "part.json").read_text())["epochs"] == 0.75
    resumed = main([*common, "--resume", str(tmp_path / "part"), "--out", str(tmp_path / "part")])
    meta = json.loads((tmp_path / "part.json").read_text())
    assert meta["epochs"] == 2 and meta["recipe"]["name"] == "test-recipe" and meta["recipe"]["ema"] == 0.9
    assert meta["test_accuracy_flip"] is not None and meta["raw_test_accuracy"] is not None
    for key, value in straight.model.state_dict().items():  # the saved (moving-average) weights
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6, msg=key)

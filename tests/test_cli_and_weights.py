"""The CLI's JSON and errors, weights loading (offline pretrained, checkpoints) and lesions."""

import json
import time

import pytest
import torch
from safetensors.torch import save_file

import engine
from engine.analyses.lesion import Lesion
from tests.helpers.cli import run_cli
from tests.helpers.lesions import check_lesion


def test_cli_writes_the_documented_json(photo_path, tmp_path):
    out = tmp_path / "out.json"
    done = run_cli(
        "analyze",
        str(photo_path),
        "--model",
        "resnet50",
        "--model",
        "vit_tiny_patch16_224",
        "--weights",
        "random",
        "--seed",
        "7",
        "--device",
        "cpu",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["device"] == "cpu"
    resnet, vit = data["models"]
    assert resnet["name"] == "resnet50" and resnet["weights"] == "random (seed 7)" and resnet["random_weights"]
    assert len(resnet["predictions"][0]) == 5 and {"label", "index", "probability"} <= set(resnet["predictions"][0][0])
    assert [b["index"] for b in resnet["blocks"]] == list(range(17))
    block = vit["blocks"][1]
    assert set(block) == {"index", "name", "kind", "shape", "normalized_depth", "variance", "fourier", "high_freq"}
    assert block["kind"] == "msa" and block["high_freq"] == block["fourier"][-1] and block["fourier"][0] == 0
    assert "attention" not in resnet
    assert len(vit["attention"]["layers"]) == 12 and len(vit["attention"]["layers"][0]["mean_distance"]) == 3
    assert "ResNet-50" in done.stdout and "layer4.2" in done.stdout
    assert "\r" not in done.stderr and "\x1b[" not in done.stderr  # no progress-bar codes into a file or pipe


def test_the_cli_defaults_to_trained_weights_where_it_has_them_as_the_app_does(photo_path, tmp_path):
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf")}
    out = tmp_path / "out.json"
    done = run_cli(
        "analyze",
        str(photo_path),
        "--model",
        "vit_cifar",
        "--model",
        "vit_tiny_patch16_224",
        "--device",
        "cpu",
        "--json",
        str(out),
        env=env,
    )  # offline, no --weights
    assert done.returncode == 0, done.stderr
    cifar, tiny = json.loads(out.read_text())["models"]
    assert cifar["weights"].startswith("trained here") and not cifar["random_weights"]
    assert tiny["random_weights"] and "vit_tiny_patch16_224: no trained weights here" in done.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["--model", "nonesuch"], "unknown model 'nonesuch'"),
        (["--model", "vit_smal_patch16_224"], "(did you mean vit_small_patch16_224"),
        (["--model", "resnet50", "--weights", "missing.safetensors"], "does not exist"),
    ],
)
def test_cli_errors_are_one_line_with_status_2(photo_path, args, words):
    done = run_cli("analyze", str(photo_path), *args)
    assert done.returncode == 2 and words in done.stderr and done.stderr.count("\n") == 1


def test_cli_rejects_a_non_image(tmp_path):
    bad = tmp_path / "notes.jpg"
    bad.write_text("not a picture")
    done = run_cli("analyze", str(bad), "--model", "resnet50", "--weights", "random")
    assert done.returncode == 2 and "notes.jpg: not an image" in done.stderr


def test_offline_pretrained_fails_fast_naming_model_and_fix(photo_path, tmp_path):
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf")}
    started = time.monotonic()
    done = run_cli("analyze", str(photo_path), "--model", "vit_small_patch16_224", "--weights", "pretrained", env=env)
    assert done.returncode == 2
    assert "vit_small_patch16_224" in done.stderr and "timm/vit_small_patch16_224" in done.stderr
    assert "random" in done.stderr and time.monotonic() - started < 60


def test_checkpoint_round_trip_and_mismatch(photos, tmp_path):
    original = engine.create_model("vit_tiny_patch16_224", weights="random", seed=5, device="cpu")
    path = tmp_path / "vit.safetensors"
    save_file({k: v.contiguous() for k, v in original.module.state_dict().items()}, str(path))
    loaded = engine.create_model("vit_tiny_patch16_224", weights=str(path), seed=0, device="cpu")
    x = engine.Analyzer(original).inputs(photos[:1])
    with torch.inference_mode():
        assert torch.equal(original.module(x), loaded.module(x))
    assert loaded.weights == str(path) and not loaded.random  # a bare state dict: labelled by its path
    with pytest.raises(engine.CheckpointError, match="missing: .*head.weight|wrong shape"):
        engine.create_model("vit_small_patch16_224", weights=str(path), device="cpu")


def test_pickled_objects_are_refused(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"weights": torch.zeros(1), "payload": object()}, path)
    with pytest.raises(engine.CheckpointError, match="could not be read"):
        engine.create_model("resnet50", weights=str(path), device="cpu")


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.parametrize("name, unit", [("resnet50", 6), ("vit_tiny_patch16_224", 9), ("vit_tiny_patch16_224", 10)])
def test_lesion_changes_output_and_removal_restores_it_bit_for_bit(photos, name, unit):
    check_lesion(engine.create_model(name, weights="random", seed=2, device="cpu"), unit, photos)


def test_subsampling_blocks_cannot_be_lesioned():
    model = engine.create_model("resnet50", weights="random", device="cpu")
    with pytest.raises(engine.EngineError, match="layer2.0.*cannot be switched off"):
        Lesion(model, [4])


def test_pretrained_weights_load_from_the_hub_cache_offline(photo_path, tmp_path):
    """The real pretrained path, fed from a hub cache laid out as huggingface_hub writes it."""
    cache = tmp_path / "hub"
    snapshot = cache / "models--timm--pit_ti_224.in1k" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (cache / "models--timm--pit_ti_224.in1k" / "refs").mkdir()
    (cache / "models--timm--pit_ti_224.in1k" / "refs" / "main").write_text("0123abc")
    weights = engine.create_model("pit_ti_224", weights="random", seed=11, device="cpu").module.state_dict()
    save_file({k: v.contiguous() for k, v in weights.items()}, str(snapshot / "model.safetensors"))
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_CACHE": str(cache)}
    outputs = []
    for weights_arg in ("pretrained", str(snapshot / "model.safetensors")):
        out = tmp_path / f"{len(outputs)}.json"
        done = run_cli(
            "analyze",
            str(photo_path),
            "--model",
            "pit_ti_224",
            "--weights",
            weights_arg,
            "--device",
            "cpu",
            "--json",
            str(out),
            env=env,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(out.read_text())["models"][0])
    assert outputs[0]["weights"] == "pretrained (timm, ImageNet-1k)" and not outputs[0]["random_weights"]
    assert outputs[0]["predictions"] == outputs[1]["predictions"]

"""The real app server, driven through gradio_client: /analyze JSON, readable errors, live re-draws."""

from __future__ import annotations

import math
import re
import struct
import zlib
from pathlib import Path

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from app.views import alt_text

MODELS = ["resnet50", "vit_tiny_patch16_224"]


def huge_png(path: Path, width: int = 10_000, height: int = 10_000) -> Path:
    """A PNG whose header claims width x height pixels (100 megapixels), a few bytes long."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)
    return path


def analyze(client: Client, image: Path, models=MODELS) -> dict:
    return client.predict(handle_file(str(image)), models, "random", api_name="/analyze")


def test_analyze_returns_the_engine_json(client: Client, sample_photo: Path):
    out = analyze(client, sample_photo)
    assert out["device"] in ("cpu", "cuda")
    resnet, vit = out["models"]
    assert [resnet["name"], vit["name"]] == MODELS
    assert [len(resnet["blocks"]), len(vit["blocks"])] == [17, 25]
    assert [b["index"] for b in resnet["blocks"] if b["kind"] == "pool"] == [4, 8, 14]
    assert [b["kind"] for b in vit["blocks"]] == ["embed"] + ["msa", "mlp"] * 12
    for model in (resnet, vit):
        assert model["random_weights"] and model["weights"].startswith("random")
        assert len(model["predictions"][0]) == 5
        for block in model["blocks"]:
            values = [block["variance"], block["high_freq"], *block["fourier"]]
            assert all(math.isfinite(v) for v in values), block["name"]
            assert block["fourier"][0] == 0 and block["high_freq"] == block["fourier"][-1]
            assert 0 <= block["normalized_depth"] <= 1
    assert len(vit["attention"]["layers"]) == 12 and "attention" not in resnet


def test_bad_inputs_give_readable_errors_and_the_server_keeps_serving(
    client: Client, sample_photo: Path, tmp_path: Path
):
    not_image = tmp_path / "notes.jpg"
    not_image.write_text("this is not a photo")
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(sample_photo.read_bytes()[:5000])
    cases = {not_image: "not an image", truncated: "truncated", huge_png(tmp_path / "huge.png"): "megapixel"}
    for path, message in cases.items():
        with pytest.raises(AppError, match=message):
            analyze(client, path)
    with pytest.raises(AppError, match="unknown model"):
        analyze(client, sample_photo, ["no_such_model"])
    with pytest.raises(AppError, match="notes.jpg: not an image") as refused:  # the page's own photo input
        client.predict(handle_file(str(not_image)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    assert "/tmp" not in str(refused.value) and "preprocess" not in str(refused.value)
    assert len(analyze(client, sample_photo, ["resnet50"])["models"]) == 1


def test_offline_pretrained_weights_give_a_readable_error(client: Client, sample_photo: Path):
    with pytest.raises(AppError, match="pretrained weights"):
        client.predict(handle_file(str(sample_photo)), ["resnet50"], "pretrained", api_name="/analyze")


def test_view_controls_redraw_without_a_forward_pass(client: Client, sample_photo: Path):
    client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    passes = client.predict(api_name="/forward_passes")
    captions = set()
    for layer, head, rollout in [(1, "mean", False), (6, "2", False), (12, "3", False), (12, "mean", True)]:
        image, caption = client.predict(layer=layer, head=head, rollout=rollout, colormap="viridis", api_name="/view_1")
        assert Path(image["value"]).stat().st_size > 0 and alt_text.plain(caption.splitlines()[0]) in image["alt_text"]
        captions.add(caption)
    image, caption = client.predict(colormap="jet", opacity=0.3, layer=1, api_name="/view_0")
    assert "Grad-CAM" in caption and Path(image["value"]).stat().st_size > 0  # a map goes with its text alternative
    assert len(captions) == 4 and any("rollout" in c for c in captions) and any("head 2/3" in c for c in captions)
    assert client.predict(api_name="/forward_passes") == passes


def test_weights_over_the_network_are_a_mode_or_a_bundled_checkpoint_never_a_path(client: Client, sample_photo: Path):
    photo = handle_file(str(sample_photo))
    refusals = []
    for weights in ("/etc/passwd", "bogus", "assets/checkpoints/vit_cifar.safetensors", "../../etc/hostname"):
        with pytest.raises(AppError) as info:
            client.predict(photo, ["vit_cifar"], weights, api_name="/analyze")
        # the answer echoes what was sent (an absolute path cut to its file name): all else is the same
        refusals.append(re.sub(r"not '[^']*'$", "not W", str(info.value)))
    assert len(set(refusals)) == 1 and "bundled checkpoint" in refusals[0]  # the same answer: nothing is looked up
    assert "exist" not in refusals[0] and "could not be read" not in refusals[0]
    model = client.predict(photo, ["vit_cifar"], "vit_cifar", api_name="/analyze")["models"][0]
    assert model["weights"].startswith("trained here:") and "/" not in model["weights"]
    assert not model["random_weights"]
    auto = client.predict(photo, ["vit_cifar", "resnet50"], "", api_name="/analyze")["models"]
    assert auto[0]["weights"] == model["weights"] and auto[1]["random_weights"]  # offline: bundled, else random


def test_random_top5_reads_each_probability_and_a_new_analysis_clears_the_old_export(
    client: Client, sample_photo: Path
):
    photo = handle_file(str(sample_photo))
    out = client.predict(photo, ["vit_tiny_patch16_224"], "random", "inferno", 0.6, True, api_name="/run")
    (top5,) = [
        o["value"]
        for o in out
        if isinstance(o, dict) and isinstance(o.get("value"), dict) and "confidences" in o["value"]
    ]
    labels = [c["label"] for c in top5["confidences"]]
    assert len(labels) == 5 and all(re.search(r" \(\d+\.\d\d%\)$", label) for label in labels)  # not five times "0%"
    assert client.predict(str(sample_photo), "inferno", api_name="/export_pack")  # a pack of this analysis on offer ...
    assert (
        client.predict(photo, ["vit_tiny_patch16_224"], "random", "inferno", 0.6, True, api_name="/run")[-1]["value"]
        is None
    )


def test_a_columns_check_comes_under_its_map_without_redrawing_it_and_its_stop_keeps_nothing(
    client: Client, sample_photo: Path
):
    """The ViT's attention checked: its line under the map, kept on the run. Then a first check of the ResNet's
    photo (88 images through ResNet-50 at 224 px: its map, then three random orders) stopped once it has begun: it
    ends before its last batch and leaves nothing; asked again, it is made whole (a Stop pressed before a check began
    does not stop it)."""
    import time
    from concurrent.futures import CancelledError

    client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    controls = {"steps": 8, "layer": 12, "head": "mean", "rollout": False, "method": "Attention", "target": None}
    caption, curves = client.predict(**controls, api_name="/check_1")  # (the button and the curves' box: no values)
    assert "**Can this map be trusted?** On this photo, this map " in caption
    assert "random order" in caption and ": removing the top 20% of this map's pixels takes" in caption
    assert "with random weights, this score tells nothing about a trained model" in caption and curves
    passes = client.predict(api_name="/forward_passes")
    assert client.predict(**controls, api_name="/check_1")[0] == caption  # checked once: kept on the run
    assert client.predict(api_name="/forward_passes") == passes
    image, other = client.predict(layer=3, head="mean", rollout=False, colormap="inferno", api_name="/view_1")
    assert "Can this map be trusted?" not in other  # another map: no line of the checked one's

    resnet = {**controls, "layer": 1, "method": "Grad-CAM"}
    before = client.predict(api_name="/forward_passes")
    job = client.submit(**resnet, api_name="/check_0")
    while client.predict(api_name="/forward_passes") == before:  # its first batch has run
        time.sleep(0.1)
    client.predict(api_name="/check_stop_0")
    with pytest.raises((AppError, CancelledError), match="stopped|^$"):
        job.result()
    stopped = client.predict(api_name="/forward_passes") - before
    assert stopped < 8, stopped  # 8 batches of 16 (2 curves of 11 points, and 3 random orders' 6 more)
    caption, curves = client.predict(**resnet, api_name="/check_0")
    assert "**Can this map be trusted?** On this photo, this map " in caption and curves

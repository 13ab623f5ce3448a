"""The per-request memory budget, over HTTP against the real server started with a small budget
(VIT_EXPLORER_REQUEST_MB=170): a map too large even one image at a time is refused with what would fit, a map
whose internal batch was cut to fit equals the unbatched map, and the estimate bounds a measured peak. Plus the
clean refusals and files of issue 36: no server path in a message, out-of-range classes and cut method names,
a pixel bomb as photo, and figure exports left only in Gradio's cache."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

import engine
from app.backend import service as service_module
from app.backend.service import Service
from engine.analyses.attributions import IntegratedGradients
from engine.analyses.budget import SCRATCH
from tests.conftest import BUDGET_MB, ROOT
from tests.helpers.files import header_only_png
from tests.helpers.gradio_http import gradio_client


@pytest.fixture(scope="module")
def client(budget_server) -> Client:
    return gradio_client(budget_server[0].url)


def refusal(client: Client, *args, api_name: str) -> str:
    """The message of a call that must be refused."""
    with pytest.raises(AppError) as refused:
        client.predict(*args, api_name=api_name)
    return str(refused.value)


def test_too_large_map_is_refused_with_what_fits(client: Client, sample_photo: Path) -> None:
    photo = handle_file(str(sample_photo))
    started = time.monotonic()
    message = refusal(
        client, photo, ["vit_tiny_patch16_224"], "random", "Integrated Gradients", None, api_name="/analyze"
    )
    assert time.monotonic() - started < 120
    assert "Integrated Gradients on a 6 M-parameter model at 224 px needs ~" in message
    assert f"this server allows {BUDGET_MB} MB per request: try Occlusion" in message
    assert "\n" not in message and "Traceback" not in message
    out = client.predict(photo, ["vit_tiny_patch16_224"], "random", "Occlusion", None, api_name="/analyze")
    assert np.asarray(out["models"][0]["maps"][0]["map"]).shape == (224, 224)  # what it named does fit


def test_batch_cut_to_the_budget_gives_the_unbatched_map(budget_server, client: Client, sample_photo: Path) -> None:
    server, _ = budget_server
    out = client.predict(
        handle_file(str(sample_photo)), ["vit_cifar"], "random", "Integrated Gradients", 3, api_name="/analyze"
    )
    served = np.asarray(out["models"][0]["maps"][0]["map"])
    model = engine.create_model("vit_cifar", "random", seed=Service().seed)
    default = IntegratedGradients(model)
    assert f"Integrated Gradients on vit_cifar: internal batch 2 of {default.batch_size}" in server.log.read_text()
    whole = IntegratedGradients(model, steps=default.steps, batch_size=default.steps).attribute(
        engine.load_image(sample_photo), 3
    )  # every step in one batch
    assert served.shape == whole.map.shape
    np.testing.assert_allclose(served, whole.map, atol=2e-3)


MEASURE = """
import json, re, sys, torch, engine
from engine.analyses.attributions import METHODS
from engine.analyses.budget import bytes_at, footprint
name, method, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
model = engine.create_model(name, "random")
analysis = METHODS[method](model, batch_size=batch)
need = footprint(model)
image = engine.load_image(sys.argv[4])
def status(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
start = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
analysis.attribute(image, 3)
print(json.dumps({"measured": status("VmHWM") - start, "estimate": bytes_at(analysis, need, batch)}))
"""


@pytest.mark.parametrize(
    "name, method, batch", [("vit_tiny_patch16_224", "Integrated Gradients", 8), ("resnet18", "Occlusion", 32)]
)
def test_estimate_bounds_the_measured_peak(name: str, method: str, batch: int, sample_photo: Path) -> None:
    """The estimate against the process's own peak resident memory (Linux's VmHWM, reset before the map), in a
    fresh process: never under it, at most three times it."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, name, method, str(batch), str(sample_photo)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    numbers = json.loads(done.stdout.strip().splitlines()[-1])
    assert numbers["measured"] <= numbers["estimate"] <= 3 * numbers["measured"], numbers


PLAIN = """
import json, re, sys
from app.backend.service import Service
from engine.analyses.budget import footprint, plain_bytes
service, name = Service(), sys.argv[1]
loaded = service.load(name, service.weights_for(name, "random"))
need = footprint(loaded)
def status(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
start = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
service.analyze(sys.argv[2], [name], "random")
print(json.dumps({"measured": status("VmHWM") - start, "estimate": plain_bytes(loaded, need)}))
"""


@pytest.mark.parametrize("name", ["resnet18", "vit_tiny_patch16_224"])  # Grad-CAM's backward pass; attention
def test_the_plain_analysis_estimate_bounds_its_measured_peak(name: str, sample_photo: Path) -> None:
    """The plain analysis (every block, the logit lens, Grad-CAM where attention is not recorded) against the
    process's own peak in a fresh process: never over its estimate, which the budget is checked against."""
    done = subprocess.run(
        [sys.executable, "-c", PLAIN, name, str(sample_photo)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    numbers = json.loads(done.stdout.strip().splitlines()[-1])
    assert numbers["measured"] <= numbers["estimate"] <= 3 * numbers["measured"] + SCRATCH, numbers


def test_a_plain_analysis_over_the_budget_is_refused_before_it_runs(sample_photo: Path, monkeypatch) -> None:
    # resnet18's Grad-CAM needs ~181 MB, ViT-Ti's pass ~162: as VIT_EXPLORER_REQUEST_MB=170 would set it at start
    monkeypatch.setattr(service_module, "SETTINGS", replace(service_module.SETTINGS, request_mb=170))
    service = Service()
    passes = service.forward_passes
    with pytest.raises(ValueError, match=r"resnet18: analyzing a 12 M-parameter model at 224 px needs ~181 MB \(its"):
        service.analyze(sample_photo, ["resnet18"], "random")
    assert service.forward_passes == passes  # nothing ran
    assert service.analyze(sample_photo, ["vit_tiny_patch16_224"], "random")[0].result.blocks


def test_messages_name_no_server_path_and_cut_user_strings(client: Client, sample_photo: Path, tmp_path: Path) -> None:
    import zipfile

    empty = tmp_path / "notes.zip"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("readme.txt", "no images here")
    message = refusal(client, handle_file(str(empty)), ["vit_cifar"], "", "random", api_name="/dataset_curves")
    assert "the ZIP holds no images" in message
    assert "/tmp" not in message and str(tmp_path) not in message and "gradio" not in message

    photo = handle_file(str(sample_photo))
    message = refusal(client, photo, ["vit_cifar"], "random", "x" * 10_000, None, api_name="/analyze")
    assert "no attribution method 'xxx" in message and "x" * 60 not in message

    message = refusal(client, photo, ["vit_cifar"], "random", "Saliency", 10**30, api_name="/analyze")
    assert "is out of range" in message and "1000000000000000000000000000000" not in message
    assert "Traceback" not in message and "TypeError" not in message

    bomb = tmp_path / "huge.png"
    bomb.write_bytes(header_only_png(20_000, 10_000))  # 200 MP: over Pillow's 179 MP bomb limit
    message = refusal(client, handle_file(str(bomb)), ["vit_cifar"], "random", "inferno", 0.6, True, api_name="/run")
    assert "huge.png: not an image" in message and "/" not in message.split("huge.png")[0][-5:]
    assert "gradio" not in message and "DecompressionBomb" not in message


def test_figure_exports_stay_in_gradio_cache(budget_server, client: Client, sample_photo: Path) -> None:
    _, root = budget_server
    others = root / "tmp"
    before = {p for p in others.rglob("*") if p.is_file()}
    client.predict(handle_file(str(sample_photo)), ["vit_cifar"], "random", "inferno", 0.6, True, api_name="/run")
    for name in ("fig9-variance", "fig8-high-frequency", "fig9-variance"):
        path = Path(client.predict(name, "svg", api_name="/export_figure"))
        assert path.read_text().startswith("<svg") or "<svg" in path.read_text()[:500]
    left = {p for p in others.rglob("*") if p.is_file()} - before
    assert not [p for p in left if p.suffix in (".svg", ".png", ".zip")], left
    cached = list((root / "gradio-cache").rglob("*.svg"))
    assert len(cached) >= 2  # where the exports went: Gradio hands out and deletes these


def test_a_map_running_far_past_its_estimate_is_stopped_saying_why(sample_photo: Path, monkeypatch) -> None:
    """The time limit is checked up front from an estimate; a map whose computing runs OVERTIME past the limit anyway
    (a machine loaded after the estimate) is stopped at its next batch, and nothing half-made is kept."""
    monkeypatch.setattr(service_module, "OVERTIME", 0.0)  # any computing is past the limit
    service = Service()
    run = service.analyze(sample_photo, ["vit_cifar"], "random")[0]
    with pytest.raises(ValueError, match=r"Occlusion on .* was stopped after .* min of computing \(\d+ of \d+ passes"):
        service.attribution(run, "Occlusion", 0)
    assert not run.maps

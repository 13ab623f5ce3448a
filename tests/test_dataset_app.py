"""Dataset curves in the app: a ZIP of images through the real Gradio server (API and browser) and the
real Streamlit server, with limits that give readable errors while the server keeps serving."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from PIL import Image

import engine
from app.backend.service import MAX_DATASET_IMAGES, OFFLINE_MODELS
from engine.analyses.dataset_curves import DatasetCurves
from tests.helpers.files import write_photos_zip
from tests.helpers.pages import trace_count

MODELS = ["preact_resnet", "vit_cifar"]  # bundled checkpoints: the app's defaults offline
TIMEOUT_MS = 180_000


def png(seed: int, size: tuple[int, int]) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (*size, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def photos_zip(tmp_path_factory) -> Path:
    return write_photos_zip(tmp_path_factory.mktemp("zips") / "photos.zip")


def test_a_zip_gives_dataset_curves_equal_to_the_engines(client: Client, photos_zip: Path):
    status, high_frequency, variance, *_ = client.predict(
        handle_file(str(photos_zip)), MODELS, "", "auto", api_name="/dataset_curves"
    )
    assert "5 images. 1 unreadable skipped" in status
    for model, trace_name in zip(MODELS, ("PreAct", "ViT")):
        loaded = engine.create_model(model, "pretrained", device="cpu")
        expected = DatasetCurves(loaded, batch_size=16).attribute(photos_zip).model.blocks
        np.testing.assert_allclose(_trace_y(variance, trace_name), [b.variance for b in expected], rtol=1e-5)
        np.testing.assert_allclose(
            _trace_y(high_frequency, trace_name), [b.high_freq for b in expected], rtol=1e-5, atol=1e-6
        )
    exported = client.predict(api_name="/export_dataset")  # the session's curves, named by their ZIP
    with zipfile.ZipFile(exported) as pack:
        svgs = [pack.read(name).decode() for name in pack.namelist() if name.endswith(".svg")]
    assert len(svgs) == 4 and all("mean over photos.zip" in svg for svg in svgs)  # Fig 2a twice, Figs 8 and 9


def _trace_y(plot: dict, name_part: str) -> list[float]:
    """The y values of the line trace of a model in a figure the API returned (plotly JSON)."""
    figure = json.loads(plot["plot"]) if isinstance(plot.get("plot"), str) else plot["plot"]
    lines = [t for t in figure["data"] if name_part in (t.get("name") or "") and t.get("mode", "").startswith("lines")]
    assert lines, [t.get("name") for t in figure["data"]]
    return lines[0]["y"]


def test_bad_zips_get_readable_errors_and_the_server_keeps_serving(client: Client, photos_zip: Path, tmp_path: Path):
    not_zip = tmp_path / "photos.zip"
    not_zip.write_bytes(png(0, (8, 8)))
    with pytest.raises(AppError, match="the upload is not a ZIP file"):
        client.predict(handle_file(str(not_zip)), MODELS[:1], "", "auto", api_name="/dataset_curves")
    too_many = tmp_path / "many.zip"
    tiny = png(0, (4, 4))
    with zipfile.ZipFile(too_many, "w") as archive:
        for i in range(MAX_DATASET_IMAGES + 1):
            archive.writestr(f"{i}.png", tiny)
    with pytest.raises(AppError, match=f"holds {MAX_DATASET_IMAGES + 1} images; the app measures at most"):
        client.predict(handle_file(str(too_many)), MODELS[:1], "", "auto", api_name="/dataset_curves")
    with pytest.raises(AppError, match="not in the list of choices"):  # a path is never read
        client.predict(handle_file(str(photos_zip)), MODELS[:1], "", "/etc/passwd", api_name="/dataset_curves")
    status, *_ = client.predict(
        handle_file(str(photos_zip)), MODELS[:1], "convnext_atto", "auto", api_name="/dataset_curves"
    )  # a typed timm name joins the checked models
    assert "PreAct ResNet (CIFAR, 1.8 M params) · 5 images" in status and "convnext_atto · 5 images" in status


def test_the_dataset_panel_in_the_browser(page, server_url: str, photos_zip: Path, output_dir: Path):
    page.goto(server_url)
    page.get_by_role("button", name="Analyze").wait_for()
    for name in ("resnet50", "vit_small_patch16_224", *OFFLINE_MODELS):  # the defaults online and offline
        page.locator(f"input[name={name}]").uncheck()
    for name in MODELS:
        page.locator(f"input[name={name}]").check()
    page.get_by_text("Dataset curves: Figs 2a, 8 and 9 over a ZIP of images").click()
    page.locator("#dataset-zip input[type=file]").set_input_files(str(photos_zip))
    page.locator("#dataset-zip a[download='photos.zip']").wait_for(timeout=TIMEOUT_MS)  # uploaded: offered back
    page.locator("#dataset-run").click()
    page.locator("#dataset-variance .js-plotly-plot").wait_for(timeout=TIMEOUT_MS)
    assert trace_count(page, "dataset-variance") >= 2 and trace_count(page, "dataset-high-frequency") >= 2
    assert trace_count(page, "dataset-spectrum-0") >= 10 and trace_count(page, "dataset-spectrum-1") >= 10
    assert "5 images. 1 unreadable skipped" in page.locator("#dataset-status").inner_text()
    page.locator("#dataset").screenshot(path=str(output_dir / "dataset-curves.png"))

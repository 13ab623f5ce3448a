"""Exports for teaching: the pack from the command line, figure and pack downloads from both front ends."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from gradio_client import handle_file
from PIL import Image
from pypdf import PdfReader

from app.exports import export
from app.views.attention import ATTENTION, DISPLAY_SIZE, UNITS
from app.views.colour_bar import STRIP, Scale, with_colour_bar
from tests.conftest import ROOT
from tests.helpers.gradio_http import gradio_client

pytestmark = pytest.mark.browser  # every export is drawn by Chromium (kaleido)
MODELS = ["resnet50", "vit_tiny_patch16_224"]
FIGURE_SIZE = (export.WIDTH * export.SCALE, export.HEIGHT * export.SCALE)
PRINTED = ("fig2a-resnet50", "fig2a-vit_tiny_patch16_224", "fig8-high-frequency", "fig9-variance")


@pytest.fixture(scope="module")
def pack(tmp_path_factory, sample_photo: Path) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("pack") / "pack.zip"
    coffee = ROOT / "assets" / "samples" / "coffee.jpg"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.exports.export",
            str(sample_photo),
            str(coffee),
            *[a for m in MODELS for a in ("--model", m)],
            "--weights",
            "random",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HF_ENDPOINT": "http://127.0.0.1:9", "HOME": str(out.parent)},
    )
    assert done.returncode == 0, done.stderr
    assert "kopts" not in done.stderr and "Warning" not in done.stderr, done.stderr  # no warning per export
    return zipfile.ZipFile(out)


def test_the_handout_refers_only_to_files_inside_the_pack(pack: zipfile.ZipFile):
    names = set(pack.namelist())
    html = pack.read("handout.html").decode()
    links = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", html)
    assert links and all(link in names for link in links), set(links) - names
    assert "Park &amp; Kim" in html and "ICLR 2022" in html and "Fig 9" in html
    expected = {
        f"figures/{stem}.{fmt}"
        for stem in ("fig2a-resnet50", "fig2a-vit_tiny_patch16_224", "fig8-high-frequency", "fig9-variance")
        for fmt in ("png", "svg")
    }
    expected |= {
        f"{kind}/{image}-{model}.png"
        for kind in ("inputs", "maps")
        for image in ("cat.jpg", "coffee.jpg")
        for model in MODELS
    }
    expected |= {f"handout/{stem}.png" for stem in PRINTED}  # the handout's figures, drawn for paper
    assert expected | {"analysis.json", "blocks.csv", "handout.html", "handout.pdf"} == names


def test_the_handout_pdf_has_a_page_of_maps_per_photo_then_the_curves(pack: zipfile.ZipFile):
    pages = PdfReader(io.BytesIO(pack.read("handout.pdf"))).pages
    assert len(pages) == export.handout_pages(2) == 4  # cat.jpg's maps, coffee.jpg's, two of curves
    assert "coffee.jpg" in pages[1].extract_text() and "Fig 9" in pages[3].extract_text()  # no ligature: "coffee"


UI_WORDS = re.compile(r"slider|click|legend entry|drop-?down|button|below each|pick (the|another)|tab\b", re.I)


def test_the_handout_gives_each_panel_its_top5_and_random_warning_and_no_ui_instructions(pack: zipfile.ZipFile):
    html = pack.read("handout.html").decode()
    analysis = json.loads(pack.read("analysis.json"))
    assert not UI_WORDS.search(re.sub(r"<[^>]+>", " ", html)), UI_WORDS.search(re.sub(r"<[^>]+>", " ", html))
    figures = re.findall(r"<figure>.*?</figure>", html, re.S)
    assert len(figures) == 4  # two photos, two models
    for figure in figures:
        assert "Random weights" in figure  # every panel here has random weights
        assert len(re.findall(r"<li>[^<]+: \d+\.\d\d%</li>", figure)) == 5
    first = analysis["models"][1]["predictions"][0][0]  # the ViT's on the first photo
    assert f"{first['label']}: {first['probability']:.2%}" in html
    assert "Here</strong>, the variance" in html and "Mean attention distance here" in html


MAP_UNITS = {"resnet50": UNITS["Grad-CAM"], "vit_tiny_patch16_224": UNITS[ATTENTION]}


def printed_strip(unit: str) -> int:
    """The height of the colour bar's strip under a map of the pack, whose numbers are sized for paper."""
    bar = with_colour_bar(
        np.zeros((1, DISPLAY_SIZE, 3), np.uint8), Scale(0, 1, unit), np.zeros((256, 3), np.uint8), export.BAR_PX
    )
    assert bar.shape[0] - 1 > STRIP  # taller than on screen
    return bar.shape[0] - 1


def test_every_png_decodes_at_its_size_and_svgs_are_svg(pack: zipfile.ZipFile):
    for name in pack.namelist():
        if name.endswith(".png"):
            image = Image.open(io.BytesIO(pack.read(name)))
            image.load()
            folder, stem = name.split("/")[0], name.rsplit("/", 1)[-1].removesuffix(".png")
            if folder == "maps":  # the map, and its colour bar in type for paper: its unit on one line or two
                model = next(model for model in MODELS if stem.endswith(model))
                size = (DISPLAY_SIZE, DISPLAY_SIZE + printed_strip(MAP_UNITS[model]))
            elif folder == "handout":
                width, height = export.SPECTRUM_PX if stem.startswith("fig2a") else export.FIGURE_PX
                size = (width * export.PRINT_SCALE, height * export.PRINT_SCALE)
            else:
                size = {"figures": FIGURE_SIZE, "inputs": (224, 224)}[folder]
            assert image.size == size, name
        elif name.endswith(".svg"):
            assert b"<svg" in pack.read(name)[:400], name


def test_the_csv_agrees_with_the_json(pack: zipfile.ZipFile):
    analysis = json.loads(pack.read("analysis.json"))
    rows = list(csv.DictReader(io.StringIO(pack.read("blocks.csv").decode())))
    blocks = [(m, b) for m in analysis["models"] for b in m["blocks"]]
    assert len(rows) == len(blocks) and all(m["images"] == 2 for m in analysis["models"])
    for row, (model, block) in zip(rows, blocks):
        assert row["model"] == model["name"] and row["weights"] == model["weights"]
        assert int(row["block"]) == block["index"] and row["kind"] == block["kind"]
        assert float(row["variance"]) == block["variance"] and float(row["high_freq"]) == block["high_freq"]
        assert [float(v) for v in row["fourier"].split(";")] == block["fourier"]


def test_gradio_exports_a_figure_and_the_pack(server_url: str, sample_photo: Path):
    client = gradio_client(server_url)
    client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    png = client.predict("fig9-variance", "png", api_name="/export_figure")
    assert Image.open(png).size == FIGURE_SIZE
    svg = client.predict("fig2a-resnet50", "svg", api_name="/export_figure")
    assert b"<svg" in Path(svg).read_bytes()[:400]
    shaded = Path(client.predict("fig9-variance", "svg", True, 1, "cat.jpg", api_name="/export_figure")).read_text()
    assert "subsampling (blue, ViT-Ti/16)" not in shaded and "MSA block (gray, ViT-Ti/16)" in shaded  # as on screen
    assert "on cat.jpg · ResNet-50: random" in shaded  # the photo analyzed (in the page: the hidden analyzed_photo)
    with zipfile.ZipFile(client.predict(str(sample_photo), "inferno", api_name="/export_pack")) as archive:
        assert {"handout.html", "blocks.csv", "figures/fig8-high-frequency.png", "maps/cat.jpg-resnet50.png"} <= set(
            archive.namelist()
        )
        default_map = archive.read("maps/cat.jpg-vit_tiny_patch16_224.png")
        assert "layer 12/12" in archive.read("handout.html").decode()
    client.predict(layer=3, head="2", api_name="/view_1")  # the ViT's column: layer 3, head 2
    with zipfile.ZipFile(client.predict(str(sample_photo), "inferno", api_name="/export_pack")) as archive:
        html = archive.read("handout.html").decode()
        assert "layer 3/12" in html and "head 2/3" in html and "layer 12/12" not in html
        assert archive.read("maps/cat.jpg-vit_tiny_patch16_224.png") != default_map
    client.predict(layer=3, head="2", rollout=True, api_name="/view_1")
    with zipfile.ZipFile(client.predict(str(sample_photo), "inferno", api_name="/export_pack")) as archive:
        assert "Attention rollout through all 12 layers" in archive.read("handout.html").decode()

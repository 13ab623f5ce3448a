"""The handouts on paper: the teaching pack's handout.pdf and the tour's tour.pdf, printed by Chromium from their HTML,
read back with a PDF reader. Each is as long as docs/guide.md says (the pack: a page of maps for the photo and two of
curves, four models included; the tour: a page per step), and says on paper what the HTML says: the ten classes
beside each CIFAR model's top-5, a checked map's verdict and line; a map's colour-bar numbers print at 8 pt."""

from __future__ import annotations

import re
import unicodedata
import zipfile
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from pypdf import PdfReader

from app.backend.service import AUTO, Service
from app.exports import export
from app.tabs.compare import CompareTab, Look
from app.tabs.tour import KEYS, TourTab
from app.views import texts as text
from app.views.checks import checked
from app.views.evidence import known_classes
from tests.conftest import ROOT

pytestmark = pytest.mark.browser  # kaleido draws the figures, Chromium prints the PDFs
MODELS = ["vit_cifar", "preact_resnet", "alternet", "vit_tiny_patch16_224"]  # four: the most a page compares
CIFAR = MODELS[:3]
WORDS = {3: "three", 8: "eight"}
PT_MM = 25.4 / 72
FIGURES_EM = 0.7  # a font's figures stand about 0.7 of its size (0.74 in the bar's font, Aileron)


def words(said: str) -> str:
    """Text as a PDF reader gives it, compared without its line breaks: ligatures undone, no whitespace."""
    return "".join(unicodedata.normalize("NFKC", said).split())


@pytest.fixture(scope="module")
def analysis(one_thread, sample_photo: Path):
    """The three CIFAR models (bundled checkpoints) and ViT-Ti on the cat photo, the ViT/4's map checked."""
    tab = CompareTab(Service.start())
    page = tab.analyze(str(sample_photo), MODELS, "", AUTO, Look())
    tab.check(page.runs[0], page.columns[0].options)
    return tab, page


@pytest.fixture(scope="module")
def pack(analysis, sample_photo: Path) -> zipfile.ZipFile:
    tab, page = analysis
    views = [column.options for column in page.columns]
    return zipfile.ZipFile(BytesIO(tab.export_pack(page.runs, sample_photo.name, Look(), views).data))


def guide_paragraph(start: str) -> str:
    """docs/guide.md's paragraph that holds `start`, on one line."""
    paragraph = next(p for p in (ROOT / "docs" / "guide.md").read_text().split("\n\n") if start in p)
    return " ".join(paragraph.split())


def test_the_handout_pdf_is_as_long_as_the_guide_says_a_page_of_maps_then_the_curves(analysis, pack: zipfile.ZipFile):
    assert {"handout.html", "handout.pdf"} <= set(pack.namelist())  # the HTML stays beside its print
    pages = PdfReader(BytesIO(pack.read("handout.pdf"))).pages
    assert len(pages) == export.handout_pages(1) == 3
    assert (
        f"`handout.pdf`, the same handout printed by Chromium on A4: **{WORDS[len(pages)]} pages** for one photo "
        in (guide_paragraph("`handout.pdf`"))
    )
    first, curves, rest = (words(page.extract_text()) for page in pages)
    assert all(words(f"{run.result.label} on cat.jpg") in first for run in analysis[1].runs)  # all four models
    assert words("Fig 2a") in curves and words("High frequencies block by block (Fig 8)") in curves
    assert words("Feature map variance (Fig 9)") in rest and words("logit lens") in rest and "Data" in rest
    width, height = (float(v) for v in pages[0].mediabox.upper_right)
    assert (round(width / 72 * 25.4), round(height / 72 * 25.4)) == (210, 297)  # A4


def test_beside_each_cifar_models_top5_the_ten_classes_it_knows_on_paper_too(pack: zipfile.ZipFile):
    caveat = known_classes("vit_cifar")
    assert caveat.startswith("This model knows only 10 classes (airplane, ") and "truck)" in caveat
    assert all(known_classes(name) == caveat for name in CIFAR) and known_classes("vit_tiny_patch16_224") == ""
    html = pack.read("handout.html").decode()
    beside = re.findall(r"<div class='predictions'>.*?</div>", html)
    assert len(beside) == len(MODELS)
    assert [caveat.replace("'", "&#x27;") in row for row in beside] == [True, True, True, False]  # the CIFAR three
    assert all(len(re.findall(r"<li>[^<]+: \d+\.\d\d%</li>", row)) == 5 for row in beside)  # the top-5 beside it
    printed = words(PdfReader(BytesIO(pack.read("handout.pdf"))).pages[0].extract_text())
    assert printed.count(words(caveat)) == len(CIFAR)


def test_a_checked_maps_verdict_and_line_are_in_the_handout(analysis, pack: zipfile.ZipFile):
    """The ViT/4's map was checked on screen: its caption on paper goes on with the check, whose line starts with
    the verdict on this photo ('On this photo, this map beats / does no better than / does worse than random
    order ...'); the maps not checked have no check."""
    _, page = analysis
    found = checked(page.runs[0], page.columns[0].options)
    line = found.line()
    assert line.startswith(found.verdict.text()) and re.match(
        r"On this photo, this map (beats|does no better than|does worse than) random order", line
    )
    html = pack.read("handout.html").decode()
    checks = re.findall(r"<p class='check'><b>([^<]+)</b> ([^<]+)</p>", html)
    assert checks == [(text.CHECK_TITLE, f"{line}.".replace("'", "&#x27;"))]  # one map checked: one check
    printed = words(PdfReader(BytesIO(pack.read("handout.pdf"))).pages[0].extract_text())
    assert words(f"{text.CHECK_TITLE} {line}.") in printed


def test_the_maps_colour_bar_numbers_print_at_8_pt_or_more(pack: zipfile.ZipFile):
    """Under each map, the bar's numbers: their figures' height in the PNG, at the width the handout prints the
    map (its CSS), is that of 8 pt type or more."""
    html = pack.read("handout.html").decode()
    printed_mm = float(re.search(r"figure img\.map \{width: ([\d.]+)mm", html).group(1))
    maps = [name for name in pack.namelist() if name.startswith("maps/")]
    assert len(maps) == len(MODELS)
    for name in maps:
        image = np.asarray(Image.open(BytesIO(pack.read(name))).convert("RGB")).astype(int)
        width = image.shape[1]
        strip = image[width:]  # the square map, then the bar's strip under it
        coloured = (strip.max(axis=2) - strip.min(axis=2) > 40).mean(axis=1) > 0.5  # the bar's rows
        below = int(np.flatnonzero(coloured).max()) + 3  # past the bar and its frame
        ink = (strip[below:, 24 : width // 3].max(axis=2) < 120).any(axis=1)  # the low number (not its tick mark)
        rows = np.flatnonzero(ink)
        breaks = np.flatnonzero(np.diff(rows) > 1)  # the numbers' line ends where the unit's begins
        last = rows[breaks[0]] if len(breaks) else rows[-1]
        figures_mm = (last - rows[0] + 1) / width * printed_mm
        assert figures_mm >= FIGURES_EM * 8 * PT_MM, (name, figures_mm)


def test_the_tour_pdf_has_a_page_per_step(analysis, sample_photo: Path):
    tab, page = analysis
    download = TourTab(tab.service).export(page.runs, Look(), sample_photo.name)
    with zipfile.ZipFile(BytesIO(download.data)) as archive:
        assert {"tour.html", "tour.pdf"} <= set(archive.namelist())
        pages = PdfReader(BytesIO(archive.read("tour.pdf"))).pages
    assert len(pages) == len(KEYS) == 8  # not a step over two pages
    for number, printed in enumerate((words(p.extract_text()) for p in pages), 1):
        assert words(f"Step {number} of {len(KEYS)}") in printed
        assert sum(words(f"Step {n} of {len(KEYS)}") in printed for n in range(1, len(KEYS) + 1)) == 1
    assert f"**one page per step, {WORDS[len(pages)]} pages**" in guide_paragraph("`tour.pdf`")

"""Every plot the page shows carries a text alternative that says what it found (app/views/alt_text.described), read
by the page's script into the plot's accessible name (the journey checks it in the browser): its title, then the
finding the page prints beside it, or else what its lines show; the handout's images carry the same words."""

from __future__ import annotations

import re
import zipfile
from html import unescape
from io import BytesIO
from pathlib import Path

import plotly.graph_objects as go
import pytest

from app.backend.service import AUTO, Service
from app.exports.paper_findings import PaperFindings
from app.tabs.compare import CompareTab, Look
from app.tabs.paper import PaperTab
from app.tabs.tour import TourTab
from app.views import alt_text
from engine.paper.claims import MSA


@pytest.fixture(scope="module")
def compare(one_thread) -> CompareTab:
    return CompareTab(Service.start())


@pytest.fixture(scope="module")
def page(compare: CompareTab, sample_photo: Path):
    """The trained CIFAR ViT and PreAct ResNet on the cat photo."""
    return compare.analyze(str(sample_photo), ["vit_cifar", "preact_resnet"], "", AUTO, Look())


def lowered(blocks, value: str) -> tuple[int, int]:
    """How many MSA units lowered `value` from the block before them, and how many MSA units there are: counted
    here from the blocks, as Fig 9 is read (the curve drops across a gray span)."""
    units = [(before, block) for before, block in zip(blocks, blocks[1:]) if block.kind in MSA]
    return sum(getattr(b, value) < getattr(a, value) for a, b in units), len(units)


def test_a_plots_lines_are_said_from_its_data():
    fig = go.Figure(go.Scatter(x=[0, 1, 2], y=[1.0, 5.0, 3.0], name="ViT")).update_layout(
        title="Fig 9 · variance<br><sup>trained</sup>", xaxis_title="Depth", yaxis_title="Variance"
    )
    fig.add_scatter(x=[0, 1], y=[None, None], name="")  # unnamed (a shaded span, a colour bar): not a line
    said = alt_text.of(fig)
    lines = "Variance against Depth: ViT: from 1 (at 0) to 3 (at 2), highest 5 (at 1)"
    assert said == f"Fig 9 · variance · trained. {lines}"


def test_figs_8_and_9_say_the_counts_of_the_models_on_screen(page):
    vit = page.runs[0].result
    for fig, value, title in ((page.variance, "variance", "Fig 9"), (page.high_frequency, "high_freq", "Fig 8")):
        said = fig.layout.meta["alt"]
        changed, units = lowered(vit.blocks, value)
        assert said.startswith(title) and f"{vit.label}: MSA units lowered it in {changed} of {units}" in said, said
        assert "**" not in said and "\n" not in said  # plain words, one line


def test_every_figure_of_every_tab_carries_its_text_alternative(compare: CompareTab, page):
    shown = [page.high_frequency, page.variance, page.lens, *(column.spectrum for column in page.columns)]
    for section in PaperTab(PaperFindings(compare.service)).sections({}):
        shown += section.figures
    steps = TourTab(compare.service).steps(page.runs)
    shown += [step.figure for step in steps if step.figure is not None]
    assert len(shown) > 12
    for fig in shown:
        said = fig.layout.meta["alt"]
        assert said.startswith(alt_text.figure_title(fig)) and len(said) > len(alt_text.figure_title(fig)) + 20, said
    for step in steps:
        if step.figure is not None:  # a tour step's figure says the step's verdict
            assert alt_text.plain(step.verdict.text)[:60] in step.figure.layout.meta["alt"]


def test_the_handouts_images_say_what_they_show(compare: CompareTab, page, sample_photo: Path):
    pack = compare.export_pack(page.runs, sample_photo.name, Look())
    html = zipfile.ZipFile(BytesIO(pack.data)).read("handout.html").decode()
    alts = {src: unescape(alt) for src, alt in re.findall(r"<img[^>]*src='([^']+)'[^>]*alt='([^']*)'", html)}
    assert len(alts) == html.count("<img"), "every image has a text alternative"
    fig9 = alts["handout/fig9-variance.png"]  # the handout's own figure, drawn for paper
    assert fig9.startswith("Fig 9") and "lowered it in" in fig9, fig9
    maps = [alt for src, alt in alts.items() if src.startswith("maps/")]
    assert maps and all(alt.startswith("Where it looks:") and "Colour scale" in alt for alt in maps), maps
    assert all(alt.startswith("The chosen photo") for src, alt in alts.items() if src.startswith("inputs/"))

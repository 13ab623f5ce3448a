"""What the screen and the exports say about a figure or a map, read from the view functions on real runs of
the bundled CIFAR-10 models: what a figure was measured on, lesion names, counts without a switched-off unit,
maps that cannot be read, the offline weights message, the first screen's models and the figures' fit."""

from __future__ import annotations

import re
import zipfile
from html import unescape
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt
from PIL import Image

from app.backend.cifar_lab import CifarLab
from app.backend.service import AUTO, OFFLINE_MODELS, MapKey, Service, default_models
from app.exports import export
from app.tabs import Problem
from app.tabs.alternet import AlterNetTab
from app.tabs.compare import CompareTab, Look
from app.tabs.tour import TourTab, handout_figures
from app.views import evidence, figures
from app.views import texts as text
from app.views.attention import MEAN, ViewOptions, render
from app.views.texts import LABEL, literal
from engine.errors import shown
from engine.results import AttributionMap


@pytest.fixture(scope="module")
def service(one_thread) -> Service:
    return Service.start()


@pytest.fixture(scope="module")
def runs(service: Service, sample_photo: Path):
    """PreAct ResNet and AlterNet (trained, bundled) on the cat photo."""
    return service.analyze(str(sample_photo), ["preact_resnet", "alternet"], AUTO)


def subtitle(fig) -> str:
    return " ".join(re.findall(r"<sup>(.*?)</sup>", fig.layout.title.text))


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.browser  # the exported figures are drawn by kaleido's Chromium
def test_the_alternet_exports_say_what_they_were_measured_on(service: Service, sample_photo: Path):
    tab = AlterNetTab(CifarLab(service))
    averaged = tab.on_subset("s4:4", 10)
    assert averaged.measured == "mean over 10 CIFAR-10 test images"
    for fig in export.alternet_figures(averaged.run, averaged.measured).values():
        assert "mean over 10 CIFAR-10 test images" in subtitle(fig)
    on_photo = tab.on_photo("s4:4", str(sample_photo))
    for fig in export.alternet_figures(on_photo.run, on_photo.measured).values():
        assert "on cat.jpg" in subtitle(fig) and "test images" not in subtitle(fig)

    with zipfile.ZipFile(BytesIO(tab.export(averaged).data)) as archive:
        names = set(archive.namelist())
    # the button says what the ZIP holds: Figs 8 and 9 as PNG and SVG, Fig 11 as SVG only
    assert "Figs 8 and 9 as PNG and SVG, Fig 11 as SVG" in LABEL.alternet_export
    assert {n for n in names if n.startswith(("fig8", "fig9"))} == {
        f"{fig}.{fmt}" for fig in ("fig8-high-frequency", "fig9-variance") for fmt in ("png", "svg")
    }
    assert [n for n in names if n.startswith("fig11")] == ["fig11-alternet-s4b4.svg"]


def test_the_tour_handout_names_the_photo_and_not_the_compare_models_under_stored_figures(service, runs):
    steps = TourTab(service).steps(runs)
    titled = {step.key: subtitle(fig) for step, fig in handout_figures(steps, runs, "cat.jpg")}
    for key in ("alternet", "robustness"):  # Fig 12a and Fig 2b: the bundled family's stored results
        assert key in titled
        assert "PreAct" not in titled[key] and "cat.jpg" not in titled[key] and "stored results" in titled[key]
    for key in ("frequency", "variance"):  # Figs 8 and 9: the photo and the Compare tab's models
        assert "on cat.jpg" in titled[key] and "PreAct ResNet" in titled[key]


def test_lesion_pickers_name_stage_blocks_as_the_alternet_tab_does(runs):
    labels = dict((index, label) for label, index in runs[1].units)
    assert labels[17] == "s4:4 (msa, unit 17)" and labels[15] == "s4:2 (msa, unit 15)"
    assert labels[1] == "s1:1 (conv, unit 1)"
    assert not any("stages." in label for label, _ in runs[0].units)


def counts(markdown: str, model: str) -> list[tuple[int, int]]:
    line = next(line for line in markdown.splitlines() if line.startswith(f"- {model}"))
    return [(int(a), int(b)) for a, b in re.findall(r"(\d+) of (\d+)", line)]


def test_the_counts_under_figs_8_and_9_leave_out_a_switched_off_unit(service: Service, runs):
    resnet = runs[0]
    before = counts(evidence.high_frequency_here([resnet.result]), "PreAct ResNet")
    lesioned = service.lesioned(resnet, [5])
    after = counts(evidence.high_frequency_here([lesioned.result]), "PreAct ResNet")
    assert [units for _, units in after] == [units - 1 for _, units in before], (before, after)
    variance_before = counts(evidence.variance_here([resnet.result]), "PreAct ResNet")
    variance_after = counts(evidence.variance_here([lesioned.result]), "PreAct ResNet")
    assert [units for _, units in variance_after] == [units - 1 for _, units in variance_before]


def test_a_switched_off_unit_is_named_as_in_its_picker_and_the_stored_counts_are_the_intact_models(
    service: Service, runs
):
    alternet = runs[1]
    label = dict((index, label) for label, index in alternet.units)[11]
    lesioned = service.lesioned(alternet, [11])
    assert label.startswith("s3:4 ") and lesioned.result.label.endswith(" · s3:4 switched off")
    stored = evidence.variance_here([lesioned.result]).split("How stable")[1]
    assert "switched off" not in stored and "with every unit in place" in stored, stored
    from app.exports import export

    fig = export.paper_figures([lesioned.result])["fig9-variance"]  # the subtitle for slides: the accuracy is the
    lines = re.findall(r"<sup>(.*?)</sup>", fig.layout.title.text)  # checkpoint's, the lesion is said after it
    assert any(line.endswith("safetensors), as trained; drawn with s3:4 switched off") for line in lines), lines
    assert not any(line.startswith("s3:4 switched off") for line in lines), lines


def test_an_empty_map_is_said_to_be_empty_and_leaves_the_photo_as_it_is(service: Service, runs):
    run = runs[0]
    target = run.result.predictions[0][0].index
    run.keep(MapKey.of("Occlusion", target), AttributionMap("Occlusion", target, "x", np.zeros((32, 32), np.float32)))
    image, caption = render(run, ViewOptions(method="Occlusion"), "inferno", 0.6)
    plain, _ = render(run, ViewOptions(method="Occlusion"), "inferno", 0.0)  # no overlay at all
    assert "This map is empty" in caption
    assert np.array_equal(image, plain)  # the photo, not darkened by a colour map of zeros


def test_integrated_gradients_says_what_its_delta_means(service: Service, runs):
    run = runs[0]
    target = run.result.predictions[0][0].index
    run.keep(MapKey.of("Integrated Gradients", target, 8), service.attribution(run, "Integrated Gradients", target, 8))
    _, caption = render(run, ViewOptions(method="Integrated Gradients", steps=8), "inferno", 0.6)
    assert "convergence delta" not in caption
    assert "completeness error" in caption and "class score rises" in caption and "more steps shrink it" in caption


def test_a_tiny_photo_gets_a_note_that_it_was_enlarged(service: Service, tmp_path: Path):
    tiny = tmp_path / "tiny.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (8, 8, 3), dtype=np.uint8)).save(tiny)
    run = service.analyze(str(tiny), ["preact_resnet"], AUTO)[0]
    _, caption = render(run, ViewOptions(layer=None, head=MEAN), "inferno", 0.6)
    assert "8×8 px" in caption and "enlarged 4×" in caption
    photo = service.analyze(str(Path(__file__).parent.parent / "assets/samples/cat.jpg"), ["preact_resnet"], AUTO)
    assert "enlarged" not in render(photo[0], ViewOptions(), "inferno", 0.6)[1]


def test_offline_pretrained_only_names_what_the_page_offers(
    service: Service, sample_photo: Path, monkeypatch, tmp_path
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(Problem) as refused:
        CompareTab(service).analyze(str(sample_photo), ["vit_tiny_patch16_224"], None, "pretrained", Look())
    message = str(refused.value)
    assert ".safetensors" not in message and "HF_HOME" not in message and str(tmp_path) not in message
    assert "trained where available" in message and "random (seeded)" in message


def test_offline_the_first_screen_checks_the_trained_cifar_models_and_says_why():
    assert default_models(online=False) == OFFLINE_MODELS == ("preact_resnet", "alternet", "vit_cifar")
    assert default_models(online=True) == ("resnet50", "vit_small_patch16_224")
    assert "checked to start with" in text.OFFLINE


def test_titles_fit_a_narrow_column(runs):
    for run in runs:
        lines = figures.fourier_spectrum(run.result).layout.title.text.split("<br>")
        assert all(len(line) <= figures.TITLE_CHARS for line in lines), lines
    lens = figures.answer_curve([run.result for run in runs], [run.lens for run in runs])
    assert len(lens.layout.title.text) <= 40


def test_the_fig_11_drawing_scrolls_rather_than_shrinks_on_a_phone():
    from app.views.alternet import DRAWING_MIN_WIDTH, drawing_html
    from engine.models.placement import PAPER_DEPTHS, parse

    html = drawing_html(parse("s4:4", PAPER_DEPTHS))
    assert "overflow-x:auto" in html and f"min-width:{DRAWING_MIN_WIDTH}px" in html


@pytest.mark.parametrize(
    "name",
    ["[click](http://example.com/x).jpg", "**bold** _it_ `code`.png", "# head <b>x</b> ~~s~~ $x$ | a:b.jpg", "a" * 90],
)
def test_a_file_name_shown_in_markdown_is_plain_text(name: str) -> None:
    """Streamlit renders captions as Markdown: a file name goes through texts.literal, and a Markdown renderer
    (markdown-it, CommonMark) gives back its text, cut as messages are, with no link, emphasis or tag."""
    html = MarkdownIt("commonmark").renderInline(literal(name))
    assert not re.search(r"<(a|strong|em|code|b|h1)\b", html), html
    assert unescape(html) == shown(name)

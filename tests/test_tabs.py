"""Each tab's logic (app.tabs) driven with no front end: plain inputs in, plain data out, Problems for
bad input; the numbers shown are the engine's own."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import engine
from app.backend.cifar_lab import CifarLab
from app.backend.service import Service
from app.exports.paper_findings import ORDER, PaperFindings
from app.tabs import Download, Problem
from app.tabs.alternet import NOT_AVERAGED, PAPER_STEP, STEPS, AlterNetTab
from app.tabs.column_maps import StoppedMaps
from app.tabs.compare import CompareTab, Look, attention_controls, known_classes, limited, photo_line
from app.tabs.dataset import DatasetTab
from app.tabs.paper import PaperTab
from app.tabs.tour import KEYS, address, index_of
from app.views.attention import ATTENTION, LENS, ViewOptions
from app.views.texts import LABEL


@pytest.fixture(scope="module")
def service(one_thread) -> Service:
    return Service()


def test_compare_analyzes_redraws_and_lesions(service: Service, sample_photo: Path):
    tab = CompareTab(service)
    page = tab.analyze(str(sample_photo), ["vit_cifar"], "preact_resnet", "random", Look())
    assert [run.result.name for run in page.runs] == ["vit_cifar", "preact_resnet"]
    vit, resnet = page.columns
    assert f"Analyzed 2 models on {sample_photo.name} in " in page.status  # the same status line in every front end
    assert vit.random and "random weights" in vit.title
    named = tab.analyze(sample_photo.read_bytes(), ["vit_cifar"], "", "random", Look(), name="my\x1b[31m cat.jpg")
    assert named.status.startswith("Analyzed 1 model on my cat.jpg in ")  # the name as sent, cleaned
    assert len(vit.top5) == 5 and all(label.endswith("%)") for label in vit.top5)  # probabilities in the labels
    direct = engine.Analyzer(service.load("vit_cifar", "random")).attribute([Image.open(sample_photo).convert("RGB")])
    assert list(vit.top5.values()) == [p.probability for p in direct.predictions[0]]  # the engine's own numbers
    assert vit.layers == 8 and vit.rollout and resnet.layers == 0 and "Grad-CAM" in resnet.caption
    assert (
        "knows only 10 classes (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck)"
        in vit.known_classes
    )
    assert "anything else still gets one of them" in vit.known_classes and known_classes("resnet50") == ""
    assert vit.image.shape[2] == 3 and ("Fig 9: feature-map variance", "fig9-variance") in page.figure_choices
    assert (
        "ViT/4 (CIFAR, 1.6 M params) (random weights" in page.variance_here
        and "MSA units lowered it in" in page.variance_here
    )
    assert "mean attention distance here" in vit.distance.lower() and resnet.distance == ""
    legend = [trace.name for trace in tab.curves(page.runs, Look(shaded=1))[1].data if trace.name]
    assert "MSA block (gray, PreAct ResNet)" not in legend  # the ResNet has no MSA span to shade
    assert "subsampling (blue, PreAct ResNet)" in legend, legend  # the short name: the key fits a phone

    passes = service.forward_passes
    image, caption = tab.view(page.runs[0], ViewOptions(layer=1, head="2"), Look("viridis", 1.0))
    assert "layer 1/8" in caption and "head 2/" in caption and service.forward_passes == passes  # a redraw only
    assert not np.array_equal(image, vit.image)

    lesioned = tab.lesion(page.runs, 1, [5, 6], Look())
    assert lesioned.runs[1].lesion == (5, 6) and "s2:2 and s2:3 switched off" in lesioned.columns[1].title
    assert lesioned.runs[0] is page.runs[0] and service.forward_passes > passes
    restored = tab.lesion(lesioned.runs, 1, [], Look())
    assert restored.runs[1] is page.runs[1]  # the original run, exactly

    with pytest.raises(Problem, match="Analyze a photo first"):
        tab.lesion([], 0, [1], Look())
    with pytest.raises(Problem, match="no figure 'fig1' as 'png'"):
        tab.export_figure(page.runs, "fig1", "png")
    with pytest.raises(Problem, match="Upload a photo"):
        tab.analyze(None, ["vit_cifar"], "", "random", Look())
    with pytest.raises(Problem, match="unknown model 'nope'"):
        tab.analyze(str(sample_photo), ["nope"], "", "random", Look())


def test_a_columns_controls_fall_back_to_its_defaults_and_a_stop_keeps_the_map_before(
    service: Service, sample_photo: Path
):
    """The rules a front end that re-draws a column on each change asks of the page model: each control not set,
    or no longer valid, takes the column's default; a Stop leaves the map before it, for this run only."""
    tab = CompareTab(service)
    page = tab.analyze(str(sample_photo), ["vit_cifar", "preact_resnet"], "", "random", Look())
    vit, resnet = page.columns
    assert vit.chosen() == ViewOptions(8, "mean", False, vit.methods[0], None)  # the last layer's head mean
    assert vit.chosen("Saliency", vit.classes[2][1], 3, "2", True) == ViewOptions(
        3, "2", True, "Saliency", vit.classes[2][1]
    )
    assert vit.chosen("no such method", 999, 40, "99").method == vit.methods[0]  # each unknown value: the default
    assert vit.chosen("no such method", 999, 40, "99") == ViewOptions(8, "mean", False, vit.methods[0], None)
    assert resnet.chosen(layer=3, head="2", rollout=True) == ViewOptions(None, "mean", False, "Grad-CAM", None)

    maps, run = StoppedMaps(), page.runs[0]
    occlusion = vit.chosen("Occlusion")
    assert not occlusion.computed(run) and maps.previous(0, "run-a", run) is None  # nothing drawn yet
    maps.drew(0, "run-a", vit.chosen())
    maps.stop(0, "run-a", occlusion.key(run))
    assert maps.is_stopped(0, "run-a", occlusion.key(run)) and maps.previous(0, "run-a", run) == vit.chosen()
    assert not maps.is_stopped(0, "run-b", occlusion.key(run))  # another model or analysis in the column
    assert not maps.is_stopped(1, "run-a", occlusion.key(run)) and maps.previous(0, "run-b", run) is None
    maps.compute(0)
    assert not maps.is_stopped(0, "run-a", occlusion.key(run))


def test_the_model_limit_and_the_stale_photo_line_are_the_page_models():
    """At most four models (a pick past the limit is undone); the status line calls the results stale once the photo
    is not the one analyzed, but not before any analysis, not for the photo analyzed, and not while an Analyze is
    under way (a photo uploaded as it was pressed is the one analyzed)."""
    assert limited(["a", "b", "c", "d", "e"]) == ["a", "b", "c", "d"] and limited(["a"]) == ["a"] and limited([]) == []
    assert photo_line("new.jpg", "cat.jpg", under_way=False) == LABEL.stale.format(previous="the previous photo")
    assert photo_line("new", "old", False, "**cat.jpg**") == LABEL.stale.format(previous="**cat.jpg**")
    assert photo_line(None, "cat.jpg", False) is not None  # the photo cleared: the results are still the old one's
    assert photo_line("cat.jpg", "cat.jpg", False) is None and photo_line("new.jpg", "", False) is None
    assert photo_line("new.jpg", "cat.jpg", under_way=True) is None


def test_the_controls_that_apply_to_a_map_are_the_page_models():
    """Layer, head and rollout (each front end enables them so): rollout spans every layer and head; the logit lens
    takes a layer; other methods take none of them."""
    assert attention_controls(False, ATTENTION) == (True, True, True)
    assert attention_controls(True, ATTENTION) == (False, False, True)
    assert attention_controls(False, LENS) == (True, False, False) and attention_controls(True, LENS)[2] is False
    assert attention_controls(False, "Saliency") == (False, False, False) == attention_controls(False, "")


def test_the_tours_address_names_the_step_shown_and_none_off_the_tour():
    assert address(0) == KEYS[0] and address(3) == KEYS[3] and address(99) == KEYS[-1]
    assert address(None) is None and address(index_of(KEYS[2])) == KEYS[2] and address(index_of("3")) == KEYS[2]


def test_alternet_keeps_step_grid_and_text_in_step_and_names_every_bad_entry(service: Service, sample_photo: Path):
    tab = AlterNetTab(CifarLab(service))
    paper = tab.from_step(PAPER_STEP)
    assert paper.spec == str(STEPS[-1]) and paper.grid == [[], [4], [2, 4, 6], [2, 4]]
    custom = tab.from_grid([[], [4], [6], [2, 4]])
    assert custom.step is None and custom.spec == "s2:4,s3:6,s4:2,s4:4"
    assert tab.from_text(" S4:4 ").step == 1
    with pytest.raises(Problem) as info:
        tab.from_text("s1:1,s9:2")
    assert "s1:1" in str(info.value) and "s9:2" in str(info.value)
    with pytest.raises(Problem, match="0 to 6"):
        tab.from_step(9)

    shown = tab.on_photo("s4:4", str(sample_photo))
    assert shown.drawing.count("<svg") == 1 and "M** parameters" in shown.cost and "build-up step 1" in shown.source
    assert shown.seen.shape == (192, 192, 3) and shown.high_frequency is not None and shown.accuracy == ""
    # a line per figure (Figs 8, 9) on the photo, and one per figure on its stability over the test subset
    assert shown.here.count("AlterNet, step 1 (1 MSA)") == 4 and "MSA units lowered it in" in shown.here
    assert shown.here.count("over the 1,000 bundled test images") == 6
    names = [trace.name for trace in shown.variance.data if trace.name]
    assert "AlterNet, step 1 (1 MSA)" in names and "PreAct ResNet (CIFAR, 1.8 M params)" in names
    assert tab.on_photo("s4:4", None).run is None
    with pytest.raises(Problem, match="Pick a photo"):
        tab.export(None)
    with pytest.raises(Problem, match="10 to 1000"):
        tab.on_subset("s4:4", 5)
    # the spec box holding text that is not a placement: averaging and exporting are refused, in the same words in
    # every front end; what is shown stays
    assert tab.typed_problem("s4:4") is None and tab.typed_problem(None) is None and "s9:2" in tab.typed_problem("s9:2")
    with pytest.raises(Problem) as info:
        tab.on_subset("s4:4", 100, typed="s4:4,s9:2")
    assert str(info.value).startswith(f"{NOT_AVERAGED}: the MSA blocks typed as text are not a placement (")
    assert str(info.value).endswith("what is shown is the last good one.") and "s9:2" in str(info.value)
    with pytest.raises(Problem, match="^Not exported: the MSA blocks typed as text are not a placement"):
        tab.export(shown, typed="foo")


def test_dataset_measures_a_zip_and_names_the_file_as_the_user_knows_it(service: Service, tmp_path: Path):
    tab = DatasetTab(service)
    archive = tmp_path / "tmpabc123.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        for i in range(3):
            buffer = io.BytesIO()
            Image.fromarray(np.random.default_rng(i).integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(buffer, "PNG")
            packed.writestr(f"{i}.png", buffer.getvalue())
        packed.writestr("broken.jpg", b"\xff\xd8 truncated")
    shown = tab.measure(str(archive), ["vit_cifar"], "", "random")
    assert "3 images. 1 unreadable skipped (broken.jpg)." in shown.summary and len(shown.spectra) == 1
    assert shown.results[0].label.endswith("· 3 images")  # the skipped files said once, not in every legend
    not_zip = tmp_path / "tmpxyz.zip"
    not_zip.write_bytes(b"not a zip")
    with pytest.raises(Problem, match="not a ZIP"):
        tab.measure(str(not_zip), ["vit_cifar"], "", "random", shown_name="photos.zip")
    with pytest.raises(Problem, match="Upload a ZIP"):
        tab.measure(None, ["vit_cifar"], "", "random")
    with pytest.raises(Problem, match="Measure a ZIP"):
        tab.export(None)


@pytest.mark.browser  # the figures are drawn by kaleido's Chromium
def test_each_tab_exports_what_it_shows(service: Service, sample_photo: Path, tmp_path: Path):
    """The Compare tab's figure as SVG; the AlterNet tab's ZIP of figures, the same for the spec typed as shown; the
    Dataset tab's figures, each naming the ZIP as the user knows it."""
    compare = CompareTab(service)
    runs = compare.analyze(str(sample_photo), ["vit_cifar"], "", "random", Look()).runs
    svg = compare.export_figure(runs, "fig8-high-frequency", "svg")
    assert isinstance(svg, Download) and svg.filename == "fig8-high-frequency.svg" and b"<svg" in svg.data[:400]

    alternet = AlterNetTab(CifarLab(service))
    shown = alternet.on_photo("s4:4", str(sample_photo))
    zipped = alternet.export(shown)
    with zipfile.ZipFile(io.BytesIO(zipped.data)) as archive:
        assert any(name.endswith(".svg") for name in archive.namelist())
    assert alternet.export(shown, typed="s4:4").filename == zipped.filename

    dataset, archive = DatasetTab(service), tmp_path / "tmpabc123.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        for i in range(3):
            buffer = io.BytesIO()
            Image.fromarray(np.random.default_rng(i).integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(buffer, "PNG")
            packed.writestr(f"{i}.png", buffer.getvalue())
    named = dataset.measure(str(archive), ["vit_cifar"], "", "random", shown_name="photos.zip")
    with zipfile.ZipFile(io.BytesIO(dataset.export(named).data)) as exported:
        svgs = [exported.read(name).decode() for name in exported.namelist() if name.endswith(".svg")]
    assert len(svgs) == 3 and all("mean over photos.zip" in svg for svg in svgs)  # Figs 2a, 8 and 9


def test_paper_shows_every_stored_section_in_order_without_running_a_model(service: Service):
    tab = PaperTab(PaperFindings(service))
    passes = service.forward_passes
    sections = tab.sections({})
    assert [s.name for s in sections] == list(ORDER) and service.forward_passes == passes
    for section in sections:
        assert section.explanation.startswith("### ") and 0 < len(section.figures) <= section.panels
        assert ("remakes it" in section.caption) == (section.name != "trajectory")  # the command that remakes it
        assert (section.recompute is None) == (section.name in ("trajectory", "maps"))  # maps: too long for a turn
    for name in ("trajectory", "maps"):
        with pytest.raises(Problem, match="not recomputed in the app"):
            tab.recompute({}, name, 100)
    with pytest.raises(Problem, match="choose 10 to 1000 images"):
        tab.recompute({}, "noise", 5)
    with pytest.raises(Problem, match="Upload a photo"):
        tab.photo_noise(None)


def test_figs_8_and_9_shade_a_model_with_msa_blocks_first_and_ring_every_msa_unit(service: Service, sample_photo):
    tab = CompareTab(service)
    page = tab.analyze(str(sample_photo), ["preact_resnet", "alternet", "vit_cifar"], "", "random", Look())
    assert page.shaded == 1  # the AlterNet, though the ResNet comes first
    for fig in (page.high_frequency, page.variance):
        legend = [trace.name for trace in fig.data if trace.name]
        assert any(name.startswith("MSA block (gray, AlterNet") for name in legend), legend
        rings = [trace for trace in fig.data if trace.marker.symbol == "circle-open" and not trace.name]
        counted = [sum(block.kind == "msa" for block in run.result.blocks) for run in page.runs]
        assert [len(trace.x) for trace in rings] == [n for n in counted if n], (counted, rings)  # every MSA unit
    without = tab.analyze(str(sample_photo), ["preact_resnet", "vit_cifar"], "", "random", Look())
    assert without.shaded == 1  # no AlterNet: the ViT
    chosen = tab.curves(page.runs, Look(shaded=0))[1]
    assert not any((trace.name or "").startswith("MSA block (gray") for trace in chosen.data)  # as the teacher chose


def test_the_offline_notice_is_whole_until_a_photo_is_analyzed_then_a_line():
    from app.tabs import notice
    from app.views import texts

    assert notice(online=True, analyzed=False) == notice(online=True, analyzed=True) == ""
    assert notice(online=False, analyzed=False) == texts.OFFLINE
    assert notice(online=False, analyzed=True) == texts.OFFLINE_SHORT
    assert len(texts.OFFLINE_SHORT) < len(texts.OFFLINE) / 3  # a line on a laptop


def test_a_restyle_while_a_map_computes_draws_it_in_the_new_look_and_only_that_runs(sample_photo: Path):
    """The colours changed while a map is computed: it is drawn in them once done; another session's run of the same
    model keeps its own (the latest restyle is kept on the session's run, not per server)."""
    import threading

    from app.views.attention import render

    tab = CompareTab(Service())
    mine, theirs = (tab.analyze(str(sample_photo), ["preact_resnet"], None, "random", Look()).runs[0] for _ in "ab")
    options = ViewOptions(method="Integrated Gradients", steps=16)
    computing, restyled, drawn = threading.Event(), threading.Event(), {}

    def report(fraction: float, message: str) -> None:
        computing.set()
        restyled.wait(60)  # the map waits at its first batch until the page has been restyled

    worker = threading.Thread(target=lambda: drawn.update(mine=tab.view(mine, options, Look(), report)))
    worker.start()
    assert computing.wait(60)
    assert tab.restyle(mine, options, Look("viridis", 1.0)) is None  # not computed yet: drawn when done
    restyled.set()
    worker.join(120)
    assert np.array_equal(drawn["mine"][0], render(mine, options, "viridis", 1.0)[0])
    image, _ = tab.view(theirs, options, Look())
    assert np.array_equal(image, render(theirs, options, "inferno", 0.6)[0])  # the other run: its own look

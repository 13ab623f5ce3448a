"""The Streamlit front end: its interactions with Streamlit's AppTest, and the real server in Chromium."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from app.backend.service import OFFLINE_MODELS
from app.streamlit_ui.resources import service
from app.views.colour_bar import STRIP
from app.views.texts import LABEL
from engine.models.registry import get_spec
from tests.conftest import streamlit_settled, streamlit_upload
from tests.helpers.files import patch_member, png_bytes, write_photos_zip
from tests.helpers.pages import streamlit_pick
from tests.helpers.streamlit_apptest import SCRIPT, TIMEOUT_S, ckey

pytestmark = pytest.mark.usefixtures("offline")  # the hub unreachable, as on CI (tests/conftest.py)

MODELS = ["resnet50", "vit_tiny_patch16_224"]
ALTERNET_TAB = "AlterNet (Section 4)"


def analyzed(weights: str = "random") -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=TIMEOUT_S).run()
    at.multiselect(key="models").set_value(MODELS)
    at.radio(key="weights").set_value(weights)
    return at.button(key="analyze").click().run()


def test_analyze_fills_every_panel_and_view_controls_redraw_without_a_forward_pass():
    at = analyzed()
    assert not at.exception and not at.error
    assert any("Offline" in w.value for w in at.warning)
    assert [run.result.name for run in at.session_state["runs"]] == MODELS
    assert len(at.get("plotly_chart")) >= 4  # Fig 2a twice, Fig 8, Fig 9 (and the AlterNet tab's two)
    assert all(chart.proto.theme == "" for chart in at.get("plotly_chart"))  # drawn as in Gradio and the exports
    markdown = " ".join(m.value for m in at.markdown)
    assert "ResNet-50" in markdown and "random weights" in markdown
    passes = service().forward_passes
    at.slider(key=ckey(at, "layer", 1)).set_value(3).run()
    at.selectbox(key=ckey(at, "head", 1)).set_value("2").run()
    at.selectbox(key="colormap").set_value("viridis").run()
    assert not at.exception and service().forward_passes == passes
    assert y_axis_of_fig9(at) == "log"
    at.checkbox(key="log_y").uncheck().run()  # the page's plots are made again (a restyle re-uses them)
    assert y_axis_of_fig9(at) == "linear"
    assert not any("press **Analyze** for the new photo" in i.value for i in at.info)
    at.selectbox(key="sample").set_value("coffee.jpg").run()  # a new photo: the results are kept, and said stale
    assert any("for **cat.jpg**: press **Analyze** for the new photo" in i.value for i in at.info)
    assert at.session_state["runs"][0].result.name == MODELS[0]


def y_axis_of_fig9(at: AppTest) -> str:
    """The y-axis type of the Compare tab's feature-map variance plot (Fig 9), as sent to the browser."""
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-variance")]
    return json.loads(chart.proto.spec)["layout"]["yaxis"].get("type", "linear")


def test_a_lesion_reruns_the_model_and_clearing_it_restores_the_results():
    at = analyzed()
    before = at.session_state["runs"][0].result.predictions
    passes = service().forward_passes
    at.multiselect(key=ckey(at, "lesion", 0)).set_value([5, 6]).run()
    lesioned = at.session_state["runs"][0]
    assert lesioned.lesion == (5, 6) and service().forward_passes > passes
    assert lesioned.result.predictions != before
    assert any("switched off" in m.value for m in at.markdown)  # the column's title names the lesion
    at.multiselect(key=ckey(at, "lesion", 0)).set_value([]).run()
    assert at.session_state["runs"][0].result.predictions == before and not at.exception


def test_bad_input_gives_a_readable_error_and_the_app_keeps_working():
    at = analyzed("pretrained")  # offline: ImageNet weights cannot be had
    assert any("pretrained weights" in e.value for e in at.error) and not at.exception
    at.radio(key="weights").set_value("random")
    at.button(key="analyze").click().run()
    assert not at.error and len(at.session_state["runs"]) == 2


def opened(tab: str) -> AppTest:
    """The page on its tab `tab` (only the open tab is drawn)."""
    at = AppTest.from_file(SCRIPT, default_timeout=TIMEOUT_S)
    at.session_state["tab"] = tab
    return at.run()


def test_alternet_builder_keeps_step_toggles_and_text_in_step():
    at = opened(ALTERNET_TAB)
    assert at.text_input(key="spec_text").value == "s2:4,s3:2,s3:4,s3:6,s4:2,s4:4"
    at.radio(key="step").set_value(3).run()
    assert at.text_input(key="spec_text").value == "s3:6,s4:2,s4:4"
    assert [b for b in range(2, 5) if at.checkbox(key=f"stage_3_{b}").value] == [2, 4]
    at.checkbox(key="stage_1_4").check().run()  # a custom placement
    assert at.text_input(key="spec_text").value == "s2:4,s3:6,s4:2,s4:4" and at.radio(key="step").value is None
    at.text_input(key="spec_text").set_value("s3:1").run()
    assert any("cannot be an MSA block" in e.value for e in at.error)
    assert at.text_input(key="spec_text").value == "s3:1" and not at.exception
    at.text_input(key="spec_text").set_value("s4:4").run()
    assert at.radio(key="step").value == 1 and not at.error
    assert "**1.89 M** parameters" in " ".join(m.value for m in at.markdown)  # the cost of s4:4 at width 16


def test_streamlit_server_in_the_browser(page, streamlit_url: str, sample_photo: Path, output_dir: Path):
    page.goto(streamlit_url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=TIMEOUT_S * 1000)
    streamlit_upload(page, sample_photo)
    models = page.locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.models.format(count=4))
    for name in OFFLINE_MODELS:  # offline the trained CIFAR models come picked: this test wants the ImageNet pair
        models.get_by_role("button", name=f"Remove {get_spec(name).label}").click()
        streamlit_settled(page)
    for label in ("ResNet-50", "ViT-S/16"):
        models.locator("input").first.click()
        models.locator("input").first.press_sequentially(label)
        page.get_by_role("option", name=label, exact=True).click()
    page.keyboard.press("Escape")
    streamlit_settled(page)
    page.get_by_role("button", name="Analyze").click()
    page.get_by_text("Fourier analysis of feature maps").first.wait_for(timeout=TIMEOUT_S * 1000)
    # two spectra, Figs 8 and 9, the logit lens: only the open tab is drawn
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=TIMEOUT_S * 1000)
    body = page.locator("body").inner_text()
    assert "ResNet-50" in body and "ViT-S/16" in body and "Grad-CAM" in body and "Offline" in body
    assert page.locator("[data-testid=stImage] img").count() >= 2  # two maps
    vit = page.locator("[data-testid=stColumn]").filter(has=page.get_by_role("heading", name="ViT-S/16"))
    with page.expect_download(timeout=TIMEOUT_S * 1000) as started:  # the map's PNG, made when asked for
        vit.get_by_role("button", name=LABEL.map_png).click()
    assert started.value.suggested_filename == "map-vit_small_patch16_224.png"
    map_png = np.asarray(Image.open(started.value.path()))
    square = map_png[: map_png.shape[1]]  # the square overlay (its colour bar under it), not a blank
    assert map_png.shape[0] == map_png.shape[1] + STRIP and square.std() > 1
    page.set_viewport_size({"width": 1440, "height": 4200})  # Streamlit scrolls inside its own container
    page.wait_for_timeout(1500)
    page.screenshot(path=str(output_dir / "streamlit.png"), full_page=True)
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    drawing = page.locator("#alternet-svg")  # Fig 11, drawn (an empty element before)
    drawing.wait_for(timeout=TIMEOUT_S * 1000)
    assert drawing.bounding_box()["width"] > 400 and drawing.locator("rect").count() > 20
    seen = page.locator("[data-testid=stImage]").filter(has_text=LABEL.seen).locator("img")  # the 32x32 input
    seen.wait_for(timeout=TIMEOUT_S * 1000)
    page.screenshot(path=str(output_dir / "streamlit-alternet.png"), full_page=True)

    # a slow map (Occlusion of ResNet-50, 8 batches) stopped after its first batch: said so, with a way to resume
    page.get_by_role("tab", name="Compare models").click()
    resnet = page.locator("[data-testid=stColumn]").filter(has=page.get_by_role("heading", name="ResNet-50"))
    streamlit_pick(page, resnet.get_by_role("combobox", name=LABEL.method), "Occlusion")
    resnet.get_by_text("Occlusion: 1/").first.wait_for(timeout=TIMEOUT_S * 1000)
    resnet.get_by_role("button", name=LABEL.stop_map).click()
    resnet.get_by_text(LABEL.map_stopped).wait_for(timeout=TIMEOUT_S * 1000)
    assert "Occlusion of" not in resnet.inner_text()
    streamlit_settled(page)  # the stopped run ended (as the journey's Compute waits for)
    resnet.get_by_role("button", name=LABEL.compute_map).click()
    resnet.get_by_text("Occlusion of the top-1 class").wait_for(timeout=TIMEOUT_S * 1000)


def test_dataset_curves_of_a_zip_in_the_browser(page, streamlit_url: str, tmp_path: Path, output_dir: Path):
    archive = write_photos_zip(tmp_path / "photos.zip")
    with zipfile.ZipFile(archive, "a") as packed:
        packed.writestr("photos/locked.png", png_bytes(9))
    archive.write_bytes(patch_member(archive.read_bytes(), "photos/locked.png", flags=0x1))  # encrypted
    page.goto(streamlit_url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=TIMEOUT_S * 1000)
    page.get_by_text("Dataset curves: Figs 2a, 8 and 9 over a ZIP of images").click()
    page.locator("[data-testid=stExpander] input[type=file]").set_input_files(str(archive))
    page.get_by_text("photos.zip").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Measure the ZIP").click()
    page.get_by_text("Averaged over the ZIP").wait_for(timeout=TIMEOUT_S * 1000)
    expander = page.locator("[data-testid=stExpander]").filter(has_text="Averaged over the ZIP")
    summary = expander.inner_text()
    first = get_spec(OFFLINE_MODELS[0]).label  # offline the trained CIFAR models come picked
    assert f"{first} · 5 images" in summary and "2 unreadable skipped" in summary and "locked.png" in summary, summary
    assert "Traceback" not in page.locator("body").inner_text()
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=stExpander] .js-plotly-plot').length >= 4",
        timeout=TIMEOUT_S * 1000,
    )
    expander.screenshot(path=str(output_dir / "streamlit-dataset.png"))


@pytest.mark.browser  # the figure is drawn by kaleido's Chromium
def test_figure_export_gives_a_titled_png_for_download():
    at = analyzed()
    figure = at.selectbox(key=f"export_figure_{at.session_state['analysis']}")  # keyed by the analysis
    figure.set_value("Fig 8: high-frequency Δ log amplitude")
    at.button(key="prepare_figure").click().run()
    exported = at.session_state["exported"]
    assert exported.filename == "fig8-high-frequency.png" and not at.exception

    assert Image.open(io.BytesIO(exported.data)).size == (2400, 1400)
    assert at.get("download_button")  # the download is offered
    at.radio(key="export_format").set_value("svg")
    at.button(key="prepare_figure").click().run()
    svg = at.session_state["exported"].data.decode()
    assert f"on {at.session_state['photo_name']}" in svg  # the slide names the photo its curves were measured on
    at.session_state["tab"] = ALTERNET_TAB
    at.run()
    assert at.session_state["alternet_view"].measured.startswith(f"on {at.session_state['photo_name']}, resized")


@pytest.mark.browser  # its handout PDF is printed by a real headless Chromium
def test_the_teaching_pack_shows_each_map_as_chosen_on_screen():
    at = analyzed()
    at.slider(key=ckey(at, "layer", 1)).set_value(3).run()
    at.selectbox(key=ckey(at, "head", 1)).set_value("2").run()
    at.button(key="prepare_pack").click().run()
    exported = at.session_state["exported"]
    with zipfile.ZipFile(io.BytesIO(exported.data)) as archive:
        html = archive.read("handout.html").decode()
        assert archive.read("handout.pdf").startswith(b"%PDF")  # and its print (tests/test_handout_pdf.py)
    assert exported.filename == "teaching-pack.zip" and not at.exception
    assert "layer 3/12" in html and "head 2/3" in html and "Grad-CAM of the top-1 class" in html


def test_the_pickers_offer_no_bulk_selection_past_their_limits():
    at = analyzed()
    assert at.multiselect(key="models").proto.max_selections == 4
    assert at.multiselect(key="models").proto.select_all == 0
    assert at.multiselect(key=ckey(at, "lesion", 0)).proto.select_all == 0


def test_a_new_analysis_starts_from_fresh_view_and_lesion_settings():
    at = analyzed()
    at.slider(key=ckey(at, "layer", 1)).set_value(3).run()
    at.multiselect(key=ckey(at, "lesion", 0)).set_value([5]).run()
    assert at.session_state["runs"][0].lesion == (5,)
    at.button(key="analyze").click().run()
    assert at.session_state["runs"][0].lesion == () and at.multiselect(key=ckey(at, "lesion", 0)).value == []
    assert at.slider(key=ckey(at, "layer", 1)).value == 12 and not at.exception  # ViT-Ti's last layer, the default


@pytest.mark.browser  # the exported figures are drawn by kaleido's Chromium
def test_alternet_averages_stay_on_screen_and_are_what_is_exported():
    at = opened(ALTERNET_TAB)
    at.slider(key="subset_count").set_value(20).run()
    at.button(key="subset").click().run()
    assert at.session_state["alternet_view"].run.images == 20
    at.slider(key="subset_count").set_value(30).run()  # an unrelated change: the averages stay
    assert at.session_state["alternet_view"].run.images == 20
    assert any("mean over 20 CIFAR-10 test images" in m.value for m in at.markdown)
    at.button(key="alternet_export").click().run()
    assert at.session_state["alternet_exported"].filename.startswith("alternet-") and not at.exception

"""A first-time user's walk through each front end in a real headless Chromium, on the sample photo: analyze
ResNet-50 and ViT-Ti/16 with random weights, explore the ViT's layers, heads and rollout, switch a ResNet unit
off, build an AlterNet (a bad spec, then a good one), average it over CIFAR-10 test images, and export the
AlterNet figures and the teaching pack. Screenshots of each step go to test-output/walk-*.png."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from app.backend.service import OFFLINE_MODELS
from app.views.texts import LABEL
from engine.models.registry import get_spec
from tests.conftest import streamlit_settled, streamlit_upload
from tests.helpers.pages import analyze_resnet_and_vit, gradio_errors, streamlit_pick

MINUTE_MS = 60_000
ANALYSIS_MS = 10 * MINUTE_MS  # two CPU cores shared with other work: an analysis or a subset run can take minutes
REDRAW_MS = 3 * MINUTE_MS
TWO_DECIMALS = re.compile(r"\(\d+\.\d\d%\)")  # "(0.24%)": random-weight probabilities, not five times "0%"
BAD_SPEC, GOOD_SPEC = "s1:1,s9:2", "s3:6,s4:2,s4:4"
PAPER_SPEC = "s2:4,s3:2,s3:4,s3:6,s4:2,s4:4"
DRAWING = "AlterNet architecture, MSA blocks {spec}"  # Fig 11's aria-label
SUBSET = 20
MEAN_OVER = f"mean over {SUBSET} CIFAR-10 test images"
ALTERNET_ZIP = "alternet-s3b6-s4b2-s4b4.zip"


def downloaded(page: Page, control: Locator, name: str, tmp_path: Path) -> zipfile.ZipFile:
    """Click a download link or button and open what the browser saves as a ZIP."""
    with page.expect_download(timeout=ANALYSIS_MS) as started:
        control.click()
    download = started.value
    assert download.suggested_filename == name
    path = tmp_path / name
    download.save_as(path)
    return zipfile.ZipFile(path)


def check_handout(pack: zipfile.ZipFile, photo: str) -> None:
    """The handout shows the maps as chosen on screen: ViT-Ti's layer 3, head 2, and the lesioned ResNet; it and
    its slides name the `photo` analyzed."""
    html = pack.read("handout.html").decode()
    assert "layer 3/12" in html and "head 2/3" in html, html[:2000]
    assert "layer2.1 switched off" in html
    assert f"Made with the ViT explorer on {photo}." in html
    assert f"on {photo} · " in pack.read("figures/fig9-variance.svg").decode()


# Gradio


def test_gradio_walkthrough(page: Page, server_url: str, sample_photo: Path, output_dir: Path, tmp_path: Path):
    def shot(step: str) -> None:
        page.screenshot(path=str(output_dir / f"walk-gradio-{step}.png"), full_page=True)

    # 1. the photo, two models, random weights, Analyze: both columns show a map, the warning and readable top-5s
    page.goto(server_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=MINUTE_MS)
    analyze_resnet_and_vit(page, sample_photo, ANALYSIS_MS)
    for slot in (0, 1):
        column = page.locator(f"#model-{slot}")
        assert column.locator(f"#view-{slot} img").first.get_attribute("src")
        assert "random weights (seed" in column.inner_text()  # the warning under the model's name
        labels = column.locator("[data-testid=label] dt").all_inner_texts()
        assert len(labels) == 5 and all(TWO_DECIMALS.search(label) for label in labels), labels
    assert "ResNet-50" in page.locator("#model-0 h3").inner_text()
    assert "ViT-Ti/16" in page.locator("#model-1 h3").inner_text()
    assert not gradio_errors(page)
    shot("1-analyzed")

    # 1b. Stop shows only while a map is computed: a slow one (Occlusion, 8 batches) stopped, then Grad-CAM again
    resnet = page.locator("#model-0")
    stop = resnet.get_by_role("button", name=LABEL.stop_map)
    expect(stop).to_be_hidden()
    resnet.get_by_role("combobox", name=LABEL.method).click()
    page.get_by_role("option", name="Occlusion", exact=True).click()
    expect(stop).to_be_visible(timeout=REDRAW_MS)
    # the map's work begun and the column laid out for it (its first progress shown): a Stop clicked the moment it
    # showed once stopped nothing, the map drawn in full
    expect(resnet.get_by_text(re.compile(r"Occlusion: \d+/")).first).to_be_visible(timeout=REDRAW_MS)
    stop.click()
    expect(stop).to_be_hidden(timeout=REDRAW_MS)
    assert "Occlusion of" not in resnet.locator(".caption").first.inner_text()
    resnet.get_by_role("combobox", name=LABEL.method).click()
    page.get_by_role("option", name="Grad-CAM", exact=True).click()
    expect(resnet.locator(".caption").first).to_contain_text("Grad-CAM of the top-1 class", timeout=REDRAW_MS)
    expect(stop).to_be_hidden()

    # 2. the ViT column: layer 3, head 2, then rollout (layer and head stop applying), then back
    vit = page.locator("#model-1")
    caption = vit.locator(".caption").first
    layer = vit.get_by_label("number input for Layer")
    slider = vit.get_by_label("range slider for Layer")
    head = vit.get_by_role("combobox", name=LABEL.head, exact=True)
    rollout = vit.get_by_label(LABEL.rollout)
    layer.fill("3")
    layer.press("Enter")
    expect(caption).to_contain_text("layer 3/12", timeout=REDRAW_MS)
    head.click()
    page.get_by_role("option", name="2", exact=True).click()
    expect(caption).to_contain_text("head 2/3", timeout=REDRAW_MS)
    assert "layer 3/12" in caption.inner_text()
    rollout.check()
    expect(caption).to_contain_text("Attention rollout", timeout=REDRAW_MS)
    for control in (layer, slider, head):
        expect(control).to_be_disabled(timeout=REDRAW_MS)
    vit.screenshot(path=str(output_dir / "walk-gradio-2-rollout.png"))
    rollout.uncheck()
    expect(caption).to_contain_text("layer 3/12", timeout=REDRAW_MS)
    assert "head 2/3" in caption.inner_text()
    for control in (layer, slider, head):
        expect(control).to_be_enabled(timeout=REDRAW_MS)

    # 3. a lesion: unit 5 of the ResNet switched off; the ViT column keeps its layer and head
    page.locator("#lesion-0 input").click()
    page.get_by_role("option", name="5 layer2.1 (conv)").click()
    page.keyboard.press("Escape")
    resnet = page.locator("#model-0")
    expect(resnet.locator("h3")).to_contain_text("layer2.1 switched off", timeout=ANALYSIS_MS)
    labels = resnet.locator("[data-testid=label] dt").all_inner_texts()
    assert len(labels) == 5 and all(TWO_DECIMALS.search(label) for label in labels), labels
    assert "layer 3/12" in caption.inner_text() and "head 2/3" in caption.inner_text()
    assert not gradio_errors(page)
    shot("3-lesion")

    # 4. AlterNet: a bad spec is named inline, with no error over the builder; a good one redraws Fig 11
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    drawing = page.locator("#alternet-svg")
    expect(drawing).to_have_attribute("aria-label", DRAWING.format(spec=PAPER_SPEC), timeout=ANALYSIS_MS)
    page.locator("#alternet-variance .js-plotly-plot").wait_for(timeout=ANALYSIS_MS)
    spec = page.locator("#alternet-spec textarea, #alternet-spec input").first
    problem = page.locator("#alternet-spec-problem")
    spec.fill(BAD_SPEC)
    spec.press("Enter")  # the box applies on Enter (its label says so)
    expect(problem).to_be_visible(timeout=REDRAW_MS)
    expect(problem).to_contain_text("'s1:1'")
    expect(problem).to_contain_text("'s9:2'")
    controls = page.locator("#alternet-step input, [id^=alternet-stage-] input, #alternet-spec textarea")
    assert controls.count() >= 7 + 12 + 1
    assert all(control.is_enabled() for control in controls.all())
    expect(page.locator("#alternet-step").get_by_label("6", exact=True)).to_be_checked()  # kept as they were
    expect(drawing).to_have_attribute("aria-label", DRAWING.format(spec=PAPER_SPEC))
    page.locator("#alternet-step").get_by_label("3", exact=True).click(trial=True)  # nothing covers the controls
    spec.click(trial=True)
    assert not gradio_errors(page)
    shot("4-bad-spec")
    spec.fill(GOOD_SPEC)
    spec.press("Enter")
    expect(drawing).to_have_attribute("aria-label", DRAWING.format(spec=GOOD_SPEC), timeout=ANALYSIS_MS)
    expect(problem).to_be_hidden(timeout=REDRAW_MS)
    expect(page.locator("#alternet-step").get_by_label("3", exact=True)).to_be_checked()
    assert drawing.locator('rect[fill="#b8b8b8"]').count() == 3 + 1  # three gray MSA blocks and the legend's
    expect(page.locator("#alternet-source")).to_contain_text(f"MSA blocks {GOOD_SPEC}", timeout=ANALYSIS_MS)
    assert not gradio_errors(page)  # nor did the bad spec's queued update fail
    page.locator("#alternet-drawing").screenshot(path=str(output_dir / "walk-gradio-4-good-spec.png"))

    # 5. averages over 20 CIFAR-10 test images: they stay on screen, and the figures export
    count = page.get_by_label(f"number input for {LABEL.subset_count}")
    count.fill(str(SUBSET))
    count.press("Enter")
    page.locator("#alternet-average").click()
    source = page.locator("#alternet-source")
    expect(source).to_contain_text(MEAN_OVER, timeout=ANALYSIS_MS)
    expect(page.locator("#alternet-accuracy")).to_contain_text(f"{SUBSET} CIFAR-10 test images")
    for plot in ("alternet-high-frequency", "alternet-variance"):
        assert page.locator(f"#{plot} .js-plotly-plot .scatterlayer .trace").count() >= 3
    page.locator("#alternet-export").click()
    link = page.locator("#alternet-export-file a[download]").first
    link.wait_for(timeout=ANALYSIS_MS)
    with downloaded(page, link, ALTERNET_ZIP, tmp_path) as archive:
        assert "fig11-alternet-s3b6-s4b2-s4b4.svg" in archive.namelist()
    assert MEAN_OVER in source.inner_text()  # the export did not replace the averages
    assert not gradio_errors(page)
    shot("5-averages")

    # 6. back on the Compare tab: the teaching pack, with the maps as chosen on screen
    page.get_by_role("tab", name="Compare models").click()
    page.get_by_text(LABEL.exports).click()
    page.locator("#export-pack").click()
    link = page.locator("#export-file a[download]").first
    link.wait_for(timeout=ANALYSIS_MS)
    with downloaded(page, link, "teaching-pack.zip", tmp_path) as pack:
        check_handout(pack, sample_photo.name)
    assert not gradio_errors(page)
    shot("6-pack")
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    expect(source).to_contain_text(MEAN_OVER)  # the averages are still there


# Streamlit


def streamlit_column(page: Page, title: str) -> Locator:
    """A model's column of the Compare tab, by the start of its title (its h3; not by role: while a select's typed
    filter is open, the page hides the rest from screen readers, headings included)."""
    return page.locator("[data-testid=stColumn]").filter(has=page.locator("h3").filter(has_text=title))


def top5(column: Locator) -> list[str]:
    """The labels of a column's top-5 bars (a progress bar of a map being computed has none)."""
    return [label for label in column.locator("[data-testid=stProgress]").all_inner_texts() if label.strip()]


def type_into(select: Locator, text: str) -> None:
    """Type into a select's box, key by key as a user does, to filter its options (and open them)."""
    select.click(timeout=ANALYSIS_MS)  # a busy machine may still be drawing the page (a rerun of every column)
    select.press_sequentially(text, timeout=REDRAW_MS)


def no_exception(page: Page) -> None:
    shown = page.locator("[data-testid=stException]")
    assert shown.count() == 0, shown.all_inner_texts()


def test_streamlit_walkthrough(
    page: Page,
    streamlit_url: str,  # noqa: F811
    sample_photo: Path,
    output_dir: Path,
    tmp_path: Path,
):
    def shot(step: str, part: Locator | None = None) -> None:
        """The whole page, or `part` of it: Streamlit scrolls inside its own container, so the viewport is
        made as tall as the page for the picture."""
        height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
        page.set_viewport_size({"width": 1440, "height": min(max(height, 1000), 12_000)})
        page.wait_for_timeout(1000)  # the charts re-lay out to the new size
        path = str(output_dir / f"walk-streamlit-{step}.png")
        if part is None:
            page.screenshot(path=path, full_page=True)
        else:
            part.screenshot(path=path)
        page.set_viewport_size({"width": 1440, "height": 1000})

    # 1. the photo, two models, random weights, Analyze: both columns show a map, the warning and readable top-5s
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(streamlit_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=ANALYSIS_MS)
    streamlit_upload(page, sample_photo)
    models = page.locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.models.format(count=4))
    for name in OFFLINE_MODELS:  # offline the trained CIFAR models come picked: this walk-through wants two others
        models.get_by_role("button", name=f"Remove {get_spec(name).label}").click()
        streamlit_settled(page)
    for typed, label in (("ResNet-50", "ResNet-50"), ("ViT-Ti", "ViT-Ti/16")):
        type_into(models.locator("input").first, typed)
        page.get_by_role("option", name=label, exact=True).click()
    page.keyboard.press("Escape")
    expect(models).to_contain_text("ViT-Ti/16")
    page.get_by_text("random (seeded)").click()
    expect(page.get_by_role("radio", name="random (seeded)")).to_be_checked()
    streamlit_settled(page)
    page.get_by_role("button", name=LABEL.analyze).click()
    page.get_by_role("heading", name="ViT-Ti/16").wait_for(timeout=ANALYSIS_MS)
    resnet, vit = streamlit_column(page, "ResNet-50"), streamlit_column(page, "ViT-Ti/16")
    for column in (resnet, vit):
        column.locator("[data-testid=stImage] img").first.wait_for(timeout=ANALYSIS_MS)
        assert column.locator("[data-testid=stImage] img").first.get_attribute("src")
        assert "random weights (seed" in column.inner_text()  # the warning under the model's name
        labels = top5(column)
        assert len(labels) == 5 and all(TWO_DECIMALS.search(label) for label in labels), labels
    no_exception(page)
    shot("1-analyzed")

    # 2. the ViT column: layer 3, head 2, then rollout (the head select is disabled), then back
    caption = vit.locator("[data-testid=stImageCaption]").first
    slider = vit.get_by_role("slider", name=LABEL.layer)
    head = vit.get_by_role("combobox", name=LABEL.head, exact=True)
    slider.focus()
    for key in ("Home", "ArrowRight", "ArrowRight"):  # 1, 2, 3
        slider.press(key)
    expect(caption).to_contain_text("layer 3/12", timeout=REDRAW_MS)
    streamlit_pick(page, head, "2")
    expect(caption).to_contain_text("head 2/3", timeout=REDRAW_MS)
    assert "layer 3/12" in caption.inner_text()
    streamlit_settled(page)
    vit.get_by_text(LABEL.rollout).click()
    expect(caption).to_contain_text("Attention rollout", timeout=REDRAW_MS)
    expect(head).to_be_disabled(timeout=REDRAW_MS)
    shot("2-rollout", vit)
    streamlit_settled(page)
    vit.get_by_text(LABEL.rollout).click()
    expect(caption).to_contain_text("layer 3/12", timeout=REDRAW_MS)
    assert "head 2/3" in caption.inner_text()
    expect(head).to_be_enabled(timeout=REDRAW_MS)

    # 3. a lesion: unit 5 of the ResNet switched off; the ViT column keeps its layer and head
    streamlit_settled(page)
    type_into(resnet.locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.lesion).locator("input"), "layer2.1")
    page.get_by_role("option", name="5 layer2.1 (conv)").click()
    page.keyboard.press("Escape")
    page.get_by_role("heading", name="ResNet-50 · layer2.1 switched off").wait_for(timeout=ANALYSIS_MS)
    streamlit_settled(page)
    labels = top5(resnet)
    assert len(labels) == 5 and all(TWO_DECIMALS.search(label) for label in labels), labels
    expect(caption).to_contain_text("head 2/3", timeout=REDRAW_MS)
    assert "layer 3/12" in caption.inner_text()
    no_exception(page)
    shot("3-lesion")
    # The shading picker names each model as before any lesion, so it stays valid and the page keeps working.
    streamlit_settled(page)
    type_into(page.get_by_role("combobox", name=LABEL.shaded).last, "ViT")
    page.get_by_role("option", name="ViT-Ti/16").click()
    streamlit_settled(page)
    no_exception(page)

    # 4. AlterNet: a bad spec is named inline; a good one clears it and redraws Fig 11
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    drawing = page.locator("#alternet-svg")
    expect(drawing).to_have_attribute("aria-label", DRAWING.format(spec=PAPER_SPEC), timeout=ANALYSIS_MS)
    spec = page.get_by_label(LABEL.spec)
    spec.fill(BAD_SPEC)
    spec.press("Enter")
    problem = page.locator("[data-testid=stAlert]").filter(has_text="'s9:2'")
    problem.wait_for(timeout=REDRAW_MS)
    assert "'s1:1'" in problem.inner_text()
    assert spec.input_value() == BAD_SPEC and spec.is_enabled()
    expect(drawing).to_have_attribute("aria-label", DRAWING.format(spec=PAPER_SPEC))
    no_exception(page)
    shot("4-bad-spec")
    streamlit_settled(page)
    spec.fill(GOOD_SPEC)
    spec.press("Enter")
    expect(drawing).to_have_attribute("aria-label", DRAWING.format(spec=GOOD_SPEC), timeout=ANALYSIS_MS)
    problem.wait_for(state="detached", timeout=REDRAW_MS)
    assert drawing.locator('rect[fill="#b8b8b8"]').count() == 3 + 1  # three gray MSA blocks and the legend's
    no_exception(page)
    shot("4-good-spec", drawing)
    streamlit_settled(page)

    # 5. averages over 20 CIFAR-10 test images: they stay on screen, and the figures export
    count = page.get_by_role("slider", name=LABEL.subset_count)
    count.focus()
    for key in ("Home", "ArrowRight"):  # 10, 20
        count.press(key)
    expect(count).to_have_attribute("aria-valuetext", str(SUBSET), timeout=REDRAW_MS)
    streamlit_settled(page)
    page.get_by_role("button", name=LABEL.subset).click()
    page.get_by_text(MEAN_OVER).first.wait_for(timeout=ANALYSIS_MS)
    page.get_by_text(f"Top-1 accuracy on these {SUBSET} CIFAR-10 test images").wait_for(timeout=REDRAW_MS)
    streamlit_settled(page)
    page.get_by_role("button", name=LABEL.alternet_export).click()
    offered = page.get_by_role("button", name=f"Download {ALTERNET_ZIP}")
    offered.wait_for(timeout=ANALYSIS_MS)
    with downloaded(page, offered, ALTERNET_ZIP, tmp_path) as archive:
        assert "fig11-alternet-s3b6-s4b2-s4b4.svg" in archive.namelist()
    assert page.get_by_text(MEAN_OVER).count() == 1  # the export did not replace the averages
    no_exception(page)
    shot("5-averages")

    # 6. back on the Compare tab: the teaching pack, with the maps as chosen on screen
    streamlit_settled(page)
    page.get_by_role("tab", name="Compare models").click()
    page.get_by_text(LABEL.exports).click()
    page.get_by_role("button", name=LABEL.export_pack).click()
    offered = page.get_by_role("button", name="Download teaching-pack.zip")
    offered.wait_for(timeout=ANALYSIS_MS)
    with downloaded(page, offered, "teaching-pack.zip", tmp_path) as pack:
        check_handout(pack, sample_photo.name)
    no_exception(page)
    shot("6-pack")
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    page.get_by_text(MEAN_OVER).first.wait_for(timeout=REDRAW_MS)  # the averages are still there

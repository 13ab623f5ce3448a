"""The page in a real headless Chromium: upload a photo, analyze, see every panel; screenshot."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.helpers.gradio_http import gradio_client
from tests.helpers.pages import analyze_resnet_and_vit, trace_count

ANALYSIS_TIMEOUT_MS = 180_000


def test_upload_analyze_and_every_panel_renders(page, server_url: str, sample_photo: Path, output_dir: Path):
    page.goto(server_url)
    page.get_by_role("button", name="Analyze").wait_for()
    analyze_resnet_and_vit(page, sample_photo, ANALYSIS_TIMEOUT_MS)

    assert trace_count(page, "spectrum-0") >= 17 and trace_count(page, "spectrum-1") >= 25
    assert trace_count(page, "high-frequency") >= 2 and trace_count(page, "variance") >= 2
    for slot in (0, 1):
        assert page.locator(f"#view-{slot} img").first.get_attribute("src")
        assert "random weights" in page.locator(f"#model-{slot}").inner_text()
    assert "Grad-CAM" in page.locator("#model-0").inner_text()
    assert "CLS attention" in page.locator("#model-1").inner_text()
    assert page.locator("#banner").is_visible()  # the test server runs offline
    page.screenshot(path=str(output_dir / "app.png"), full_page=True)

    client = gradio_client(server_url)
    passes = client.predict(api_name="/forward_passes")
    before = page.locator("#view-1 img").first.get_attribute("src")
    page.get_by_label("Colormap").click()
    page.get_by_role("option", name="viridis").click()
    page.wait_for_function(
        "before => document.querySelector('#view-1 img').getAttribute('src') !== before", arg=before, timeout=30_000
    )
    assert client.predict(api_name="/forward_passes") == passes

    page.locator("#lesion-0 input").click()
    page.get_by_role("option", name="5 layer2.1 (conv)").click()
    page.locator("#model-0").get_by_text("layer2.1 switched off").first.wait_for(timeout=ANALYSIS_TIMEOUT_MS)
    assert client.predict(api_name="/forward_passes") > passes  # a lesion does re-run the model

    page.locator("#image-input input[type=file]").set_input_files(str(Path(sample_photo).with_name("coffee.jpg")))
    expect(page.locator("#status")).to_contain_text("for the previous photo", timeout=30_000)  # results kept, said so
    assert "layer2.1 switched off" in page.locator("#model-0").inner_text()


def test_a_file_that_is_not_an_image_is_named_in_a_plain_message(page, server_url: str, tmp_path: Path, output_dir):
    bad = tmp_path / "notes.jpg"
    bad.write_text("this is not a photo")
    client = gradio_client(server_url)
    passes = client.predict(api_name="/forward_passes")
    page.goto(server_url)
    page.get_by_role("button", name="Analyze").wait_for()
    page.locator("input[type=file]").first.set_input_files(str(bad))
    page.get_by_role("button", name="Analyze").click()
    toasts = page.locator(".toast-body.error")
    toasts.first.wait_for(timeout=ANALYSIS_TIMEOUT_MS)
    page.wait_for_timeout(1000)  # every listener of the upload has answered
    shown = toasts.all_inner_texts()
    assert all("notes.jpg: not an image" in text for text in shown), shown
    assert not any("/tmp" in text or "preprocess" in text or "Error:" in text for text in shown), shown  # no path
    page.screenshot(path=str(output_dir / "bad-upload.png"))
    assert client.predict(api_name="/forward_passes") == passes  # the server keeps serving, and ran no model on it

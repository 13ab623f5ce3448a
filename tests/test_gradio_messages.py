"""Gradio's messages in a real headless Chromium: an error toast is plain text (a typed spec's markup
is not drawn), a bad spec is logged once, an error toast does not outlive a later successful Analyze, and a
refused file says so on the status line, and its preview is a line, not a broken image."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from app.backend.service import AUTO, WEIGHT_LABELS
from app.gradio_ui.photo import UNSHOWN
from app.views.texts import LABEL
from tests.conftest import Server
from tests.helpers.pages import CIFAR, TIMEOUT_MS, open_page, press_analyze

MARKUP_SPEC = "s1:1,s5:2,s3:9,foo<b>x</b><img src=x onerror=alert(1)>"


def alternet_spec(page, server_url: str, typed: str) -> None:
    """The AlterNet tab with `typed` in its spec box (not applied)."""
    page.goto(server_url)
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    page.locator("#alternet-spec textarea, #alternet-spec input").first.fill(typed)


def error_toast(page):
    toast = page.locator(".toast-body.error").last
    expect(toast).to_be_visible(timeout=TIMEOUT_MS)
    return toast


def test_a_spec_with_markup_is_shown_as_text_in_the_error_toast(page, server_url: str):
    alternet_spec(page, server_url, MARKUP_SPEC)
    page.locator("#alternet-average").click()
    toast = error_toast(page)
    assert toast.locator("b, img").count() == 0, toast.inner_html()
    assert "foo<b>x</b><img src=x" in toast.inner_text()


def test_the_spec_format_is_shown_whole_in_the_error_toast(page, server_url: str):
    alternet_spec(page, server_url, "s1:1,s5:2,s3:9,foo")
    page.locator("#alternet-average").click()
    shown = error_toast(page).inner_text()
    assert "expected s<stage>:<block>, 1-based, e.g. 's3:6'" in shown, shown


def test_a_bad_spec_is_logged_once(page, server: Server):
    typed = "zz37once"  # named at the start of the logged line (which is cut at 200 characters)
    alternet_spec(page, server.url, typed)
    box = page.locator("#alternet-spec textarea, #alternet-spec input").first
    box.press("Enter")
    expect(page.locator("#alternet-spec-problem")).to_contain_text(typed, timeout=TIMEOUT_MS)
    page.locator("#alternet-average").click()
    error_toast(page)
    page.wait_for_timeout(2000)  # every listener has answered
    logged = [line for line in server.log.read_text().splitlines() if "refused" in line and f"'{typed}'" in line]
    assert len(logged) == 1, logged


def test_a_successful_analyze_closes_an_earlier_error_toast(page, server_url: str, sample_photo):
    open_page(page, server_url, sample_photo, ("resnet50",))
    page.get_by_label(WEIGHT_LABELS["pretrained"]).check()  # offline: ResNet-50's pretrained weights cannot be had
    page.get_by_role("button", name=LABEL.analyze).click()
    expect(error_toast(page)).to_contain_text("pretrained", timeout=TIMEOUT_MS)
    for box in page.locator("#models input[type=checkbox]").all():
        box.set_checked(box.get_attribute("name") in CIFAR[:1])
    page.get_by_label(WEIGHT_LABELS[AUTO]).check()
    press_analyze(page)
    expect(page.locator(".toast-body.error")).to_have_count(0, timeout=5_000)


def chose_a_file_that_is_not_a_photo(page, server_url: str, tmp_path: Path) -> None:
    """A fresh page given notes.jpg, a text file, as its photo."""
    bad = tmp_path / "notes.jpg"
    bad.write_text("this is not a photo")
    page.goto(server_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for()
    page.locator("#image-input input[type=file]").set_input_files(str(bad))


def test_a_refused_file_is_named_on_the_status_line_uncovered(page, server_url: str, tmp_path: Path):
    chose_a_file_that_is_not_a_photo(page, server_url, tmp_path)
    page.get_by_role("button", name=LABEL.analyze).click()
    status = page.locator("#status")
    expect(status).to_contain_text("notes.jpg: not an image, or a format that cannot be read", timeout=TIMEOUT_MS)
    page.wait_for_timeout(2000)  # every listener of the upload and the Analyze has answered
    assert "new photo" not in status.inner_text(), status.inner_text()
    pills = [pill for pill in status.locator(".error").all() if pill.is_visible()]
    assert not pills, [pill.inner_text() for pill in pills]


def test_a_file_that_is_not_an_image_is_named_once_in_one_toast(page, server_url: str, tmp_path: Path):
    chose_a_file_that_is_not_a_photo(page, server_url, tmp_path)
    expect(page.locator("#image-input .unshown")).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_timeout(2000)  # the AlterNet tab's curves follow the photo: they have answered, without a toast
    expect(page.locator(".toast-body")).to_have_count(0)
    for _ in range(2):  # Analyze, and Analyze again: one message each time, the line once
        page.get_by_role("button", name=LABEL.analyze).click()
        expect(page.locator("#status")).to_contain_text("notes.jpg: not an image", timeout=TIMEOUT_MS)
        page.wait_for_timeout(1500)  # the toast of the Analyze before, closed as this one was sent, has gone
        lines = page.locator(".toast-body [data-testid=toast-text]")
        expect(lines).to_have_count(1, timeout=TIMEOUT_MS)
        expect(lines).to_have_text("notes.jpg: not an image, or a format that cannot be read")
        assert page.locator(".toast-body .toast-count").count() == 0  # no "Error (2)"


def test_a_file_the_browser_cannot_show_has_a_line_not_a_broken_preview(
    page, server_url: str, sample_photo, tmp_path: Path, output_dir: Path
):
    bad = tmp_path / "notes.jpg"
    bad.write_text("this is not a photo")
    page.goto(server_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for()
    upload = page.locator("#image-input input[type=file]")
    upload.set_input_files(str(bad))
    preview = page.locator("#image-input")
    expect(preview.locator(".unshown")).to_have_text(UNSHOWN, timeout=TIMEOUT_MS)
    expect(preview.locator("img").first).to_be_hidden()
    preview.screenshot(path=str(output_dir / "gradio_unshown_preview.png"))
    preview.get_by_role("button", name="Remove Image").click()  # the preview's x: the line goes with it
    expect(preview.locator(".unshown")).to_have_count(0, timeout=TIMEOUT_MS)
    upload.set_input_files(str(bad))
    expect(preview.locator(".unshown")).to_have_count(1, timeout=TIMEOUT_MS)
    upload.set_input_files(str(sample_photo))  # a photo replaces the file: shown, and the line is gone
    expect(preview.locator("img").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(preview.locator(".unshown")).to_have_count(0)


def test_an_analyze_pressed_during_a_slow_upload_never_calls_its_results_stale(
    page, server_url, sample_photo, tmp_path
):
    import numpy as np
    from PIL import Image

    big = tmp_path / "big.jpg"  # 7 MB of noise: over a slow link its upload takes seconds
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (3000, 4000, 3), dtype=np.uint8)).save(big, quality=90)
    open_page(page, server_url, sample_photo, CIFAR)
    press_analyze(page)
    page.evaluate(  # every text the status line shows from now on
        """() => { const status = document.querySelector('#status'); window.__seen = [];
        new MutationObserver(() => window.__seen.push(status.innerText))
            .observe(status, {subtree: true, childList: true, characterData: true}); }"""
    )
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    # a slow upload, a fast preview: the new photo is on screen while its analysis runs
    slow = {"offline": False, "latency": 50, "downloadThroughput": -1, "uploadThroughput": 1e6}
    cdp.send("Network.emulateNetworkConditions", slow)
    try:
        page.locator("#image-input input[type=file]").set_input_files(str(big))
        page.get_by_role("button", name=LABEL.analyze).click()
        page.wait_for_function(  # its analysis ran (a timer showed) and ended (the status line without one)
            """() => { const seen = window.__seen.map((text) => text.trim());
            const started = seen.findIndex((text) => text.includes('%'));
            return started >= 0 && seen.slice(started).some((text) => text.startsWith('Analyzed')); }""",
            timeout=TIMEOUT_MS,
            polling=100,
        )
    finally:
        cdp.send(
            "Network.emulateNetworkConditions", {**slow, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        )
    page.wait_for_timeout(3000)
    seen = page.evaluate("() => window.__seen")
    assert not any("previous photo" in text for text in seen), seen
    assert "previous photo" not in page.locator("#status").inner_text()

"""The journey by keyboard alone, in a real headless Chromium through both front ends: Tab and Shift-Tab move, Enter,
Space, arrows and typing act; nothing is clicked. A photo is uploaded through the file dialog that Enter or Space
opens on the upload control (and focus stays on the photo's widget after it), a model is taken off, Analyze, the
first column's map changed, the tour's Next, a figure exported. Every control that takes focus on the way shows a
ring at least 2 px wide, and at each control acted on the ring's colour has at least 3:1 contrast to the page."""

from __future__ import annotations

import re
import time
from pathlib import Path

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.views.page_style import FOCUS_WIDTH_PX
from app.views.texts import LABEL
from tests.conftest import Server, streamlit_settled
from tests.helpers.pages import streamlit_settled_twice

ANALYSIS_MS = 15 * 60_000
PRESSES = 150  # the most Tab presses from one control to the next one wanted
VIT = "ViT/4 (CIFAR"
PAGE_CLOSED = "a page closed:"
SAMPLES_SHOWN = """() => { const shown = [...document.querySelectorAll('#sample-photos img')];
    return shown.length === 3 && shown.every((img) => img.complete && img.naturalWidth > 0); }"""
FOCUSED = """() => {
    const e = document.activeElement;
    if (!e || e === document.body) return null;
    const label = e.closest('label');
    const ring = (el) => { const s = getComputedStyle(el);
        return s.outlineStyle === 'none' ? [0, ''] : [parseFloat(s.outlineWidth), s.outlineColor]; };
    const [own, ownColour] = ring(e), [held, heldColour] = label ? ring(label) : [0, ''];
    const name = e.getAttribute('aria-label') || (label ? label.innerText : '') || e.innerText || e.value || '';
    return {name: name.replace(/\\s+/g, ' ').trim(), role: e.getAttribute('role') || e.type || e.tagName.toLowerCase(),
            width: Math.max(own, held), colour: own >= held ? ownColour : heldColour, tag: e.tagName}; }"""


def luminance(colour: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", colour)[:3])
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


class Keyboard:
    """Moves focus with Tab (or Shift-Tab) until the wanted control has it, checking every ring on the way."""

    def __init__(self, page: Page) -> None:
        self.page, self.rings = page, []

    def to(self, name: str | re.Pattern, role: str = "", back: bool = False) -> dict:
        wanted = re.compile(re.escape(name)) if isinstance(name, str) else name
        for _ in range(PRESSES):
            self.page.keyboard.press("Shift+Tab" if back else "Tab")
            focused = self.page.evaluate(FOCUSED)
            if focused is None or focused["tag"] in ("MAIN", "BODY"):
                continue
            self.rings.append((focused["name"][:40], focused["width"]))
            assert focused["width"] >= 2, f"no focus ring on {focused}"
            if wanted.search(focused["name"]) and (not role or focused["role"] == role):
                self.page.wait_for_timeout(400)  # the ring's colour eases in (Gradio's buttons)
                focused = self.page.evaluate(FOCUSED)
                background = self.page.evaluate("() => getComputedStyle(document.body).backgroundColor")
                assert contrast(focused["colour"], background) >= 3, focused
                return focused
        seen = [name for name, _ in self.rings[-PRESSES:]]
        raise AssertionError(f"no control named {wanted.pattern!r} ({role or 'any role'}) in {PRESSES} presses: {seen}")

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)


OPENED = (
    "() => document.activeElement?.getAttribute('role') !== 'tab' || document.activeElement.ariaSelected === 'true'"
)


def focused_tab_opened(page: Page) -> None:
    """The tab with focus is the one open once the page has settled, as a person sees it. Streamlit 1.67 can show
    another after an arrow: a run begun for the tab before sends that tab's index with its tabs, and the page goes
    back to it (a tab moved to while its run is being asked for does not open at all); Enter on the focused tab
    then opens it, as that person would press."""
    for _ in range(5):
        try:
            page.wait_for_function(OPENED, timeout=10_000)
        except PlaywrightTimeout:
            pass
        streamlit_settled_twice(page)
        if page.evaluate(OPENED):
            return
        page.keyboard.press("Enter")
    shown = page.locator("[role=tab][aria-selected=true]").inner_text()
    raise AssertionError(f"the focused tab {page.evaluate(FOCUSED)} did not open; {shown!r} is open")


def open_tab(keys: Keyboard, arrow: str, name: str) -> None:
    """Streamlit's tabs: `arrow` pressed until the tab `name` has focus (an arrow also opens the tab it moves to, a
    rerun waited for before the next key: a key pressed during one can be lost, or the focus moved back by it),
    Enter, and the page's rerun for it ended (waited for by the tab shown: a rerun not yet begun reads as settled)."""
    for _ in range(8):  # more than the page has tabs
        if (keys.page.evaluate(FOCUSED) or {}).get("name") == name:
            break
        keys.press(arrow)
        focused_tab_opened(keys.page)
    focused, shown = keys.page.evaluate(FOCUSED), keys.page.locator("[role=tab][aria-selected=true]").inner_text()
    assert (focused or {}).get("name") == name, f"{arrow} did not reach the tab {name!r}: {shown!r} open, {focused}"
    keys.press("Enter")
    keys.page.locator("[role=tab][aria-selected=true]", has_text=name).wait_for(timeout=60_000)
    streamlit_settled(keys.page)


def upload(keys: Keyboard, control: str, key: str, photo: Path, role: str = "") -> None:
    """The file dialog opened from the keyboard on `control`, `photo` chosen in it; focus stays in the widget."""
    chosen = []

    def choose(chooser) -> None:
        chosen.append(chooser)
        chooser.set_files(str(photo))

    keys.page.on("filechooser", choose)  # before the key: a dialog is caught only once this is listening
    keys.to(control, role)
    keys.press(key)
    keys.page.wait_for_timeout(3000)
    keys.page.remove_listener("filechooser", choose)
    assert len(chosen) == 1, f"{key} on {control!r} opened {len(chosen)} file dialogs"
    focused = keys.page.evaluate(FOCUSED)
    assert focused is not None, "focus fell to the page's top after the file was chosen"


def choose_by_typing(keys: Keyboard, name: str, option: str) -> None:
    """The first combobox `name` reached by Tab, `option` typed, and Enter once the list shows it, as a person waits
    to see the choice (an Enter before the filtered list is drawn, on a loaded machine, chooses nothing and the box
    goes back to its choice); the box then reads `option`."""
    keys.to(name, "combobox")
    keys.page.keyboard.type(option)
    keys.page.get_by_role("option", name=option, exact=True).first.wait_for(timeout=60_000)
    keys.press("Enter")
    expect(keys.page.get_by_role("combobox", name=name, exact=True).first).to_have_value(option, timeout=60_000)


def test_gradio_by_keyboard(page: Page, server: Server, sample_photo: Path):
    server_url, closed_before = server.url, server.log.read_text().count(PAGE_CLOSED)
    page.goto(server_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=60_000)
    keys = Keyboard(page)
    upload(keys, "Drop an image file here to upload", "Enter", sample_photo)
    page.locator("#image-input img").first.wait_for(timeout=60_000)
    keys.to(VIT, "checkbox")
    keys.press("Space")
    expect(page.locator("#models").get_by_label(re.compile(re.escape(VIT)))).not_to_be_checked()
    keys.to(LABEL.analyze)
    keys.press("Enter")
    expect(page.locator("#status")).to_contain_text("Analyzed 2 models", timeout=ANALYSIS_MS)
    choose_by_typing(keys, LABEL.method, "Saliency")  # the first column's map
    expect(page.locator("#model-0 .caption").first).to_contain_text("Saliency of", timeout=ANALYSIS_MS)
    keys.to("Guided tour", "tab")
    keys.press("Enter")
    keys.to("Next →")
    keys.press("Enter")
    expect(page.locator("#tour-progress")).to_contain_text("Step 2 of", timeout=ANALYSIS_MS)
    keys.to("Compare models", "tab", back=True)
    keys.press("Enter")
    keys.to(LABEL.exports)
    keys.press("Enter")
    keys.to(LABEL.export_figure)
    keys.press("Enter")
    page.locator("#export-file a[download]").first.wait_for(timeout=ANALYSIS_MS)
    with page.expect_download(timeout=ANALYSIS_MS) as started:
        keys.to(re.compile(r"B ⇣$"))  # Gradio names the file's link by its size
        keys.press("Enter")
    assert started.value.suggested_filename.endswith(".png")
    assert all(width >= FOCUS_WIDTH_PX for _, width in keys.rings), keys.rings
    page.goto("about:blank")  # the page closed: its upload is deleted, but not the sample's picture of the same bytes
    deadline = time.monotonic() + 60
    while server.log.read_text().count(PAGE_CLOSED) == closed_before:
        assert time.monotonic() < deadline, "the closed page was not seen"
        time.sleep(0.5)
    page.goto(server_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=60_000)
    page.wait_for_function(SAMPLES_SHOWN, timeout=30_000)


def test_streamlit_by_keyboard(page: Page, streamlit_url: str, sample_photo: Path):  # noqa: F811
    page.goto(streamlit_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=60_000)
    streamlit_settled(page)
    keys = Keyboard(page)
    upload(keys, re.compile("^(upload )?Upload$"), "Space", sample_photo)
    page.locator("[data-testid=stFileChipName]", has_text=sample_photo.name).first.wait_for(timeout=60_000)
    streamlit_settled(page)
    keys.to(LABEL.models.format(count=4), "combobox")
    keys.press("Backspace")  # the last model picked (the ViT) taken off
    keys.press("Escape")
    streamlit_settled(page)
    keys.to(LABEL.analyze)
    keys.press("Enter")
    expect(page.get_by_text(re.compile("Analyzed 2 models"))).to_be_visible(timeout=ANALYSIS_MS)
    streamlit_settled(page)
    choose_by_typing(keys, LABEL.method, "Saliency")  # the first column's map
    streamlit_settled(page)
    expect(page.get_by_text(re.compile("^Where it looks.*Saliency of")).first).to_be_visible(timeout=ANALYSIS_MS)
    keys.to("Compare models", "tab")
    open_tab(keys, "ArrowRight", "Guided tour")
    page.get_by_role("button", name="Next →").wait_for(timeout=ANALYSIS_MS)
    keys.to("Next →")
    keys.press("Enter")
    streamlit_settled(page)
    tour = page.locator("[data-testid=stProgress]").filter(has_text="Step ").first
    expect(tour).to_contain_text("Step 2 of", timeout=ANALYSIS_MS)
    keys.to("Guided tour", "tab", back=True)
    open_tab(keys, "ArrowLeft", "Compare models")
    keys.to(LABEL.exports)
    keys.press("Enter")
    streamlit_settled(page)
    keys.to(LABEL.export_figure)
    keys.press("Enter")
    page.get_by_role("button", name=re.compile(r"^Download fig")).wait_for(timeout=ANALYSIS_MS)
    streamlit_settled(page)
    with page.expect_download(timeout=ANALYSIS_MS) as started:
        keys.to(re.compile(r"^Download fig"))
        keys.press("Enter")
    assert started.value.suggested_filename.startswith("fig")
    assert all(width >= FOCUS_WIDTH_PX for _, width in keys.rings), keys.rings

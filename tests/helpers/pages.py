"""The pages in a real headless Chromium: the Gradio page opened with a photo and models, Analyze pressed and its
result waited for, what a failing step shows (its error toasts, a plot's traces), and the scripts that measure
the open tab (its top, its offline notices, what scrolls sideways)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from app.backend.service import OFFLINE_MODELS
from app.views.texts import LABEL
from tests.conftest import streamlit_settled

TIMEOUT_MS = 300_000
CIFAR = ("preact_resnet", "vit_cifar")  # small models: an analysis takes seconds


def open_page(page, server_url: str, photo: Path, models: tuple[str, ...] = CIFAR) -> None:
    """The page with `photo` uploaded and exactly `models` (registry names) checked."""
    page.goto(server_url)
    page.get_by_role("button", name=LABEL.analyze).wait_for()
    choose(page, photo, models)


def choose(page, photo: Path, models: tuple[str, ...]) -> None:
    """On the Gradio page as it is: exactly `models` checked, `photo` uploaded and previewed."""
    for box in page.locator("#models input[type=checkbox]").all():
        box.set_checked(box.get_attribute("name") in models)
    page.locator("#image-input input[type=file]").set_input_files(str(photo))
    page.locator("#image-input img").first.wait_for()


def analyzed(page) -> None:
    expect(page.locator("#status")).to_contain_text("Analyzed", timeout=TIMEOUT_MS)


def press_analyze(page) -> None:
    """The Gradio page's Analyze pressed, and its analysis waited for (the status line says it is done)."""
    page.get_by_role("button", name=LABEL.analyze).click()
    analyzed(page)


def analyze_here(page, photo: Path, models: tuple[str, ...] = CIFAR, timeout_ms: int = TIMEOUT_MS) -> None:
    """On the Gradio page as it is (its tab and tour step kept): exactly `models` checked, `photo` uploaded, Analyze
    pressed, and the variance plot (Fig 9) waited for."""
    choose(page, photo, models)
    page.get_by_role("button", name=LABEL.analyze).click()
    page.locator("#variance .js-plotly-plot").wait_for(timeout=timeout_ms)


def analyze_resnet_and_vit(page, photo: Path, timeout_ms: int) -> None:
    """On the Gradio page: `photo` uploaded, ResNet-50 and ViT-Ti/16 with seeded random weights checked in place of
    the CIFAR-10 models checked offline, Analyze pressed, and the variance plot (Fig 9) waited for."""
    page.locator("input[type=file]").first.set_input_files(str(photo))
    for name in OFFLINE_MODELS:  # offline the trained CIFAR models come checked: these tests want two others
        page.locator(f"input[name={name}]").uncheck()
    page.locator("input[name=resnet50]").check()
    page.get_by_label("ViT-Ti/16").check()
    page.get_by_label("random (seeded)").check()
    page.locator("#image-input img").first.wait_for()
    page.get_by_role("button", name=LABEL.analyze).click()
    page.locator("#variance .js-plotly-plot").wait_for(timeout=timeout_ms)


def streamlit_settled_twice(page) -> None:
    """The Streamlit page settled, and settled again half a second later: a rerun asked for by a change made just
    before reads as settled until it begins."""
    streamlit_settled(page)
    page.wait_for_timeout(500)
    streamlit_settled(page)


def streamlit_analyze(page, timeout_ms: int) -> None:
    """The Streamlit page's Analyze pressed once the page has settled, and its run waited for (the Compare tab's
    Fourier plots shown). Settled twice, half a second apart: a rerun asked for by the control changed just before
    may not have begun at the first look, and a click on a button its rerun draws again is lost."""
    streamlit_settled_twice(page)
    analyze = page.get_by_role("button", name="Analyze")
    expect(analyze).to_be_enabled()
    analyze.click()
    page.get_by_text("Fourier analysis of feature maps").first.wait_for(timeout=timeout_ms)
    streamlit_settled(page)


def streamlit_open(control) -> None:
    """Open a Streamlit select or multiselect by a click, scrolled to first as a user scrolls before clicking: a click
    that itself scrolls the page lets the scroll event that follows close the list it just opened (each such miss
    cost a test a 10 s wait before trying again)."""
    control.scroll_into_view_if_needed()
    control.click()


def streamlit_pick(page, control, option: str, settle: bool = True) -> None:
    """Choose `option` in a Streamlit select, the page settled first unless `settle` is False (a pick while a slow
    map runs); a list that a rerun starting just then closed, or a select it drew anew as it was scrolled to (the
    old one detached), is opened again, twice at most."""
    choice = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):
        if settle:
            streamlit_settled(page)
        try:
            streamlit_open(control)
            choice.wait_for(timeout=10_000)
            break
        except PlaywrightError:  # a timeout is one
            page.keyboard.press("Escape")
    choice.click()


def trace_count(page, elem_id: str) -> int:
    return page.locator(f"#{elem_id} .js-plotly-plot .scatterlayer .trace").count()


def gradio_errors(page: Page) -> list[str]:
    """Gradio's visible error toasts and the "Error" overlays of components' status trackers."""
    shown = page.locator(".toast-body.error, [data-testid=status-tracker] .error")
    return [error.inner_text() for error in shown.all() if error.is_visible()]


# What of the open tab is wider than its box (screen-reader-only text of 1 px aside): cut off unseen (`clipped`: its box
# hides the rest), or scrolling sideways with no line saying so (`unsaid`); how far the page itself scrolls sideways;
# how much wider the AlterNet build-up table is than its box; the lines its "Step" header takes; and whether Fig 11's
# "scroll sideways" line is shown.
SIDEWAYS = """() => {
    const panel = [...document.querySelectorAll('[role=tabpanel]')].find((p) => p.getBoundingClientRect().height > 0);
    const wide = [...panel.querySelectorAll('*')].filter((e) => e instanceof HTMLElement && e.clientWidth > 1
        && e.scrollWidth > e.clientWidth + 1);
    const overflow = (e) => getComputedStyle(e).overflowX;
    const name = (e) => `${e.tagName}.${e.className} ${e.scrollWidth} > ${e.clientWidth}`;
    const said = (e) => [...(e.closest('.sideways')?.querySelectorAll('.scroll-hint') || [])]
        .some((line) => line.getClientRects().length > 0);
    const table = [...panel.querySelectorAll('table')].find((t) => t.innerText.includes('MSA blocks (per stage)'));
    const step = document.createRange();
    step.selectNodeContents(table.querySelector('th'));
    const hint = panel.querySelector('.scroll-hint');
    return {
        clipped: wide.filter((e) => ['hidden', 'clip'].includes(overflow(e))).map(name),
        unsaid: wide.filter((e) => ['auto', 'scroll'].includes(overflow(e)) && !said(e)).map(name),
        page: Math.max(...[document.documentElement, document.querySelector('[data-testid=stMain]')]
            .filter(Boolean).map((e) => e.scrollWidth - e.clientWidth)),
        table: table.scrollWidth - table.clientWidth,
        step: new Set([...step.getClientRects()].map((r) => Math.round(r.top))).size,
        hint: hint.getClientRects().length > 0,
    };
}"""

# The top of the open tab's content in px from the page's top (its scroll containers scrolled back to the top).
TAB_TOP = """() => {
    window.scrollTo(0, 0);
    document.querySelectorAll('[data-testid=stMain]').forEach((main) => main.scrollTo(0, 0));
    const panel = [...document.querySelectorAll('[role=tabpanel]')].find((p) => p.getBoundingClientRect().height > 0);
    return panel.getBoundingClientRect().top;
}"""
# The offline notices shown (their first words), however many.
NOTICES = """() => [...document.querySelectorAll('strong')]
    .filter((e) => e.textContent.trim() === 'Offline:' && e.getClientRects().length > 0)
    .map((e) => e.parentElement.innerText)"""

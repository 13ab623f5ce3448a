"""Streamlit's page rules, in a real Streamlit server and headless Chromium (AppTest where it truly
runs the behaviour): a map's look changed while it is computed, a bad AlterNet spec kept on screen, the teaching
pack naming the photo, the AlterNet tab at phone width and a laptop's first screen after an analysis."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from playwright.sync_api import expect
from streamlit.testing.v1 import AppTest

from app.backend.service import OFFLINE_MODELS, SAMPLES
from app.streamlit_ui.resources import service
from app.tabs.compare import Look
from app.tabs.tour import TourTab
from app.views.texts import LABEL
from engine.models.registry import get_spec
from tests.conftest import streamlit_settled
from tests.helpers.pages import NOTICES, SIDEWAYS, TAB_TOP, streamlit_analyze, streamlit_pick
from tests.helpers.streamlit_apptest import SCRIPT, TIMEOUT_S

pytestmark = pytest.mark.usefixtures("offline")  # the hub unreachable, as on CI (tests/conftest.py)

WAIT_MS = TIMEOUT_S * 1000
BAD_SPEC = "s1:1,s5:2,s3:9,foo"
PASSES = re.compile(r"Occlusion: (\d+)/(\d+) passes")

WATCH_PASSES = """() => {
    window.passesSeen = [];
    const note = () => {
        const found = document.body.innerText.match(/Occlusion: (\\d+)\\/\\d+ passes/);
        const last = window.passesSeen[window.passesSeen.length - 1];
        if (found && Number(found[1]) !== last) window.passesSeen.push(Number(found[1]));
    };
    new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
    note();
}"""


def analyze_resnet(page, url: str) -> None:
    """Open the page and analyze the sample photo with ResNet-50 alone (random weights, offline)."""
    page.goto(url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=WAIT_MS)
    streamlit_settled(page)
    models = page.locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.models.format(count=4))
    for name in OFFLINE_MODELS:
        models.get_by_role("button", name=f"Remove {get_spec(name).label}").click()
        streamlit_settled(page)
    models.locator("input").first.click()
    models.locator("input").first.press_sequentially("ResNet-50")
    page.get_by_role("option", name="ResNet-50", exact=True).click()
    page.keyboard.press("Escape")
    streamlit_settled(page)
    streamlit_analyze(page, WAIT_MS)


def test_changing_the_opacity_during_an_occlusion_does_not_restart_it(page, streamlit_url):  # noqa: F811
    analyze_resnet(page, streamlit_url)
    resnet = page.locator("[data-testid=stColumn]").filter(has=page.get_by_role("heading", name="ResNet-50"))
    streamlit_pick(page, resnet.get_by_role("combobox", name=LABEL.method), "Occlusion")
    resnet.get_by_text("Occlusion: 2/").first.wait_for(timeout=WAIT_MS)
    page.evaluate(WATCH_PASSES)
    opacity = page.locator("[data-testid=stSlider]").filter(has_text=LABEL.opacity).get_by_role("slider")
    opacity.focus()
    opacity.press("ArrowLeft")
    # the first key taken (its rerun started) before the next: two keys at once can lose one on a fast machine
    expect(page.locator("[data-testid=stSlider]").filter(has_text=LABEL.opacity)).to_contain_text("0.55")
    opacity.press("ArrowLeft")
    resnet.get_by_text("Occlusion of the top-1 class").wait_for(timeout=WAIT_MS)
    streamlit_settled(page)
    seen = page.evaluate("() => window.passesSeen")
    assert seen and seen == sorted(seen), f"the computation restarted: passes shown {seen}"
    assert "0.50" in page.locator("[data-testid=stSlider]").filter(has_text=LABEL.opacity).inner_text()
    assert "Occlusion: " not in resnet.inner_text()  # no second computation after the first ended


def test_another_method_picked_during_a_slow_map_stops_it(page, streamlit_url):  # noqa: F811
    analyze_resnet(page, streamlit_url)
    steps = page.locator("[data-testid=stSlider]").filter(has_text=LABEL.ig_steps)
    steps.get_by_role("slider").focus()
    steps.get_by_role("slider").press("End")  # 128 steps: 18 passes, each seconds long
    expect(steps).to_contain_text("128")
    streamlit_settled(page)
    resnet = page.locator("[data-testid=stColumn]").filter(has=page.get_by_role("heading", name="ResNet-50"))
    streamlit_pick(page, resnet.get_by_role("combobox", name=LABEL.method), "Integrated Gradients")
    resnet.get_by_text("Integrated Gradients: 2/").first.wait_for(timeout=WAIT_MS)
    total = int(re.search(r"Integrated Gradients: \d+/(\d+) passes", resnet.inner_text()).group(1))
    page.evaluate(WATCH_PASSES.replace("Occlusion", "Integrated Gradients"))
    streamlit_pick(page, resnet.get_by_role("combobox", name=LABEL.method), "Saliency", settle=False)  # changed my mind
    resnet.get_by_text("Saliency of the top-1 class").wait_for(timeout=WAIT_MS)
    streamlit_settled(page)
    seen = page.evaluate("() => window.passesSeen")
    assert max(seen, default=0) < total, f"the abandoned map ran to its end: passes shown {seen} of {total}"
    assert "Integrated Gradients" not in resnet.locator("[data-testid=stImage]").inner_text()  # no half-made map
    assert "Integrated Gradients: " not in resnet.inner_text()  # its progress is gone


@pytest.mark.browser  # its handout PDF is printed by a real headless Chromium
def test_the_tour_handout_names_the_photo_analyzed():
    """The handout's figures are those the tour draws for the photo by its name ("on cat.jpg"), not "on the photo"."""
    at = AppTest.from_file(SCRIPT, default_timeout=TIMEOUT_S).run()
    at.button(key="analyze").click().run()  # the trained CIFAR models, picked offline
    at.session_state["tab"] = "Guided tour"  # only the open tab is drawn
    at.run()
    at.button(key="tour_export").click().run()
    assert not at.exception and at.session_state["photo_name"] == SAMPLES[0].name
    named = TourTab(service()).export(at.session_state["runs"], Look(), SAMPLES[0].name)
    unnamed = TourTab(service()).export(at.session_state["runs"], Look())
    handout, expected, anonymous = (figures(d.data) for d in (at.session_state["tour_exported"], named, unnamed))
    assert expected != anonymous  # the name shows in some figure
    assert handout == expected


def figures(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as packed:
        return {name: packed.read(name) for name in packed.namelist() if name.startswith("figures/")}


def test_a_bad_alternet_spec_stays_named_and_average_and_export_say_they_were_not_done():
    at = AppTest.from_file(SCRIPT, default_timeout=TIMEOUT_S)
    at.session_state["tab"] = "AlterNet (Section 4)"  # only the open tab is drawn
    at.run()
    before = at.session_state["alternet_view"]
    at.text_input(key="spec_text").set_value(BAD_SPEC).run()
    typed = [e.value for e in at.error]
    assert len(typed) == 1, typed  # the problem, as the builder words it
    at.slider(key="subset_count").set_value(20).run()
    at.button(key="subset").click().run()
    errors = [e.value for e in at.error]
    assert typed[0] in errors, errors  # the bad spec's message stays while the box holds it
    assert any(e.startswith("Not averaged:") and typed[0] in e for e in errors), errors
    assert at.session_state["alternet_view"] is before and at.text_input(key="spec_text").value == BAD_SPEC
    at.button(key="alternet_export").click().run()
    errors = [e.value for e in at.error]
    assert typed[0] in errors and any(e.startswith("Not exported:") for e in errors), errors
    assert "alternet_exported" not in at.session_state and not at.exception
    at.text_input(key="spec_text").set_value("s4:4").run()  # a good spec: the message goes
    assert not at.error and at.session_state["spec"] == "s4:4"


def test_the_alternet_tab_fits_a_phone_or_says_what_scrolls(page, streamlit_url):  # noqa: F811
    """At a phone's 390 px the build-up table fits (its accuracies in sight, "Step" whole) and Fig 11 keeps its size,
    scrolling sideways in its box with a line saying so; nothing is cut off unseen and the page does not scroll
    sideways, as in Gradio (tests/test_screen_browser.SIDEWAYS); on a laptop the drawing fits and the line goes."""
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.goto(streamlit_url)
        page.get_by_role("tab", name="AlterNet (Section 4)").click()
        table = page.locator("[data-testid=stMarkdown] table").filter(has_text="MSA blocks (per stage)").first
        table.wait_for(timeout=WAIT_MS)
        page.locator("#alternet-svg").wait_for(timeout=WAIT_MS)
        streamlit_settled(page)
        assert page.evaluate(SIDEWAYS) == {"clipped": [], "unsaid": [], "page": 0, "table": 0, "step": 1, "hint": True}
        page.set_viewport_size({"width": 1440, "height": 900})
        page.wait_for_timeout(1000)
        assert page.evaluate(SIDEWAYS) == {"clipped": [], "unsaid": [], "page": 0, "table": 0, "step": 1, "hint": False}
    finally:
        page.set_viewport_size({"width": 1440, "height": 1000})


def test_once_a_photo_is_analyzed_a_laptop_shows_a_tab_on_its_first_screen(page, streamlit_url, output_dir):  # noqa: F811
    """As in Gradio (tests/test_screen_browser): the offline notice is one, in full, then in a line once the sample
    photo is analyzed, and the Compare tab starts on a 1440 x 900 screen."""
    page.set_viewport_size({"width": 1440, "height": 900})
    try:
        page.goto(streamlit_url)
        page.get_by_role("button", name="Analyze").wait_for(timeout=WAIT_MS)
        streamlit_settled(page)
        before = page.evaluate(NOTICES)
        assert len(before) == 1 and "cannot be reached" in before[0], before  # the test server runs offline
        streamlit_analyze(page, WAIT_MS)  # the sample photo, the bundled CIFAR-10 models
        notices = page.evaluate(NOTICES)
        assert len(notices) == 1 and "seeded random weights" in notices[0], notices
        assert "cannot be reached" not in notices[0], notices
        top = page.evaluate(TAB_TOP)
        assert top < 900, f"the Compare tab starts {top:.0f} px down, below the first screen"
        page.screenshot(path=str(output_dir / "streamlit-first-1440.png"))
    finally:
        page.set_viewport_size({"width": 1440, "height": 1000})

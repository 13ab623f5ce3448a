"""What the Gradio page says and does in a real headless Chromium, for the mishaps a new user runs into: a bad
AlterNet spec shown whole, an Analyze pressed during a slow upload, a map stopped half-way, a double click."""

from __future__ import annotations

import re
import time
from pathlib import Path

from gradio_client import Client
from playwright.sync_api import expect

from app.views.texts import LABEL
from tests.conftest import gradio_server
from tests.helpers.gradio_http import gradio_client
from tests.helpers.pages import CIFAR, NOTICES, SIDEWAYS, TAB_TOP, TIMEOUT_MS, analyzed, open_page, press_analyze

FAST = {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


def test_a_bad_alternet_spec_is_shown_whole(page, server_url: str):
    page.goto(server_url)
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    box = page.locator("#alternet-spec textarea, #alternet-spec input").first
    box.fill("s1:1,s5:2,s3:9,foo")
    box.press("Enter")
    problem = page.locator("#alternet-spec-problem")
    expect(problem).to_contain_text("bad MSA token", timeout=TIMEOUT_MS)
    shown = problem.inner_text()
    assert "expected s<stage>:<block>, 1-based, e.g. 's3:6'" in shown, shown
    assert "stage 5 in 's5:2' is out of range" in shown


def test_an_analyze_pressed_during_a_slow_upload_is_not_called_stale(page, server_url: str, sample_photo, tmp_path):
    import numpy as np
    from PIL import Image

    big = tmp_path / "big.jpg"  # 7 MB of noise: over a slow link its upload and preview take seconds
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (2000, 3000, 3), dtype=np.uint8)).save(big, quality=95)
    open_page(page, server_url, sample_photo, CIFAR[:1])
    press_analyze(page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    slow = {"offline": False, "latency": 50, "downloadThroughput": 4e6, "uploadThroughput": 1e6}
    cdp.send("Network.emulateNetworkConditions", slow)
    try:
        page.locator("#image-input input[type=file]").set_input_files(str(big))
        page.wait_for_timeout(500)
        page.get_by_role("button", name=LABEL.analyze).click()
        page.wait_for_function(  # the preview of the new photo arrives last over the slow link
            "() => document.querySelector('#status').innerText.includes('Analyzed') && "
            "document.querySelector('#image-input img') && "
            "document.querySelector('#image-input img').src.endsWith('/big.jpg') && "
            "document.querySelector('#image-input img').complete && "
            "!document.querySelector('#status').innerText.includes('%')",
            timeout=TIMEOUT_MS,
        )
        page.wait_for_timeout(3000)  # every listener of the preview has answered
    finally:
        cdp.send(
            "Network.emulateNetworkConditions", {**slow, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        )
    status = page.locator("#status").inner_text()
    assert "Analyzed" in status and "previous photo" not in status, status
    # another photo after that is another photo
    page.locator("#image-input input[type=file]").set_input_files(str(sample_photo.with_name("coffee.jpg")))
    expect(page.locator("#status")).to_contain_text("previous photo", timeout=60_000)


def test_stop_says_the_map_was_not_finished_and_offers_to_compute_it(page, server_url: str, sample_photo: Path):
    refused = []  # the page's own requests must never pass its limit of requests in flight
    page.on("response", lambda r: refused.append(r.url) if r.status == 429 else None)
    open_page(page, server_url, sample_photo, ("resnet50",))
    page.get_by_label("random (seeded)").check()
    page.locator("#ig-steps input[type=number]").fill("64")  # few enough for a loaded machine to allow the map (below)
    page.locator("#ig-steps input[type=number]").press("Enter")
    press_analyze(page)  # at once: the steps' redraws are still in flight
    column = page.locator("#model-0")
    before = page.locator("#view-0 img").first.get_attribute("src")
    page.locator("#method-0 input").click()
    page.get_by_role("option", name="Integrated Gradients").click()
    stop = page.locator("#stop-0")
    stop.wait_for(state="visible", timeout=60_000)
    held = []  # the Stop's cancel comes back late (a slow link, a busy server): after Compute has begun
    page.route("**/cancel", lambda route: held.append(route))
    stop.click()
    expect(column).to_contain_text(LABEL.map_stopped, timeout=60_000)
    compute = page.locator("#compute-0")
    expect(compute).to_be_visible()
    assert page.locator("#view-0 img").first.get_attribute("src") == before  # the previous map, said so
    compute.click()
    expect(page.locator("#stop-0")).to_be_visible(timeout=60_000)  # computing again, and stoppable
    for route in held:
        route.continue_()
    page.unroute("**/cancel")
    page.wait_for_timeout(3000)  # what the late cancel set off has run
    expect(page.locator("#stop-0")).to_be_visible()  # still: it was the first map's, not this one's
    page.locator("#stop-0").click()
    expect(column).to_contain_text(LABEL.map_stopped, timeout=60_000)
    expect(compute).to_be_visible()
    assert not refused, refused


def settled_passes(client: Client, quiet_s: float = 5.0) -> int:
    """The server's forward passes once they have not changed for `quiet_s` (a new photo also runs the AlterNet
    tab's three models)."""
    passes, since = client.predict(api_name="/forward_passes"), time.monotonic()
    deadline = since + TIMEOUT_MS / 1000
    while time.monotonic() - since < quiet_s:
        assert time.monotonic() < deadline, f"forward passes still rising after {TIMEOUT_MS / 1000:.0f} s: {passes}"
        time.sleep(1)
        now = client.predict(api_name="/forward_passes")
        if now != passes:
            passes, since = now, time.monotonic()
    return passes


def passes_beyond(client: Client, before: int, timeout_s: float = 180.0) -> int:
    """The server's forward passes once they exceed `before`; fails after `timeout_s` rather than wait on (a map
    refused by the server's time limit never starts: the page at failure shows the refusal)."""
    deadline = time.monotonic() + timeout_s
    while (passes := client.predict(api_name="/forward_passes")) == before:
        assert time.monotonic() < deadline, f"no forward pass in {timeout_s:.0f} s: the map never started"
        time.sleep(0.2)
    return passes


def test_a_map_asked_for_anew_stops_the_one_in_progress(page, server_url: str, sample_photo: Path):
    import engine
    from engine.analyses.attributions import IntegratedGradients

    # steps enough for a few batches, few enough that a machine slowed by other work still allows the map
    # (at 128 steps a loaded 2-core machine estimated ~6 min, over the 5 min per request, and refused it)
    steps = 64
    full = IntegratedGradients(engine.create_model("resnet50", weights="random"), steps=steps)._calls()
    client = gradio_client(server_url)
    open_page(page, server_url, sample_photo, ("resnet50",))
    page.get_by_label("random (seeded)").check()
    page.locator("#ig-steps input[type=number]").fill(str(steps))
    page.locator("#ig-steps input[type=number]").press("Enter")
    press_analyze(page)
    before = settled_passes(client)
    page.locator("#method-0 input").click()
    page.get_by_role("option", name="Integrated Gradients").click()
    page.locator("#stop-0").wait_for(state="visible", timeout=60_000)
    passes_beyond(client, before)  # its first batch of the path has run
    page.locator("#method-0 input").click()  # changed my mind: a quick map instead
    page.get_by_role("option", name="Saliency").click()
    expect(page.locator("#model-0")).to_contain_text("Saliency of the top-1", timeout=TIMEOUT_MS)
    used = settled_passes(client) - before
    assert 0 < used < full, f"{used} forward passes: the {full} of the abandoned map's {steps} steps were all run"
    expect(page.locator("#stop-0")).to_be_hidden()  # the map asked for last is drawn
    assert "Integrated Gradients of" not in page.locator("#model-0").inner_text()  # no half-made map


def test_a_double_click_on_analyze_runs_the_analysis_once(page, server_url: str, sample_photo: Path):
    client = gradio_client(server_url)
    open_page(page, server_url, sample_photo)
    button = page.get_by_role("button", name=LABEL.analyze)
    button.click()
    analyzed(page)
    deltas = []
    for photo, click in (("coffee.jpg", button.click), ("rocket.jpg", button.dblclick)):
        page.locator("#image-input input[type=file]").set_input_files(str(sample_photo.with_name(photo)))
        expect(page.locator("#status")).to_contain_text("previous photo", timeout=60_000)
        passes = settled_passes(client)
        click()
        analyzed(page)
        deltas.append(settled_passes(client) - passes)
    once, twice = deltas
    assert once > 0 and twice == once, deltas  # the double click ran the two models once, not twice


def title_fits(page, elem_id: str) -> bool:
    """Whether the plot's title lies inside its figure (not cut at its right edge) and clear of plotly's toolbar."""
    return page.evaluate(
        """id => {
            const plot = document.querySelector(`#${id} .js-plotly-plot`);
            const title = plot.querySelector('.gtitle').getBoundingClientRect();
            const bar = plot.querySelector('.modebar');
            const b = bar ? bar.getBoundingClientRect() : null;
            const clear = !b || b.width === 0 || title.right <= b.left || title.left >= b.right
                || title.bottom <= b.top || title.top >= b.bottom;
            return clear && title.right <= plot.getBoundingClientRect().right + 1;
        }""",
        elem_id,
    )


def plot_height(page, elem_id: str) -> float:
    """The height in px of the plot's data area (plotly's drag layer covers exactly that)."""
    return page.locator(f"#{elem_id} .nsewdrag").first.bounding_box()["height"]


def test_titles_plots_and_drawings_fit_a_laptop_and_a_phone(page, server_url: str, sample_photo, output_dir: Path):
    four = ("preact_resnet", "alternet", "vit_cifar", "vit_tiny_patch16_224")
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, server_url, sample_photo, four)
    page.get_by_label("random (seeded)").check()
    press_analyze(page)
    page.locator("#logit-lens .js-plotly-plot").wait_for(timeout=TIMEOUT_MS)
    for slot in range(4):
        assert title_fits(page, f"spectrum-{slot}"), slot
    page.screenshot(path=str(output_dir / "screen-1440.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(2000)
    for elem_id in ("spectrum-0", "high-frequency", "variance", "logit-lens"):
        assert title_fits(page, elem_id), elem_id
    page.screenshot(path=str(output_dir / "screen-390.png"), full_page=True)

    shade = page.locator("#shaded input").evaluate("box => [box.value, box.scrollWidth, box.clientWidth]")
    assert shade[0] and shade[1] <= shade[2], shade  # "Shade the blocks of" shows its model's name whole

    page.set_viewport_size({"width": 1440, "height": 900})  # on a phone the tab sits in the tabs' overflow menu
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    page.locator("#alternet-variance .js-plotly-plot").wait_for(timeout=TIMEOUT_MS)
    assert page.evaluate(SIDEWAYS) == {"clipped": [], "unsaid": [], "page": 0, "table": 0, "step": 1, "hint": False}
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(2000)
    drawing = page.locator("#alternet-svg").bounding_box()
    assert drawing["width"] >= 700  # its labels keep their size; the box scrolls sideways, and says so
    assert page.evaluate(SIDEWAYS) == {"clipped": [], "unsaid": [], "page": 0, "table": 0, "step": 1, "hint": True}
    for elem_id in ("alternet-high-frequency", "alternet-variance"):
        assert plot_height(page, elem_id) >= 200, elem_id
    page.screenshot(path=str(output_dir / "screen-alternet-390.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.wait_for_timeout(2000)
    for elem_id in ("alternet-high-frequency", "alternet-variance"):
        assert plot_height(page, elem_id) >= 250, elem_id
    page.screenshot(path=str(output_dir / "screen-alternet-1440.png"), full_page=True)


def test_a_request_the_server_refuses_before_running_it_says_why(page, output_dir: Path, sample_photo: Path):
    # one request at a time per page: the page's own events on opening pass it (Gradio itself shows only "Error")
    with gradio_server(output_dir / "one-at-a-time.log", {"VIT_EXPLORER_MAX_PER_SESSION": "1"}) as server:
        open_page(page, server.url, sample_photo)
        page.get_by_role("button", name=LABEL.analyze).click()
        box = page.locator("#refusal")
        expect(box).to_contain_text(
            re.compile(r"\d+ requests? from this page (is|are) waiting or running \(at most 1\)"), timeout=60_000
        )
        said = box.inner_text()
        assert ("1 request from this page is" in said) == said.startswith("Not started: 1 request"), said  # 1 is one
        page.screenshot(path=str(output_dir / "gradio_refused_request.png"))
        box.click()
        expect(box).to_be_hidden()


def test_a_change_of_the_steps_redraws_every_integrated_gradients_map(page, server_url: str, sample_photo: Path):
    open_page(page, server_url, sample_photo)  # the two CIFAR models: their maps take seconds
    press_analyze(page)
    for i in (0, 1):
        page.locator(f"#method-{i} input").click()
        page.get_by_role("option", name="Integrated Gradients").click()
        expect(page.locator(f"#model-{i}")).to_contain_text("Integrated Gradients of the top-1", timeout=TIMEOUT_MS)
    page.locator("#ig-steps input[type=number]").fill("16")
    page.locator("#ig-steps input[type=number]").press("Enter")
    for i in (0, 1):  # one event for the page draws each column's map anew
        expect(page.locator(f"#model-{i}")).to_contain_text("16 steps from black", timeout=TIMEOUT_MS)
        expect(page.locator(f"#stop-{i}")).to_be_hidden()


# What a keyboard user reaches in the plots' toolbars with no name to hear (plotly's logo link was one).
UNNAMED_IN_TOOLBARS = """() => [...document.querySelectorAll('.modebar a[href], .modebar button, .modebar [tabindex]')]
    .filter((e) => e.getClientRects().length > 0 && e.tabIndex >= 0 && !(e.getAttribute('aria-label') || '').trim())
    .map((e) => e.outerHTML.slice(0, 120))"""


def test_once_a_photo_is_analyzed_a_laptop_shows_a_tab_on_its_first_screen(page, server_url, sample_photo, output_dir):
    page.set_viewport_size({"width": 1440, "height": 900})
    try:
        open_page(page, server_url, sample_photo, CIFAR[:1])
        page.wait_for_function(f"() => ({NOTICES})().length > 0")
        before = page.evaluate(NOTICES)
        assert len(before) == 1 and "cannot be reached" in before[0], before  # the test server runs offline
        press_analyze(page)
        expect(page.locator("#banner")).not_to_contain_text("cannot be reached")  # the notice in a line now
        notices = page.evaluate(NOTICES)
        assert len(notices) == 1 and "seeded random weights" in notices[0], notices
        top = page.evaluate(TAB_TOP)
        assert top < 900, f"the Compare tab starts {top:.0f} px down, below the first screen"
        page.screenshot(path=str(output_dir / "screen-first-1440.png"))
        page.locator("#variance .js-plotly-plot .modebar").first.wait_for(state="attached", timeout=TIMEOUT_MS)
        assert page.evaluate(UNNAMED_IN_TOOLBARS) == []
        page.get_by_role("tab", name="Paper figures").click()  # the map checks' plots, among others
        page.locator("#paper-maps-0 .js-plotly-plot .modebar").first.wait_for(state="attached", timeout=TIMEOUT_MS)
        assert page.evaluate(UNNAMED_IN_TOOLBARS) == []
    finally:
        page.set_viewport_size({"width": 1440, "height": 1000})

"""One journey, written once as a list of steps, walked in a real headless Chromium through BOTH front ends (the
real Gradio and Streamlit servers): the model limit, the sample photo analyzed with ResNet-50 (random weights) and
the trained CIFAR ViT/4, a map picked (rollout: the layer does not apply), a ViT unit switched off, the ViT swapped
for AlterNet and re-analyzed (its column starts from AlterNet's own defaults), the default figure exported, the
tour's Next and Back with the address following them (a full rerun keeps the tab), a bad and a good AlterNet spec,
Stop during a slow map (ResNet-50's Occlusion) and the map opacity changed while it is computed again, a double
click on Analyze (one analysis), a file that is not an image, and the phone width (every tab and chosen model in
sight); axe-core audits every tab after an analysis. Each front end's visible state
is recorded, and the last test checks that both show the same. Screenshots go to
test-output/journey-<front end>-<step>.png."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from pprint import pformat
from typing import Callable, ClassVar

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.tabs.tour import KEYS
from app.views import texts as text
from app.views.texts import LABEL
from tests.conftest import streamlit_settled
from tests.helpers.pages import gradio_errors, streamlit_open, streamlit_pick

MINUTE_MS = 60_000
ANALYSIS_MS = 15 * MINUTE_MS  # two CPU cores shared with a training job: an analysis can take minutes
REDRAW_MS = 5 * MINUTE_MS
RESNET, VIT, ALTERNET = "ResNet-50", "ViT/4 (CIFAR, 1.6 M params)", "AlterNet (CIFAR, ~2 M params)"
EXTRA = ["ViT-Ti/16", "ViT-S/16", "DeiT-S"]  # ticked after the first two: the fifth must not stay ticked
CIFAR = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
PICKED_MAP = "Saliency"
TABS = ["Compare models", "AlterNet (Section 4)", "Paper figures", "Guided tour"]
PLOTTED = TABS[:3]  # the tabs that draw plots after an analysis (the tour shows pictures)
PLOT_NAMES = """() => [...document.querySelectorAll('.js-plotly-plot')].filter((p) => p.offsetParent !== null)
    .map((p) => { const svg = p.querySelector('svg.main-svg');
                  return svg && svg.getAttribute('role') === 'img' ? svg.getAttribute('aria-label') || '' : ''; })"""
SEVERE = ("critical", "serious")  # axe-core's impacts that shut a student out
BAD_SPEC, GOOD_SPEC = "s1:1,s5:2,s3:9,foo", "s3:6,s4:2,s4:4"
DRAWING = "AlterNet architecture, MSA blocks {spec}"  # Fig 11's aria-label
EXCEPTION = re.compile(r"Traceback|TypeError|This app has encountered an error|Exception")
SEEN: dict[str, dict[str, object] | Exception] = {}  # front end: what it showed along the journey, or its failure
# the page's text as shown, for the observers that count progress lines: Gradio's screen-reader announcements
# (.sr-only) repeat a progress line later, throttled, after a newer one was shown or the line went
SHOWN_TEXT = """() => {
    let text = document.body.textContent;
    for (const announcer of document.querySelectorAll('.sr-only')) text = text.replace(announcer.textContent, '');
    return text; }"""


def words(text: str) -> str:
    return " ".join(text.split())


def whole(element: Locator) -> bool:
    """Shown, inside the viewport's width and not cut short (no ellipsis: its text fits its box)."""
    if not element.is_visible():
        return False
    box, width = element.bounding_box(), element.page.viewport_size["width"]
    fits = element.evaluate("e => [e, ...e.querySelectorAll('*')].every(x => x.scrollWidth <= x.clientWidth + 1)")
    return bool(box) and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5 and fits


def fig9_colours(page: Page, among: str) -> dict[str, str]:
    """Model -> line colour in the page's Fig 9 that has a line named `among` (each tab draws its own Fig 9)."""
    figures = page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')]
            .filter(plot => ((plot.layout || {}).title || {}).text?.includes('Fig 9'))
            .map(plot => (plot._fullData || []).filter(t => t.line && t.mode && t.mode.includes('lines'))
            .map(t => [t.name, t.line.color]))"""
    )
    found = [dict(figure) for figure in figures if any(name.startswith(among) for name, _ in figure)]
    assert found, f"no Fig 9 with {among!r}: {figures}"
    return found[0]


def colour_of(colours: dict[str, str], model: str) -> str:
    return next(colour for name, colour in colours.items() if name.startswith(model))


@dataclass
class Front:
    """One front end driven through the journey's steps: the same actions, each in its own widgets."""

    page: Page
    url: str
    output: Path
    tmp: Path
    seen: dict[str, object] = field(default_factory=dict)
    name: ClassVar[str] = ""

    def shot(self, step: str) -> None:
        self.page.screenshot(path=str(self.output / f"journey-{self.name}-{step}.png"), full_page=True)

    def settle(self) -> None:  # a Streamlit run in progress ended; Gradio answers events as they come
        pass

    def exceptions(self) -> list[str]:
        body = self.page.locator("body").inner_text()
        return [line for line in body.splitlines() if EXCEPTION.search(line)]

    def no_exception(self) -> None:
        assert not self.exceptions(), self.exceptions()

    def watch(self, pattern: str) -> Callable[[], list[int]]:
        """The largest number that the page shows for `pattern` (a regex with one group) at each change from now
        on, in order (a progress shown twice at once counts as its furthest)."""
        self.page.evaluate(
            """(pattern) => { window.__watched = []; const find = new RegExp(pattern, 'g'); const shown = """
            + SHOWN_TEXT
            + """;
            new MutationObserver(() => {
                const found = [...shown().matchAll(find)].map(match => Number(match[1]));
                if (!found.length) return;
                const n = Math.max(...found);
                if (window.__watched[window.__watched.length - 1] !== n) window.__watched.push(n);
            }).observe(document.body, {subtree: true, childList: true, characterData: true}); }""",
            pattern,
        )
        return lambda: self.page.evaluate("() => window.__watched")

    def analyses(self) -> Callable[[], int]:
        """A counter of the analyses run from now on, as the page shows them: how often the progress line
        "Running ResNet-50" (the first model's) has appeared, or how often the line that says an analysis ended
        ("Analyzed 2 models on coffee.jpg in 1.3 s.") has changed, whichever is more (a loaded browser can draw an
        analysis's end without ever drawing its progress)."""
        self.page.evaluate(
            """(line) => { const shown = """
            + SHOWN_TEXT
            + """;
            const ENDED = /Analyzed \\d+ models? on .+? in [\\d.]+ s/g;
            const ended = () => [...shown().matchAll(ENDED)].map((m) => m[0]).pop();
            window.__running = 0; window.__shown = false; window.__ended = 0; window.__last = ended();
            new MutationObserver(() => {
                const now = shown().includes(line);
                if (now && !window.__shown) window.__running += 1;
                window.__shown = now;
                const last = ended();
                if (last && last !== window.__last) { window.__ended += 1; window.__last = last; }
            }).observe(document.body, {subtree: true, childList: true, characterData: true}); }""",
            f"Running {RESNET}",
        )
        return lambda: self.page.evaluate("() => Math.max(window.__running, window.__ended)")

    def map_image(self, i: int) -> Locator:
        raise NotImplementedError

    def map_above_controls(self, i: int) -> bool:
        """Whether column `i`'s map sits above its method picker (so that maps line up across columns)."""
        picture = self.map_image(i).bounding_box()
        method = self.column(i).get_by_role("combobox", name=LABEL.method, exact=True).bounding_box()
        return bool(picture and method) and picture["y"] + picture["height"] <= method["y"]

    def tab(self, name: str) -> None:
        self.settle()
        self.page.get_by_role("tab", name=name).click()
        self.settle()

    def selected_tab(self) -> str:
        return self.page.get_by_role("tab", selected=True).first.inner_text().strip()


class Gradio(Front):
    name = "gradio"

    def open(self, photo: Path) -> None:
        self.page.goto(self.url)
        self.page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=MINUTE_MS)
        self.page.locator("#image-input input[type=file]").first.set_input_files(str(photo))
        self.page.locator("#image-input img").first.wait_for(timeout=REDRAW_MS)

    def photo_shown(self) -> bool:
        return self.page.locator("#image-input img").first.is_visible()

    def models(self) -> Locator:
        return self.page.locator("#models")

    def ticked(self) -> list[str]:
        boxes = self.models().locator("label").filter(has=self.page.locator("input:checked"))
        return [words(label) for label in boxes.all_inner_texts()]

    def tick(self, label: str) -> None:
        self.models().get_by_label(label, exact=True).click()
        self.page.wait_for_timeout(300)  # the limit is applied in the browser, after the click's own update

    def untick(self, label: str) -> None:
        self.models().get_by_label(label, exact=True).uncheck()

    def models_in_sight(self) -> list[str]:
        boxes = self.models().locator("label").filter(has=self.page.locator("input:checked"))
        return [words(label.inner_text()) for label in boxes.all() if whole(label)]

    def analyze(self, expect_models: list[str], clicks: int = 1) -> None:
        status = self.page.locator("#status")
        before = status.inner_text()
        button = self.page.get_by_role("button", name=LABEL.analyze)
        button.dblclick() if clicks == 2 else button.click()
        expect(status).not_to_have_text(before, timeout=ANALYSIS_MS)  # "Analyzed 2 models in 3.2 s."
        expect(status).to_contain_text("Analyzed", timeout=ANALYSIS_MS)
        for i, label in enumerate(expect_models):
            expect(self.column(i).locator("h3")).to_have_text(re.compile(f"^{re.escape(label)}"), timeout=ANALYSIS_MS)
        self.page.locator("#variance .js-plotly-plot").wait_for(timeout=ANALYSIS_MS)

    def status(self) -> str:
        return words(self.page.locator("#status").inner_text())

    def column(self, i: int) -> Locator:
        return self.page.locator(f"#model-{i}")

    def heading(self, i: int) -> str:
        return words(self.column(i).locator("h3").inner_text())

    def method(self, i: int) -> str:
        return self.page.locator(f"#method-{i} input").input_value()

    def target(self, i: int) -> str:
        return self.page.locator(f"#target-{i} input").input_value()

    def lesioned(self, i: int) -> int:
        return self.page.locator(f"#lesion-{i} .token").count()

    def choose_method(self, i: int, method: str, wait: bool = True) -> None:
        self.column(i).get_by_role("combobox", name=LABEL.method).click()
        self.page.get_by_role("option", name=method, exact=True).click()

    def caption(self, i: int) -> Locator:
        return self.column(i).locator(".caption").first

    def check_map(self, i: int) -> None:
        self.page.locator(f"#check-{i}").click()

    def curves(self, i: int) -> Locator:
        """The column's deletion and insertion curves, opened."""
        self.page.locator(f"#check-curves-{i}").get_by_text(LABEL.check_curves).click()
        return self.page.locator(f"#check-plot-{i} .js-plotly-plot")

    def curves_offered(self, i: int) -> Locator:
        return self.page.locator(f"#check-curves-{i}")

    def check_offered(self, i: int) -> Locator:
        return self.page.locator(f"#check-{i}")

    def map_image(self, i: int) -> Locator:
        return self.page.locator(f"#view-{i} img").first

    def stop_map(self, i: int) -> None:
        self.page.locator(f"#stop-{i}").click()

    def map_shown(self, i: int) -> bool:
        return self.page.locator(f"#view-{i} img").is_visible()

    def compute_offered(self, i: int) -> bool:
        return self.page.locator(f"#compute-{i}").is_visible()

    def compute_map(self, i: int) -> None:
        self.page.locator(f"#compute-{i}").click()

    def rollout(self, i: int, on: bool) -> None:
        box = self.column(i).get_by_label(LABEL.rollout)
        box.check() if on else box.uncheck()

    def layer_enabled(self, i: int) -> bool:
        return self.column(i).get_by_label("range slider for Layer").is_enabled()

    def switch_off(self, i: int, typed: str) -> None:
        box = self.page.locator(f"#lesion-{i} input")
        box.click()
        box.press_sequentially(typed)
        self.page.get_by_role("option").first.click()
        self.page.keyboard.press("Escape")

    def export_default_figure(self) -> str:
        self.page.get_by_text(LABEL.exports).click()
        self.page.locator("#export-one").click()
        link = self.page.locator("#export-file a[download]").first
        link.wait_for(timeout=ANALYSIS_MS)
        with self.page.expect_download(timeout=ANALYSIS_MS) as started:
            link.click()
        return started.value.suggested_filename

    def tour_move(self, button: str) -> None:
        self.page.locator("#tour-next" if button == "next" else "#tour-back").click()

    def tour_position(self) -> Locator:
        return self.page.locator("#tour-progress")

    def full_rerun(self, wait: bool = True) -> None:
        """A change that re-draws every map of the Compare tab: the map opacity."""
        number = self.page.get_by_label(f"number input for {LABEL.opacity}")
        number.fill("0.55" if number.input_value() == "0.5" else "0.5")
        number.press("Enter")

    def spec(self, text: str) -> None:
        box = self.page.locator("#alternet-spec textarea, #alternet-spec input").first
        box.fill(text)
        box.press("Enter")

    def spec_problem(self) -> Locator:
        return self.page.locator("#alternet-spec-problem")

    def stage_toggles(self, stage: int) -> int:
        return self.page.locator(f"#alternet-stage-{stage} input[type=checkbox]").count()

    def drawing(self) -> Locator:
        return self.page.locator("#alternet-svg")

    def upload(self, path: Path) -> None:
        self.page.locator("#image-input input[type=file]").first.set_input_files(str(path))

    def bad_file_message(self, name: str) -> Locator:
        return self.page.locator(".toast-body").filter(has_text=name)

    def exceptions(self) -> list[str]:
        return [*super().exceptions(), *gradio_errors(self.page)]


class Streamlit(Front):
    name = "streamlit"

    def settle(self) -> None:
        streamlit_settled(self.page, ANALYSIS_MS)

    def shot(self, step: str) -> None:
        """Streamlit scrolls inside its own container: the viewport is made as tall as the page for the picture."""
        width = self.page.viewport_size["width"]
        height = self.page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
        self.page.set_viewport_size({"width": width, "height": min(max(height, 900), 12_000)})
        self.page.wait_for_timeout(1000)
        super().shot(step)
        self.page.set_viewport_size({"width": width, "height": 1000 if width > 500 else 844})

    def open(self, photo: Path) -> None:
        self.page.goto(self.url)
        self.page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=ANALYSIS_MS)
        self.settle()
        assert photo.name == "cat.jpg"  # the sample box's first photo

    def photo_shown(self) -> bool:
        return self.page.locator("[data-testid=stImage]").filter(has_text="cat.jpg").first.is_visible()

    def models(self) -> Locator:
        return self.page.locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.models.format(count=4))

    def ticked(self) -> list[str]:
        names = self.models().get_by_role("button", name=re.compile("^Remove ")).all()
        return [name.get_attribute("aria-label").removeprefix("Remove ") for name in names]

    def tick(self, label: str) -> None:
        self.settle()
        box = self.models().locator("input").first
        box.click()
        box.press_sequentially(label)
        option = self.page.get_by_role("option", name=label, exact=True)
        if option.count():
            option.click()
        self.page.keyboard.press("Escape")
        self.page.locator("h1").first.click()  # the list closed: while it is open the page is hidden from roles
        self.settle()

    def untick(self, label: str) -> None:
        self.settle()
        self.models().get_by_role("button", name=f"Remove {label}").click()
        self.settle()

    def models_in_sight(self) -> list[str]:
        chips, box = self.models().locator("[data-tag]").all(), self.models().bounding_box()
        inside = lambda chip: box["y"] <= chip["y"] and chip["y"] + chip["height"] <= box["y"] + box["height"]  # noqa: E731
        return [words(chip.inner_text()) for chip in chips if whole(chip) and inside(chip.bounding_box())]

    def analyze(self, expect_models: list[str], clicks: int = 1) -> None:
        self.settle()
        button = self.page.get_by_role("button", name=LABEL.analyze)
        button.dblclick() if clicks == 2 else button.click()
        waiting = self.page.get_by_text(re.compile("for the new photo|then Analyze"))  # LABEL.stale, LABEL.ready
        expect(waiting).to_have_count(0, timeout=ANALYSIS_MS)
        for i, label in enumerate(expect_models):
            expect(self.column(i).locator("h3")).to_have_text(re.compile(f"^{re.escape(label)}"), timeout=ANALYSIS_MS)
        self.settle()

    def status(self) -> str:
        summaries = self.page.locator("[data-testid=stExpander] summary")  # st.status, labelled when done
        return words(summaries.filter(has_text="Analyzed").last.inner_text())

    def column(self, i: int) -> Locator:
        columns = self.page.locator("[data-testid=stColumn]").filter(has=self.page.locator("h3"))
        return columns.filter(visible=True).nth(i)

    def heading(self, i: int) -> str:
        return words(self.column(i).locator("h3").inner_text())

    def method(self, i: int) -> str:
        return self.column(i).get_by_role("combobox", name=LABEL.method, exact=True).input_value()

    def target(self, i: int) -> str:
        return self.column(i).get_by_role("combobox", name=LABEL.target, exact=True).input_value()

    def lesioned(self, i: int) -> int:
        chosen = self.column(i).locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.lesion)
        return chosen.get_by_role("button", name=re.compile("^Remove ")).count()

    def choose_method(self, i: int, method: str, wait: bool = True) -> None:
        """Pick `method` in column `i`'s list; a list that a rerun starting just then closed is opened again."""
        streamlit_pick(self.page, self.column(i).get_by_role("combobox", name=LABEL.method), method)
        if wait:
            self.settle()

    def caption(self, i: int) -> Locator:
        return self.column(i).locator("[data-testid=stImageCaption]").first

    def check_map(self, i: int) -> None:
        self.settle()
        self.column(i).get_by_role("button", name=LABEL.check_map).click()
        self.settle()

    def curves(self, i: int) -> Locator:
        self.column(i).get_by_text(LABEL.check_curves).click()
        return self.column(i).locator(".js-plotly-plot").first

    def curves_offered(self, i: int) -> Locator:
        return self.column(i).get_by_text(LABEL.check_curves)

    def check_offered(self, i: int) -> Locator:
        return self.column(i).get_by_role("button", name=LABEL.check_map)

    def map_image(self, i: int) -> Locator:
        return self.column(i).locator("[data-testid=stImage] img").first

    def stop_map(self, i: int) -> None:
        self.column(i).get_by_role("button", name=LABEL.stop_map).click()

    def map_shown(self, i: int) -> bool:
        return self.caption(i).is_visible()

    def compute_offered(self, i: int) -> bool:
        return self.column(i).get_by_role("button", name=LABEL.compute_map).is_visible()

    def compute_map(self, i: int) -> None:
        self.settle()
        self.column(i).get_by_role("button", name=LABEL.compute_map).click()

    def rollout(self, i: int, on: bool) -> None:
        self.settle()
        box = self.column(i).get_by_role("checkbox", name=LABEL.rollout)
        if box.is_checked() != on:
            self.column(i).get_by_text(LABEL.rollout).click()
        self.settle()

    def layer_enabled(self, i: int) -> bool:
        slider = self.column(i).locator("[data-testid=stSlider]").filter(has_text=LABEL.layer).first
        return not slider.evaluate("e => !!e.querySelector('[aria-disabled=true], [disabled], [data-disabled]')")

    def switch_off(self, i: int, typed: str) -> None:
        """The first unit matching `typed` picked; a list that a rerun starting just then redrew is opened again."""
        picker = self.column(i).locator("[data-testid=stMultiSelect]").filter(has_text=LABEL.lesion)
        box = picker.locator("input")
        for _ in range(3):
            self.settle()
            streamlit_open(box)
            box.press_sequentially(typed)
            try:
                self.page.get_by_role("option").first.click(timeout=10_000)
                expect(picker.get_by_role("button", name=re.compile("^Remove "))).not_to_have_count(0)
                break
            except (PlaywrightError, AssertionError):  # a timeout, or the box drawn anew: detached
                box.fill("")
                self.page.keyboard.press("Escape")
        else:
            raise AssertionError(f"no unit matching {typed!r} could be switched off in column {i} in three tries")
        self.page.keyboard.press("Escape")

    def export_default_figure(self) -> str:
        self.settle()
        self.page.get_by_text(LABEL.exports).click()
        self.settle()
        self.page.get_by_role("button", name=LABEL.export_figure).click()
        offered = self.page.get_by_role("button", name=re.compile(r"^Download fig"))
        offered.wait_for(timeout=ANALYSIS_MS)
        with self.page.expect_download(timeout=ANALYSIS_MS) as started:
            offered.click()
        return started.value.suggested_filename

    def tour_move(self, button: str) -> None:
        self.settle()
        self.page.get_by_role("button", name="Next →" if button == "next" else "← Back").click()
        self.settle()

    def tour_position(self) -> Locator:
        return self.page.locator("[data-testid=stProgress]").filter(has_text="Step ").first

    def full_rerun(self, wait: bool = True) -> None:
        """A change that re-runs the whole page: the map opacity."""
        if wait:
            self.settle()
        slider = self.page.get_by_role("slider", name=LABEL.opacity)
        slider.focus()
        slider.press("ArrowLeft")
        if wait:
            self.settle()

    def spec(self, text: str) -> None:
        self.settle()
        box = self.page.get_by_label(LABEL.spec)
        box.fill(text)
        box.press("Enter")
        self.settle()

    def spec_problem(self) -> Locator:
        return self.page.locator("[data-testid=stAlert]").filter(has_text="s1:1").first

    def stage_toggles(self, stage: int) -> int:
        return self.page.locator(f".st-key-alternet_stage_{stage} input[type=checkbox]").count()

    def drawing(self) -> Locator:
        return self.page.locator("#alternet-svg")

    def upload(self, path: Path) -> None:
        self.settle()
        self.page.locator("input[type=file]").first.set_input_files(str(path))
        self.page.locator("[data-testid=stFileChipName]", has_text=path.name).first.wait_for(timeout=REDRAW_MS)
        self.settle()

    def bad_file_message(self, name: str) -> Locator:
        return self.page.locator("[data-testid=stAlert]").filter(has_text=name)


# The journey: each step takes a front end and records what it shows in `front.seen`.


def model_limit(front: Front, photo: Path) -> None:
    """Both ask for at most four models: a fifth tick does not stay."""
    front.open(photo)
    assert front.photo_shown(), "the photo to analyze is shown"
    for label in front.ticked():
        front.untick(label)
    for label in [RESNET, VIT, *EXTRA]:
        front.tick(label)
    front.seen["limit"] = len(front.ticked())
    assert front.seen["limit"] == 4, front.ticked()
    for label in [label for label in front.ticked() if label not in (RESNET, VIT)]:
        front.untick(label)
    assert sorted(front.ticked()) == sorted([RESNET, VIT])
    front.no_exception()


def analyze_two(front: Front, photo: Path) -> None:
    """ResNet-50 (no trained weights offline: random, and said so) and the trained ViT/4."""
    front.analyze([RESNET, VIT])
    assert "random weights" in front.heading(0) + front.column(0).inner_text()
    assert "trained here" in front.column(1).inner_text()
    front.seen["first methods"] = (front.method(0), front.method(1))
    known = re.compile("^This model knows only")  # beside a CIFAR model's top-5: which ten, and any photo gets one
    front.seen["ten classes"] = words(front.column(1).get_by_text(known).inner_text())
    assert ", ".join(CIFAR) in front.seen["ten classes"] and front.column(0).get_by_text(known).count() == 0
    front.seen["map above its controls"] = [front.map_above_controls(i) for i in range(2)]
    assert all(front.seen["map above its controls"]), "each map sits above its controls, lined up across columns"
    said = re.search(r"Analyzed .*? in [\d.]+ s\.", front.status())
    front.seen["status line"] = re.sub(r"[\d.]+ s\.$", "N s.", said.group(0)) if said else front.status()
    front.no_exception()
    front.shot("1-analyzed")


def pick_map(front: Front, photo: Path) -> None:
    """A map picked for the ViT; under rollout (every layer at once) the layer does not apply."""
    front.rollout(1, True)
    expect(front.caption(1)).to_contain_text("Attention rollout", timeout=REDRAW_MS)
    front.seen["layer under rollout"] = front.layer_enabled(1)
    assert not front.seen["layer under rollout"], "rollout spans every layer: its Layer control is disabled"
    front.rollout(1, False)
    front.choose_method(1, PICKED_MAP)
    expect(front.caption(1)).to_contain_text(PICKED_MAP, timeout=REDRAW_MS)
    front.no_exception()


def check_map(front: Front, photo: Path) -> None:
    """The ViT's map checked: the line under it says how fast removing its pixels drops the class, against random
    orders (the same words in both front ends), and its curves come on demand, named for a screen reader."""
    front.check_map(1)
    expect(front.caption(1)).to_contain_text(text.CHECK_TITLE, timeout=ANALYSIS_MS)
    line = words(front.caption(1).inner_text()).split(text.CHECK_TITLE)[1]
    front.seen["check"] = re.sub(r"\d+%", "N%", line).strip().split(". ")[0].rstrip(".")
    assert re.match(  # the verdict on this photo first, then the numbers
        r"On this photo, this map (beats|does no better than|does worse than) random order.*: removing the top N% of "
        r"this map's pixels takes",
        front.seen["check"],
    ), front.seen["check"]
    expect(front.check_offered(1)).to_be_hidden(timeout=REDRAW_MS)  # a checked map is not offered again
    plot = front.curves(1)
    expect(plot).to_be_visible(timeout=REDRAW_MS)
    expect(plot.locator("svg.main-svg").first).to_have_attribute(
        "aria-label", re.compile("^Deletion and insertion · Saliency"), timeout=REDRAW_MS
    )
    front.choose_method(1, "Grad-CAM")  # another map: no line, no curves of the checked one
    expect(front.caption(1)).to_contain_text("Grad-CAM of", timeout=REDRAW_MS)
    expect(front.caption(1)).not_to_contain_text(text.CHECK_TITLE)
    expect(front.caption(1)).not_to_contain_text("Mean attention distance")  # the model's, not this map's
    expect(front.curves_offered(1)).to_be_hidden(timeout=REDRAW_MS)
    expect(front.check_offered(1)).to_be_visible(timeout=REDRAW_MS)  # this one can be checked
    front.choose_method(1, PICKED_MAP)  # the checked map again: its line and curves again, nothing computed
    expect(front.caption(1)).to_contain_text(text.CHECK_TITLE, timeout=REDRAW_MS)
    expect(front.curves_offered(1)).to_be_visible(timeout=REDRAW_MS)
    expect(front.check_offered(1)).to_be_hidden(timeout=REDRAW_MS)
    front.no_exception()


def slow_map(front: Front, photo: Path) -> None:
    """A map that takes a while (Occlusion of ResNet-50): Stop leaves the previous map, says so and offers to
    compute the one picked; computed again, the map opacity changed meanwhile does not start it over."""
    front.choose_method(0, "Occlusion", wait=False)
    expect(front.column(0).get_by_text(re.compile(r"Occlusion: \d+/")).first).to_be_visible(timeout=REDRAW_MS)
    front.stop_map(0)
    expect(front.column(0).get_by_text(LABEL.map_stopped).first).to_be_visible(timeout=REDRAW_MS)
    front.settle()  # Streamlit writes the message before it draws the previous map under it
    front.seen["after stop"] = (front.method(0), front.compute_offered(0), front.map_shown(0))
    assert front.seen["after stop"] == ("Occlusion", True, True)  # the previous map stays, and the page says so
    expect(front.column(0)).to_contain_text(text.MAP_STOPPED.split(":")[0])
    expect(front.column(0).get_by_text("Occlusion of")).to_have_count(0)  # no half-made map is shown
    front.shot("6-stopped")
    progress = front.watch(r"Occlusion: (\d+)/")
    front.compute_map(0)
    expect(front.column(0).get_by_text(re.compile(r"Occlusion: \d+/")).first).to_be_visible(timeout=REDRAW_MS)
    front.full_rerun(wait=False)
    expect(front.caption(0)).to_contain_text("Occlusion of", timeout=ANALYSIS_MS)
    front.settle()
    steps = progress()
    # from the new map's first report on: Gradio may still show the stopped one's last ('2/') until the page's cancel
    # of that request is answered (waiting for it to go let a late request draw the map: see the closing notes)
    steps = steps[steps.index(0) :] if 0 in steps else steps
    front.seen["occlusion restarted"] = steps != sorted(steps)
    assert steps and not front.seen["occlusion restarted"], f"the map's progress went {steps}"
    assert not front.compute_offered(0)
    front.no_exception()


def lesion(front: Front, photo: Path) -> None:
    front.switch_off(1, "msa")
    expect(front.column(1).locator("h3")).to_contain_text("switched off", timeout=ANALYSIS_MS)
    front.settle()
    assert front.lesioned(1) == 1
    front.no_exception()
    front.shot("2-lesion")


def swap_model(front: Front, photo: Path) -> None:
    """The ViT swapped for AlterNet and re-analyzed: its column shows AlterNet's own defaults, nothing that was
    chosen for the ViT (the map method, the class explained, the unit switched off)."""
    front.untick(VIT)
    front.tick(ALTERNET)
    count = front.analyses()
    front.analyze([RESNET, ALTERNET])
    assert count() == 1, "one Analyze, one analysis shown"
    assert front.heading(1).startswith(ALTERNET) and "switched off" not in front.heading(1)
    assert front.lesioned(1) == 0
    method, target = front.method(1), front.target(1)
    assert method != PICKED_MAP, f"AlterNet's column kept the ViT's map method {method!r}"
    assert target.split(" (")[0] in CIFAR, f"AlterNet's class explained is not one of its CIFAR-10 classes: {target!r}"
    front.seen["alternet defaults"] = (method, target.split(" (")[0])
    front.no_exception()
    front.shot("3-swapped")


def export_figure(front: Front, photo: Path) -> None:
    front.seen["default figure"] = front.export_default_figure()
    front.no_exception()
    assert front.heading(1).startswith(ALTERNET)  # the columns are still there


def audit(front: Front, photo: Path) -> None:
    """axe-core (axe-playwright-python) on every tab after an analysis: no critical or serious violation (missing
    text alternatives, unnamed buttons, low contrast); the framework's own that remain are listed in docs/guide.md.
    Every plot shown is a named picture for a screen reader, its name saying what it found."""
    found, plots = {}, {}
    for tab in TABS:
        front.tab(tab)
        front.settle()
        named(front.page, 0, least=int(tab in PLOTTED))  # its run had begun, if it was not yet at the first look, ...
        front.settle()  # ... and has ended: Streamlit draws a tab's plots only once it is open
        named(front.page)
        violations = Axe().run(front.page).response["violations"]
        found[tab] = sorted(f"{v['id']}: {v['nodes'][0]['target']}" for v in violations if v["impact"] in SEVERE)
        # a plot drawn again while axe-core ran (Streamlit reruns a fragment) is named 0.2 s later
        named(front.page, 500, least=int(tab in PLOTTED))
        plots[tab] = front.page.evaluate(PLOT_NAMES)
    front.tab("Compare models")
    front.seen["accessibility"], front.seen["plot names"] = found, plots
    assert not any(found.values()), found
    compare = plots["Compare models"]
    assert len(compare) >= 4 and all(compare), compare  # Fig 2a per model, Figs 8 and 9, the logit lens
    unnamed = {
        tab: f"{names.count('')} of {len(names)} plots unnamed" for tab, names in plots.items() if not all(names)
    }
    assert not unnamed, unnamed
    fig9 = next(name for name in compare if name.startswith("Fig 9"))
    assert "MSA units lowered it in" in fig9, fig9  # what it found, counted, as the page says under it


def named(page: Page, quiet_ms: int = 1500, least: int = 0) -> None:
    """Waits until the tab shows at least `least` plots, drawn and named, and they have stayed so for `quiet_ms` (the
    page's script names them 0.2 s after the page last changed; a loaded machine draws a tab's plots one after another,
    seconds apart, and may draw none for seconds after the page's run ended: Streamlit loads its plotly component then).
    A plot still missing or unnamed after 30 s is left for the audit to report."""
    quiet = f"""() => {{
        const names = ({PLOT_NAMES})(), key = names.map((name) => name || '?').join('|'), now = performance.now();
        if (window.__plots !== key) {{ window.__plots = key; window.__plotsSince = now; }}
        return names.length >= {least} && !names.includes('') && now - window.__plotsSince >= {quiet_ms}; }}"""
    try:
        page.wait_for_function(quiet, polling=100, timeout=30_000)
    except PlaywrightTimeout:
        pass


def tour(front: Front, photo: Path) -> None:
    """Next and Back put the step in the address (a link a teacher can copy), and another tab takes it out; a
    full rerun of the page later keeps the tab that was clicked."""
    front.tab("Guided tour")
    addresses = []
    for move, number in (("next", 2), ("next", 3), ("back", 2)):
        front.tour_move(move)
        expect(front.tour_position()).to_contain_text(f"Step {number} of", timeout=REDRAW_MS)
        expect(front.page).to_have_url(re.compile(f"[?&]step={KEYS[number - 1]}"), timeout=REDRAW_MS)
        addresses.append(re.search(r"[?&]step=([^&]+)", front.page.url).group(1))
    front.seen["tour addresses"] = addresses
    front.shot("4-tour")
    front.tab("Compare models")  # another tab: the address no longer names a step (a reload opens Compare)
    expect(front.page).not_to_have_url(re.compile(r"[?&]step="), timeout=REDRAW_MS)
    front.full_rerun()
    front.settle()
    front.seen["tab after a rerun"] = front.selected_tab()
    assert front.seen["tab after a rerun"] == "Compare models"
    front.no_exception()


def alternet_spec(front: Front, photo: Path) -> None:
    front.tab("AlterNet (Section 4)")
    expect(front.drawing()).to_have_attribute("aria-label", re.compile("AlterNet architecture"), timeout=ANALYSIS_MS)
    front.spec(BAD_SPEC)
    problem = front.spec_problem()
    expect(problem).to_be_visible(timeout=REDRAW_MS)
    front.seen["bad spec"] = words(problem.inner_text().replace("⚠️", ""))  # the sign: text in one, an icon in one
    front.seen["bad spec is an alert"] = front.page.get_by_role("alert").filter(has_text=BAD_SPEC[:4]).count() > 0
    front.seen["stage toggles"] = [front.stage_toggles(stage) for stage in range(1, 5)]
    assert front.seen["stage toggles"] == [2, 3, 5, 3], "a toggle per block that may be an MSA (not block 1)"
    front.shot("5-bad-spec")
    front.spec(GOOD_SPEC)
    expect(front.drawing()).to_have_attribute("aria-label", DRAWING.format(spec=GOOD_SPEC), timeout=ANALYSIS_MS)
    expect(problem).to_be_hidden(timeout=REDRAW_MS)
    front.no_exception()
    compare, alternet = fig9_colours(front.page, RESNET), fig9_colours(front.page, "PreAct")
    front.seen["alternet colour"] = colour_of(alternet, "AlterNet")
    assert colour_of(compare, "AlterNet") == front.seen["alternet colour"], (compare, alternet)
    front.tab("Compare models")


def double_click(front: Front, photo: Path) -> None:
    """A double click on Analyze (another photo, the same models) analyzes once."""
    front.upload(photo.with_name("coffee.jpg"))
    count = front.analyses()
    front.analyze([RESNET, ALTERNET], clicks=2)
    front.page.wait_for_timeout(3000)  # a second analysis, were it started, would show by now
    front.settle()
    front.seen["double click"] = count()
    assert front.seen["double click"] == 1, f"{front.seen['double click']} analyses for a double click"
    front.no_exception()


def not_an_image(front: Front, photo: Path) -> None:
    """A file that is not an image, uploaded and analyzed: named in one line, the same in both."""
    path = front.tmp / "notes.jpg"
    path.write_text("not a photo")
    front.upload(path)
    front.settle()
    front.page.get_by_role("button", name=LABEL.analyze).click()
    shown = front.bad_file_message("notes.jpg")
    expect(shown.first).to_be_visible(timeout=REDRAW_MS)
    line = re.search(r"notes\.jpg: [^\n]*", shown.first.inner_text())
    assert line, shown.first.inner_text()
    front.seen["bad file"] = line.group(0).strip()
    assert "Traceback" not in front.seen["bad file"] and "/" not in front.seen["bad file"]


def phone(front: Front, photo: Path) -> None:
    """At a phone's 390 px: Analyze, every tab and every chosen model in sight, each name whole."""
    chosen = sorted(front.ticked())
    front.page.set_viewport_size({"width": 390, "height": 844})
    front.page.wait_for_timeout(1500)
    button = front.page.get_by_role("button", name=LABEL.analyze).bounding_box()
    assert button and button["x"] >= 0 and button["x"] + button["width"] <= 390, button
    front.seen["tabs at phone width"] = [
        words(tab.inner_text()) for tab in front.page.get_by_role("tab").all() if whole(tab)
    ]
    assert front.seen["tabs at phone width"] == TABS, front.seen["tabs at phone width"]
    front.seen["models at phone width"] = sorted(front.models_in_sight())
    assert front.seen["models at phone width"] == chosen, (front.seen["models at phone width"], chosen)
    front.no_exception()
    front.shot("7-phone")
    front.page.set_viewport_size({"width": 1440, "height": 1000})


JOURNEY = [model_limit, analyze_two, pick_map, check_map, lesion, swap_model, export_figure, audit, tour, alternet_spec]
JOURNEY += [slow_map, double_click, phone, not_an_image]


def journey(front_end: str, request, page: Page, photo: Path, output_dir: Path, tmp_path: Path) -> dict[str, object]:
    """What `front_end` showed along the whole journey, which runs once per test session (a failed one is not
    run again: its failure is what is kept)."""
    if front_end not in SEEN:
        page.set_viewport_size({"width": 1440, "height": 1000})
        url = request.getfixturevalue("server_url" if front_end == "gradio" else "streamlit_url")
        front = (Gradio if front_end == "gradio" else Streamlit)(page, url, output_dir, tmp_path)
        SEEN[front_end] = AssertionError(f"the {front_end} journey failed")
        for step in JOURNEY:
            try:
                step(front, photo)
            except Exception:
                front.shot(f"failed-{step.__name__}")
                raise
        SEEN[front_end] = front.seen
    if isinstance(SEEN[front_end], Exception):
        raise SEEN[front_end]
    return SEEN[front_end]


@pytest.mark.parametrize("front_end", ["gradio", "streamlit"])
def test_the_journey(front_end: str, request, page: Page, sample_photo: Path, output_dir: Path, tmp_path: Path):
    journey(front_end, request, page, sample_photo, output_dir, tmp_path)


def test_both_front_ends_showed_the_same(request, page: Page, sample_photo: Path, output_dir: Path, tmp_path: Path):
    """The same limits, defaults, links and messages in both front ends (the journeys run here if not yet run)."""
    gradio, streamlit = (journey(f, request, page, sample_photo, output_dir, tmp_path) for f in ("gradio", "streamlit"))
    assert set(gradio) == set(streamlit), (sorted(gradio), sorted(streamlit))
    differ = {
        what: narrowed(gradio[what], streamlit[what]) for what in sorted(gradio) if gradio[what] != streamlit[what]
    }
    assert not differ, pformat(differ, width=120)  # a string, shown whole: pytest cuts a long object's repr


def narrowed(gradio: object, streamlit: object) -> tuple[object, object]:
    """Two values seen that differ, each a dict narrowed to the keys whose values differ."""
    if isinstance(gradio, dict) and isinstance(streamlit, dict):
        keys = [key for key in {**gradio, **streamlit} if gradio.get(key) != streamlit.get(key)]
        return {key: gradio.get(key) for key in keys}, {key: streamlit.get(key) for key in keys}
    return gradio, streamlit

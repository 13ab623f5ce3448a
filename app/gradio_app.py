"""ViT explorer in Gradio: upload a photo, compare models side by side, explore what they measure.

python -m app.gradio_app --host 127.0.0.1 --port 7860
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import gradio as gr
import numpy as np
from starlette.middleware import Middleware

from app.cifar_lab import CifarLab
from app.gradio_ui import alternet as alternet_panel
from app.gradio_ui import dataset as dataset_panel
from app.gradio_ui import paper as findings_panel
from app.gradio_ui import tour as tour_panel
from app.gradio_ui.downloads import saved, shown_on
from app.gradio_ui.errors import REFUSAL_CSS, SHOW_REFUSALS, user_facing, watched
from app.gradio_ui.photo import PREVIEW_CSS, WATCH_PREVIEW, photo_input, refused_line
from app.gradio_ui.repeats import dropping_repeats
from app.gradio_ui.sessions import OnePerSession, Sessions
from app.gradio_ui.stops import MapRequests, ask_stop, stopped_since
from app.guard import Proxies, RequestGuard, SessionFiles, Uploads
from app.logs import configure as configure_logging
from app.paper_findings import PaperFindings
from app.service import (
    AUTO,
    IG_DEFAULT_STEPS,
    MAX_MODELS,
    SAMPLES,
    WEIGHT_LABELS,
    WEIGHT_MODES,
    ModelRun,
    Service,
    default_models,
)
from app.tabs import Problem
from app.tabs.alternet import AlterNetTab
from app.tabs.compare import DEFAULT_FIGURE, Column, CompareTab, Look, Page, attention_controls
from app.tabs.dataset import DatasetTab
from app.tabs.paper import PaperTab
from app.tabs.tour import TourTab
from app.views import evidence
from app.views import texts as text
from app.views.attention import ATTENTION, COLORMAPS, LENS, MEAN, ViewOptions
from app.views.texts import LABEL

UPLOADS = Uploads.gradio(tuple(SAMPLES))
FILES = SessionFiles(UPLOADS)  # the uploads each session named: deleted when its page closes
service = Service.start(uploads=UPLOADS)
tab = CompareTab(service)
MAPS = MapRequests()  # which map request each column asked for last: its end hides the Stop
QUEUE_SIZE = 64  # requests waiting past this are refused with "queue is full"
CONCURRENCY = 8  # events of one kind in progress at once; their model work takes turns (app/turns.py)
MAX_UPLOAD = "50mb"
SESSION_TTL_S = 3600  # a browser session's stored results are dropped an hour after their last change
FILE_TTL_S = 3600  # uploaded and generated files are deleted after an hour (checked every 10 minutes)
SESSIONS_HIGH_MB = float(os.environ.get("VIT_EXPLORER_SESSIONS_HIGH_MB", 4000))  # past it, idle sessions go early


@dataclass
class Slot:
    """One model's column: header, predictions, where it looks (with its controls), Fig 2a."""

    column: gr.Column
    header: gr.Markdown
    predictions: gr.Label
    view: gr.Image
    caption: gr.Markdown
    controls: gr.Group
    layer: gr.Slider
    head: gr.Dropdown
    rollout: gr.Checkbox
    method: gr.Dropdown
    target: gr.Dropdown
    not_offered: gr.Markdown
    lesion: gr.Dropdown
    stop: gr.Button
    compute: gr.Button  # after a Stop: compute the map the controls ask for
    spectrum_column: gr.Column
    spectrum: gr.Plot

    @property
    def options(self) -> list[gr.components.Component]:
        """What the map shows: layer, head, rollout, method and class (ViewOptions' order)."""
        return [self.layer, self.head, self.rollout, self.method, self.target]

    @property
    def outputs(self) -> list[gr.components.Component]:
        return [
            self.column,
            self.header,
            self.predictions,
            self.view,
            self.caption,
            self.controls,
            *self.options,
            self.not_offered,
            self.lesion,
            self.compute,
            self.spectrum_column,
            self.spectrum,
        ]

    def show(self, column: Column | None) -> dict:
        """The slot's updates: filled in from `column`, hidden when unused."""
        if column is None:
            return {self.column: gr.Column(visible=False), self.spectrum_column: gr.Column(visible=False)}
        shown, method = column.options, column.options.method or column.methods[0]
        layer, head, rollout = attention_controls(shown.rollout, method)  # which of them apply to the map
        target = column.classes[0][1] if shown.target is None else shown.target
        return {
            self.column: gr.Column(visible=True),
            self.header: column.title,
            self.predictions: gr.Label(column.top5, label=column.top5_title, show_heading=not column.random),
            self.view: gr.Image(column.image, label=column.map_title),
            self.caption: with_distance(column.caption, column.distance),
            self.controls: gr.Group(visible=column.layers > 0),
            self.layer: gr.Slider(
                1, max(column.layers, 2), value=shown.layer or max(column.layers, 1), step=1, interactive=layer
            ),
            self.head: gr.Dropdown(column.heads, value=shown.head, interactive=head),
            self.rollout: gr.Checkbox(value=shown.rollout, visible=column.rollout, interactive=rollout),
            self.method: gr.Dropdown(column.methods, value=method),
            self.target: gr.Dropdown(column.classes, value=target),
            self.not_offered: f"Not offered for this model: {column.not_offered}" if column.not_offered else "",
            self.lesion: gr.Dropdown(choices=column.units, value=column.lesion),
            self.compute: gr.Button(visible=False),
            self.spectrum_column: gr.Column(visible=True),
            self.spectrum: column.spectrum,
        }


def compare_column(i: int) -> list:
    with gr.Column(visible=False, min_width=260, elem_id=f"model-{i}") as column:
        header = gr.Markdown()
        predictions = gr.Label(num_top_classes=5, label="Top-5 predictions")
        view = gr.Image(
            label="Where it looks",
            interactive=False,
            format="png",
            height=340,
            buttons=["download", "fullscreen"],
            elem_id=f"view-{i}",
        )
        caption = gr.Markdown(elem_classes="caption")
        stop = gr.Button(LABEL.stop_map, size="sm", variant="stop", visible=False, elem_id=f"stop-{i}")
        compute = gr.Button(LABEL.compute_map, size="sm", visible=False, elem_id=f"compute-{i}")
        method = gr.Dropdown([], label=LABEL.method, elem_id=f"method-{i}")  # how each is made: above the columns
        target = gr.Dropdown([], label=LABEL.target, elem_id=f"target-{i}")
        not_offered = gr.Markdown(elem_classes="caption")
        with gr.Group(visible=False) as controls:
            layer = gr.Slider(1, 12, value=1, step=1, label=LABEL.layer)  # set to the last layer on Analyze
            with gr.Row():
                head = gr.Dropdown([MEAN], value=MEAN, label=LABEL.head, min_width=80)
                rollout = gr.Checkbox(label=LABEL.rollout, min_width=80)
        lesion = gr.Dropdown(
            [], value=[], multiselect=True, label=LABEL.lesion, info=text.LESION, elem_id=f"lesion-{i}"
        )
    return [
        column,
        header,
        predictions,
        view,
        caption,
        controls,
        layer,
        head,
        rollout,
        method,
        target,
        not_offered,
        lesion,
        stop,
        compute,
    ]


def page_updates(page: Page, slots: list[Slot]) -> dict:
    """Every slot, Fig 8 and Fig 9 with what they show here, and the runs kept in the session state."""
    updates = {
        state: page.runs,
        high_frequency: page.high_frequency,
        variance: page.variance,
        high_frequency_here: page.high_frequency_here,
        variance_here: page.variance_here,
        lens: page.lens,
        lens_here: page.lens_here,
    }
    for i, slot in enumerate(slots):
        updates |= slot.show(page.columns[i] if i < len(page.columns) else None)
    return updates


ANALYZING = OnePerSession()


@user_facing
def analyze_page(
    image: str | None,
    names: list[str],
    weights: str,
    colormap: str,
    opacity: float,
    log_y: bool,
    typed: str | None = None,
    request: gr.Request = None,
    progress: gr.Progress = gr.Progress(),
) -> dict:
    """Run the analysis for the page; `typed` adds any timm models named in the text box to the checked ones.
    A second Analyze of the session while one runs (a double click) changes nothing and ends at once."""
    with ANALYZING.only_one(request) as first:
        if not first:
            return gr.skip()
        look = Look(colormap, opacity, log_y)
        page = tab.analyze(image, names, typed, weights, look, report=watched(progress, request))
    return page_updates(page, slots) | {
        status: page.status,
        analyzed_photo: image or "",
        shaded: gr.Dropdown([(run.result.label, i) for i, run in enumerate(page.runs)], value=0),
        figure_name: gr.Dropdown(page.figure_choices, value=DEFAULT_FIGURE),
        exported: gr.File(value=None, visible=False),  # an export of the previous analysis must not stay on offer
        views: {},  # nor its columns' chosen maps
    }


CLOSING_ERRORS = (
    "() => document.querySelectorAll('.toast-body.error [data-testid=toast-close]').forEach((close) => close.click())"
)


def refused_status(photo: dict | None) -> str | dict:
    """The status line after a failed Analyze: the line `photo` (as sent, not preprocessed) was refused with,
    else as it was."""
    line = refused_line(photo)
    return gr.skip() if line is None else html.escape(line, quote=False)


def view_options(
    layer: float | None, head: str | None, rollout: bool, method: str | None, target, steps
) -> ViewOptions:
    """A slot's controls as ViewOptions (the class as its index, steps for Integrated Gradients)."""
    return ViewOptions(
        int(layer or 1),
        head or MEAN,
        bool(rollout),
        method or "",
        None if target in (None, "") else int(target),
        int(steps or IG_DEFAULT_STEPS),
    )


def with_distance(caption: str, distance: str) -> str:
    """A map's caption, then the column's attention distance line where it has one (after every redraw too)."""
    return f"{caption}  \n{distance}" if distance else caption


# The layer, head and rollout controls enabled where they apply to the map: attention_controls' rule, run in the
# browser (a request per change would take one of the page's few places in the server's queue, app.guard)
APPLYING_CONTROLS = f"""(rollout, method) => {{
    const attention = !rollout && method === {json.dumps(ATTENTION)};
    const interactive = (on) => ({{__type__: "update", interactive: on}});
    return [interactive(attention || method === {json.dumps(LENS)}), interactive(attention),
        interactive(method === {json.dumps(ATTENTION)})];
}}"""


def draw_map(
    runs: list[ModelRun],
    slot: int,
    options: ViewOptions,
    look: Look,
    request: gr.Request | None,
    progress,
    started: float,
) -> tuple[np.ndarray, str] | None:
    """One slot's map as `options` choose it and its caption: from the stored results, or from an attribution
    computed once for the run (with progress); None when the column was stopped after the request `started`
    (time.monotonic): by its Stop (whose button said so) or by a newer map asked for (which draws its own)."""
    try:
        image, caption = tab.view(runs[slot], options, look, watched(progress, request, slot, started))
    except Problem:
        if stopped_since(request, started, slot):  # no error on top of the Stop's own message
            return None
        MAPS.end(request, slot, started)
        raise
    if stopped_since(request, started, slot):  # done as it was stopped: the Stop's message or the newer map stands
        return None
    MAPS.end(request, slot, started)
    return image, with_distance(caption, evidence.distance_here(runs[slot].result))


def redraw(slot: int) -> Callable:
    """The handler re-drawing one slot's map as its controls ask."""

    @user_facing
    def view(
        runs: list[ModelRun],
        views: dict[int, ViewOptions],
        colormap: str,
        opacity: float,
        steps: float,
        layer: float,
        head: str,
        rollout: bool,
        method: str | None = None,
        target: int | None = None,
        request: gr.Request = None,
        progress: gr.Progress = gr.Progress(),
    ):
        options, started = view_options(layer, head, rollout, method, target, steps), time.monotonic()
        look = Look(colormap, opacity)
        drawn = draw_map(runs, slot, options, look, request, progress, started) if slot < len(runs) else None
        return (gr.skip(),) * 3 if drawn is None else (*drawn, {**views, slot: options})

    return view


@user_facing
def redraw_steps(request: gr.Request, progress: gr.Progress = gr.Progress(), *inputs) -> list:
    """Every Integrated Gradients map for a new number of steps, column by column (the other maps stay): one
    event for the page, as one per column would pass the page's limit of requests in flight.
    `inputs`: the runs, views, colormap, opacity, steps and each slot's five controls. A column's problem is
    a warning naming its model, and the other columns are still drawn; a column stopped since the request was
    asked for (its Stop, a newer change of its controls or of the steps), even while it waited in the queue, is
    left to what stopped it."""
    runs, views, colormap, opacity, steps, *controls = inputs
    look, drawn, chosen, started = Look(colormap, opacity), [], dict(views), MAPS.page_asked(request)
    for i in range(MAX_MODELS):
        options, shown = view_options(*controls[5 * i : 5 * i + 5], steps), None
        try:
            if i < len(runs) and options.uses_steps(runs[i]):
                shown = draw_map(runs, i, options, look, request, progress, started)
        except Problem as problem:
            gr.Warning(f"{runs[i].result.label}: {problem}")
        if shown is not None:
            chosen[i] = options
        drawn += [gr.skip(), gr.skip()] if shown is None else list(shown)
    return [*drawn, chosen]


@user_facing
def restyle(runs: list[ModelRun], colormap: str, opacity: float, steps: float, *controls) -> list:
    """Every column's map in new colours or opacity, from stored results: one event for the page (one per column
    would pass the page's limit of requests in flight). A map being computed is drawn once it is done, in the
    new look; one left unfinished by a Stop stays as it is (nothing is computed here)."""
    look, drawn = Look(colormap, opacity), []
    for i in range(MAX_MODELS):
        options = view_options(*controls[5 * i : 5 * i + 5], steps)
        shown = tab.restyle(runs[i], options, look) if i < len(runs) else None
        distance = evidence.distance_here(runs[i].result) if shown else ""
        drawn += [gr.skip(), gr.skip()] if shown is None else [shown[0], with_distance(shown[1], distance)]
    return drawn


def stop_button(slot: int) -> Callable:
    """The handler run as a slot's map is asked for, before its request: it stops the slot's map in progress,
    which the controls no longer ask for (the browser sends the new request once that one has ended), and shows
    the Stop button when the new map has to be computed (hidden when it is drawn)."""

    def shown(
        runs: list[ModelRun],
        _views,
        _colormap,
        _opacity,
        steps,
        layer,
        head,
        rollout,
        method,
        target,
        request: gr.Request = None,
    ):
        ask_stop(request, slot, anew=True)
        MAPS.ask(request, slot)
        computed = slot >= len(runs) or view_options(layer, head, rollout, method, target, steps).computed(runs[slot])
        return gr.Button(visible=not computed)

    return shown


def stop_buttons(request: gr.Request, *inputs) -> list[gr.Button]:
    """stop_button for each slot whose map a change of the steps asks for anew, an Integrated Gradients map
    (`inputs` as for redraw_steps); the others are left as they are. Then the page-wide redraw is asked for."""
    runs, views, colormap, opacity, steps, *controls = inputs
    buttons = []
    for i in range(MAX_MODELS):
        mine = controls[5 * i : 5 * i + 5]
        redrawn = i < len(runs) and view_options(*mine, steps).uses_steps(runs[i])
        buttons.append(stop_button(i)(runs, views, colormap, opacity, steps, *mine, request) if redrawn else gr.skip())
    MAPS.ask_page(request)
    return buttons


def settled_hides(slots: range) -> Callable:
    """The handler hiding the Stop and Compute buttons of `slots` after a map request, except for a slot whose
    map has been asked for again since (a stopped request ends late, maybe after Compute has shown its Stop)."""

    def hide(request: gr.Request) -> list:
        hidden, kept = [gr.Button(visible=False)] * 2, [gr.skip()] * 2
        return [button for i in slots for button in (hidden if MAPS.settled(request, i) else kept)]

    return hide


def hide_stop(slot: int) -> Callable:
    """The handler of one slot's Stop: stop its map work, hide the button, say that the map was not finished
    (the one shown is the previous map) and offer to compute it (a request ending now leaves that offer)."""

    def stop(request: gr.Request) -> tuple[gr.Button, str, gr.Button]:
        ask_stop(request, slot)
        MAPS.ask(request, slot)
        return gr.Button(visible=False), f"{LABEL.map_stopped} {text.MAP_STOPPED}", gr.Button(visible=True)

    return stop


def lesion(slot: int) -> Callable:
    """The handler re-running one slot's model with the chosen units switched off (none: restored)."""

    @user_facing
    def switch_off(
        runs: list[ModelRun],
        chosen: dict[int, ViewOptions],
        indices: list[int],
        colormap: str,
        opacity: float,
        log_y: bool,
        shade: int = 0,
        request: gr.Request = None,
        progress: gr.Progress = gr.Progress(),
    ) -> dict:
        look = Look(colormap, opacity, log_y, shade or 0)
        page = tab.lesion(runs, slot, indices, look, chosen.get(slot), watched(progress, request))
        updates = page_updates(page, slots)
        shown = (state, high_frequency, variance, *here, *slots[slot].outputs)
        return {key: value for key, value in updates.items() if key in shown} | {
            views: {**chosen, slot: page.columns[slot].options}
        }

    return switch_off


@user_facing
def analyze(image: dict, models: list[str], weights: str = "", method: str = "", target: int | None = None) -> dict:
    """The engine CLI's JSON for one image (a file) and a list of model names; weights 'auto' (or empty:
    the trained weights where they can be had, else random), 'pretrained', 'random', or the name of a
    bundled checkpoint (never a path). An attribution `method` (Grad-CAM, Saliency, SmoothGrad, Integrated
    Gradients, Occlusion, Gradient x attention) adds each model's map for class `target` (default: top-1)."""
    return tab.analysis_json(image, models, weights, method or None, target)


@user_facing
def export_one_figure(
    runs: list[ModelRun], name: str, fmt: str, log_y: bool = True, shade: int | None = 0, photo: str | None = None
) -> str:
    """The chosen figure of the analyzed models as a PNG (2x) or SVG file, drawn as on screen, its subtitle
    naming the `photo` analyzed (a path or a file name)."""
    look = Look(log_y=log_y, shaded=shade or 0)
    return saved(tab.export_figure(runs, name, fmt, look, Path(photo).name if photo else ""))


@user_facing
def export_pack(
    runs: list[ModelRun],
    photo: str | None,
    colormap: str,
    log_y: bool = True,
    shade: int | None = 0,
    views: dict[int, ViewOptions] | None = None,
) -> str:
    """Every figure, input, map and value of the analysis, with a handout, as one ZIP; each map as its
    column shows it (`views`: the session's last view per column); `photo` is the one analyzed (a path or a
    file name), not the one in the upload box now."""
    chosen = [(views or {}).get(slot) for slot in range(len(runs))]
    look = Look(colormap, log_y=log_y, shaded=shade or 0)
    return saved(tab.export_pack(runs, Path(photo).name if photo else "photo", look, chosen))


def forward_passes() -> int:
    """Forward passes the loaded models have made since the server started."""
    return service.forward_passes


def on_load():
    return gr.Markdown(text.OFFLINE, visible=not service.online)


with gr.Blocks(title="ViT explorer", delete_cache=(600, FILE_TTL_S)) as demo:
    gr.Markdown(text.INTRO)
    banner = gr.Markdown(visible=False, elem_id="banner")
    state = gr.State([], time_to_live=SESSION_TTL_S)
    views = gr.State({}, time_to_live=SESSION_TTL_S)  # each column's map as last chosen, for the exports
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            image = photo_input(label=LABEL.photo, sources=["upload", "clipboard"], height=320, elem_id="image-input")
        with gr.Column(scale=3):
            models = gr.CheckboxGroup(
                service.models(),
                value=list(default_models(service.online)),
                label=LABEL.models.format(count=MAX_MODELS),
                elem_id="models",
            )
            typed_models = gr.Textbox(
                label=LABEL.typed_models,
                placeholder=LABEL.typed_placeholder,
                info=text.ANY_TIMM,
                elem_id="typed-models",
            )
            weights = gr.Radio(
                [(WEIGHT_LABELS[mode], mode) for mode in WEIGHT_MODES],
                value=AUTO,
                label=LABEL.weights,
                info=text.WEIGHTS,
            )
            run = gr.Button(LABEL.analyze, variant="primary")
            status = gr.Markdown(LABEL.ready, min_height=48, elem_id="status")
            analyzed_photo = gr.Textbox(visible=False)  # the photo the results are for, for the note below
            gr.Examples([[str(path)] for path in SAMPLES], inputs=image, label="Sample photos")
    with gr.Tabs() as tabs:
        with gr.Tab("Compare models", id="compare"):
            gr.Markdown(text.COMPARE)
            with gr.Row():
                colormap = gr.Dropdown(list(COLORMAPS), value="inferno", label=LABEL.colormap)
                opacity = gr.Slider(0, 1, value=0.6, step=0.05, label=LABEL.opacity)
                steps = gr.Slider(8, 128, value=IG_DEFAULT_STEPS, step=8, label=LABEL.ig_steps, elem_id="ig-steps")
            with gr.Accordion(LABEL.methods, open=False):
                gr.Markdown(text.METHODS)
            with gr.Row(equal_height=False):
                compare = [compare_column(i) for i in range(MAX_MODELS)]
            gr.Markdown(text.FOURIER)
            spectra = []
            with gr.Row(equal_height=False):
                for i in range(MAX_MODELS):
                    with gr.Column(visible=False, min_width=260) as column:
                        spectra.append((column, gr.Plot(show_label=False, elem_id=f"spectrum-{i}")))
            with gr.Accordion(LABEL.exports, open=False):
                with gr.Row(equal_height=False):
                    figure_name = gr.Dropdown([], label=LABEL.export_figure_name, elem_id="export-figure")
                    figure_format = gr.Radio(["png", "svg"], value="png", label=LABEL.export_format)
                    with gr.Column():
                        export_one = gr.Button(LABEL.export_figure, elem_id="export-one")
                        export_all = gr.Button(LABEL.export_pack, elem_id="export-pack")
                exported = gr.File(label=LABEL.download, interactive=False, visible=False, elem_id="export-file")
            with gr.Row(equal_height=False):
                with gr.Column():
                    gr.Markdown(text.HIGH_FREQUENCY)
                    high_frequency = gr.Plot(show_label=False, elem_id="high-frequency")
                    high_frequency_here = gr.Markdown(elem_id="high-frequency-here")
                with gr.Column():
                    gr.Markdown(text.VARIANCE)
                    variance = gr.Plot(show_label=False, elem_id="variance")
                    variance_here = gr.Markdown(elem_id="variance-here")
                    with gr.Row():
                        log_y = gr.Checkbox(value=True, label=LABEL.log_y)
                        shaded = gr.Dropdown([("the first model", 0)], value=0, label=LABEL.shaded, elem_id="shaded")
            gr.Markdown(text.LENS)
            lens = gr.Plot(show_label=False, elem_id="logit-lens")
            lens_here = gr.Markdown(elem_id="logit-lens-here")
            dataset_panel.build(DatasetTab(service), models, typed_models, weights)
        with gr.Tab("AlterNet (Section 4)", id="alternet"):
            alternet_panel.build(demo, AlterNetTab(CifarLab(service)), image)
        with gr.Tab("Paper figures", id="paper"):
            findings_panel.build(PaperTab(PaperFindings(service)), image)
        with gr.Tab("Guided tour", id="tour") as tour_page:
            tour_panel.build(TourTab(service), state, tabs, tour_page, demo, analyzed_photo)
    here = [high_frequency_here, variance_here, lens, lens_here]  # before Figs 8 and 9 in every output list
    slots = [Slot(*parts, *spectrum) for parts, spectrum in zip(compare, spectra)]

    # another photo than the one analyzed: the status line says the results shown are for the previous one (in
    # the browser: no request); an upload that ends after its own Analyze has finished is not another photo
    # (not while an Analyze runs: a photo uploaded as it was pressed is the one analyzed; at its end, it is checked;
    # nor before any photo was analyzed: then no results are shown, and the line may say why one was refused)
    # (a kept line is left unwritten, not written back: the line read with the inputs may predate the Analyze's own)
    stale, kept = json.dumps(LABEL.stale.format(previous="the previous photo")), "{__type__: 'update'}"
    said = f"!analyzed || (photo && photo.path === analyzed) ? {kept} : {stale}"
    photos = [image, analyzed_photo]
    image.change(None, photos, status, js=f"(photo, analyzed) => window.__vitAnalyzing ? {kept} : {said}")
    # at most MAX_MODELS ticked, as Streamlit's picker allows: a tick past the limit is undone (in the browser)
    models.input(None, models, models, js=f"(picked) => [picked.slice(0, {MAX_MODELS})]")
    analyzing = run.click(
        analyze_page,
        [image, models, weights, colormap, opacity, log_y, typed_models],
        [
            state,
            status,
            analyzed_photo,
            *[c for slot in slots for c in slot.outputs],
            *here,
            shaded,
            high_frequency,
            variance,
            figure_name,
            exported,
            views,
        ],
        api_name="run",
        show_progress_on=status,
        # a double click analyzes once; one sent marks the page as analyzing, for the stale note above
        js=f"""(...inputs) => {{ const sent = ({dropping_repeats("analyze")})(...inputs);
            if (Array.isArray(sent)) window.__vitAnalyzing = true;
            return sent; }}""",
    )
    done = f"(photo, analyzed) => {{ window.__vitAnalyzing = false; return {said}; }}"
    analyzing.success(None, photos, status, js=done)
    analyzing.failure(None, js="() => { window.__vitAnalyzing = false; }")
    # a successful Analyze closes the error toasts before it: their problem is behind the user (an error stays
    # up until then, or until closed, so that it can be read whatever the time it takes to act on it)
    analyzing.success(None, js=CLOSING_ERRORS)
    # a photo refused on the way in: the status line says so (the line of its error), over the "Error" mark
    analyzing.failure(refused_status, image, status, preprocess=False, queue=False, api_visibility="private")
    every_control = [c for slot in slots for c in slot.options]
    stops_and_computes = [button for slot in slots for button in (slot.stop, slot.compute)]
    private = {"queue": False, "api_visibility": "private"}
    # the steps apply to every column: one event for the page (one per column would pass its limit in flight)
    steps_inputs = [state, views, colormap, opacity, steps, *every_control]
    gr.on([steps.input], stop_buttons, steps_inputs, [slot.stop for slot in slots], **private)
    styled = gr.on(
        [steps.input],
        redraw_steps,
        steps_inputs,
        [*[c for slot in slots for c in (slot.view, slot.caption)], views],
        api_name="restyle_steps",
        api_visibility="private",
        show_progress_on=[slot.view for slot in slots],
        trigger_mode="always_last",  # a second change of the steps while the first one's maps are drawn: after
    )
    styled.then(settled_hides(range(MAX_MODELS)), None, stops_and_computes, **private)
    for i, slot in enumerate(slots):
        inputs, outputs = [state, views, colormap, opacity, steps, *slot.options], [slot.view, slot.caption, views]
        changes = [slot.layer.input, slot.head.input, slot.rollout.input, slot.method.input, slot.target.input]
        # the browser runs a trigger's listeners in the order made, each after the one before has finished:
        # the quick ones (the Stop button, the controls that apply) come before the map, which may take minutes
        gr.on(changes, stop_button(i), inputs, slot.stop, **private)  # only while computing
        gr.on(
            [slot.rollout.input, slot.method.input],
            None,
            [slot.rollout, slot.method],
            [slot.layer, slot.head, slot.rollout],
            js=APPLYING_CONTROLS,
        )  # rollout takes every layer and head; other methods use none of them
        chosen = gr.on(
            changes,
            redraw(i),
            inputs,
            outputs,
            api_name=f"view_{i}",
            show_progress_on=slot.view,
            trigger_mode="always_last",
        )
        # its Stop and "Compute this map" go once the map asked for last is drawn (a Stop keeps Compute)
        chosen.then(settled_hides(range(i, i + 1)), None, [slot.stop, slot.compute], **private)
        # after a Stop, "Compute this map" computes the map the controls ask for
        computing = slot.compute.click(lambda: gr.Button(visible=False), None, slot.compute, **private)
        computing.then(stop_button(i), inputs, slot.stop, **private)
        asked = computing.then(
            redraw(i), inputs, outputs, show_progress_on=slot.view, api_name=f"compute_{i}", api_visibility="private"
        )
        asked.then(settled_hides(range(i, i + 1)), None, [slot.stop, slot.compute], **private)
        slot.stop.click(hide_stop(i), None, [slot.stop, slot.caption, slot.compute], queue=False, api_name=f"stop_{i}")
        # the page cancels a listener's requests one after the other, each looked up once the one before is
        # cancelled: one listener per request, so that a slow cancel cannot reach a Compute pressed after it.
        # The steps' redraw (every column's) is not cancelled: the Stop stops this column's part of it
        for work in (chosen, asked):
            slot.stop.click(None, js="() => []", cancels=[work])
        gr.on(
            [slot.lesion.input],
            lesion(i),
            [state, views, slot.lesion, colormap, opacity, log_y, shaded],
            [state, *slot.outputs, *here, high_frequency, variance, views],
            api_name=f"lesion_{i}",
            show_progress_on=slot.lesion,
        )
    gr.on(
        [colormap.input, opacity.input],
        restyle,
        [state, colormap, opacity, steps, *every_control],
        [c for slot in slots for c in (slot.view, slot.caption)],
        api_visibility="private",
        show_progress="hidden",  # a map being computed shows its own progress
        trigger_mode="always_last",
    )
    gr.on(
        [log_y.input, shaded.input],
        lambda runs, log, shade: tab.curves(runs, Look(log_y=log, shaded=shade or 0)),
        [state, log_y, shaded],
        [high_frequency, variance, lens],
        api_visibility="private",
    )
    gr.api(analyze, api_name="analyze")
    gr.api(forward_passes, api_name="forward_passes")
    shown_on(export_one, exported)
    shown_on(export_all, exported)
    export_one.click(
        export_one_figure,
        [state, figure_name, figure_format, log_y, shaded, analyzed_photo],
        exported,
        api_name="export_figure",
    )
    export_all.click(
        export_pack,
        [state, analyzed_photo, colormap, log_y, shaded, views],
        exported,
        api_name="export_pack",
    )
    demo.load(on_load, None, banner, api_visibility="private")
    demo.load(None, js=WATCH_PREVIEW)
    demo.load(None, js=SHOW_REFUSALS)
    sessions = Sessions(demo, FILES, SESSIONS_HIGH_MB)
    demo.unload(sessions.close)

CSS = (
    """#banner, #alternet-banner {background: #fff4e5; border-left: 4px solid #f59e0b; padding: 8px 12px}
.caption {font-size: 0.85em}
#alternet-steps table {display: block; overflow-x: auto}
#alternet-steps td:last-child {white-space: nowrap}
"""
    + PREVIEW_CSS
    + REFUSAL_CSS
)


def sweep() -> None:
    """Every minute, drop idle sessions if memory is short; every 10 minutes, delete upload-folder files older
    than FILE_TTL_S, dropped uploads included."""
    for minute in itertools.count():
        sessions.trim()
        if minute % 10 == 0 and (deleted := UPLOADS.sweep(FILE_TTL_S)):
            logging.getLogger("vit_explorer").info("deleted %d upload files over %d s old", deleted, FILE_TTL_S)
        if minute % 10 == 0:
            FILES.prune()
        time.sleep(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    args = parser.parse_args()
    configure_logging()
    proxies = Proxies()  # the visitor's address is found by the guard, from these proxies only; uvicorn trusts none
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    trusted = ", ".join(map(str, proxies.trusted)) or "nobody"
    logging.getLogger("vit_explorer").info("X-Forwarded-For is believed from: %s", trusted)
    threading.Thread(target=sweep, daemon=True, name="sweep").start()
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=CONCURRENCY).launch(
        server_name=args.host,
        server_port=args.port,
        css=CSS,
        max_file_size=MAX_UPLOAD,
        show_error=True,
        app_kwargs={
            "middleware": [
                Middleware(RequestGuard, uploads=UPLOADS, queue=lambda: demo._queue, proxies=proxies, files=FILES)
            ]
        },
    )


if __name__ == "__main__":
    main()

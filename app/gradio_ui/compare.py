"""The Compare tab in Gradio: one column per model (header, top-5, where it looks with its controls, lesions, Fig 2a),
Figs 8 and 9, the logit lens and the exports, laid out and wired over the tab's logic (app.tabs.compare). The
photo, the models and Analyze sit above the tabs (`Top`); the maps' handlers are app.gradio_ui.maps'."""

from __future__ import annotations

from typing import Callable

import gradio as gr

from app.backend.service import IG_DEFAULT_STEPS, MAX_MODELS, ModelRun, picked_models
from app.gradio_ui import checks
from app.gradio_ui.columns import Slot, compare_column
from app.gradio_ui.downloads import figure_export, pack_export, shown_on
from app.gradio_ui.errors import user_facing, watched
from app.gradio_ui.maps import Maps
from app.gradio_ui.repeats import dropping_repeats, writing
from app.gradio_ui.rest import Rest
from app.gradio_ui.sessions import session
from app.gradio_ui.top import Top
from app.tabs import notice
from app.tabs.column_maps import Asked, OnePerSession
from app.tabs.compare import DEFAULT_FIGURE, SHADE_DEFAULT, CompareTab, Look, Page, limited, photo_line
from app.views import texts as text
from app.views.attention import COLORMAPS, ViewOptions
from app.views.texts import LABEL

SHADE_MIN_PX = 300  # "Shade the blocks of": room for a model's name (a phone's column is narrower: it wraps)
CLOSING_ERRORS = (
    "() => document.querySelectorAll('.toast-body.error [data-testid=toast-close]').forEach((close) => close.click())"
)
# What only the browser knows, for the page model's photo_line: whether an Analyze was sent and not answered yet (a
# photo uploaded as Analyze was pressed reaches the server before that Analyze's request)
REPORTS_UNDER_WAY = "(photo, analyzed, _) => [photo, analyzed, Boolean(window.__vitAnalyzing)]"
ENDS_UNDER_WAY = "(...inputs) => { window.__vitAnalyzing = false; return inputs; }"
# Analyze: a repeat sent within a second is dropped before it reaches the server (the page model's rule answers it
# with nothing, column_maps.analyzes: dropped here, it holds none of the page's places in the server's queue); one
# sent marks an Analyze under way and closes the error toasts of the Analyze before it (a second refusal of a file
# is then one toast, not "Error (2)")
SENDS_ANALYZE = f"""(...inputs) => {{ const sent = ({dropping_repeats("analyze")})(...inputs);
    if (Array.isArray(sent)) {{ window.__vitAnalyzing = true; ({CLOSING_ERRORS})(); }}
    return sent; }}"""


class Compare:
    """The Compare tab's widgets, laid out by `layout` (inside its gr.Tab) and wired by `wire`, over `tab`."""

    def __init__(self, tab: CompareTab, top: Top) -> None:
        self.tab, self.top, self.maps = tab, top, Maps(tab)
        self.analyzing = OnePerSession()

    def layout(self) -> None:
        gr.Markdown(text.COMPARE)
        with gr.Row():
            self.colormap = gr.Dropdown(list(COLORMAPS), value="inferno", label=LABEL.colormap)
            self.opacity = gr.Slider(0, 1, value=0.6, step=0.05, label=LABEL.opacity)
            self.steps = gr.Slider(8, 128, value=IG_DEFAULT_STEPS, step=8, label=LABEL.ig_steps, elem_id="ig-steps")
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
        self.slots = [Slot(*parts, *spectrum) for parts, spectrum in zip(compare, spectra)]
        with gr.Accordion(LABEL.exports, open=False):
            with gr.Row(equal_height=False):
                self.figure_name = gr.Dropdown([], label=LABEL.export_figure_name, elem_id="export-figure")
                self.figure_format = gr.Radio(["png", "svg"], value="png", label=LABEL.export_format)
                with gr.Column():
                    self.export_one = gr.Button(LABEL.export_figure, elem_id="export-one")
                    self.export_all = gr.Button(LABEL.export_pack, elem_id="export-pack")
            self.exported = gr.File(label=LABEL.download, interactive=False, visible=False, elem_id="export-file")
        with gr.Row(equal_height=False):
            with gr.Column():
                gr.Markdown(text.HIGH_FREQUENCY)
                self.high_frequency = gr.Plot(show_label=False, elem_id="high-frequency")
                self.high_frequency_here = gr.Markdown(elem_id="high-frequency-here")
            with gr.Column():
                gr.Markdown(text.VARIANCE)
                self.variance = gr.Plot(show_label=False, elem_id="variance")
                self.variance_here = gr.Markdown(elem_id="variance-here")
                with gr.Row():  # the model's name whole: on a phone the menu goes under the box, as wide as the column
                    self.log_y = gr.Checkbox(value=True, label=LABEL.log_y)
                    self.shaded = gr.Dropdown(  # until an analysis: the model with MSA blocks (Look.shaded_in)
                        [(text.SHADE_DEFAULT, SHADE_DEFAULT)],
                        value=SHADE_DEFAULT,
                        label=LABEL.shaded,
                        elem_id="shaded",
                        scale=2,
                        min_width=SHADE_MIN_PX,
                    )
        gr.Markdown(text.LENS)
        self.lens = gr.Plot(show_label=False, elem_id="logit-lens")
        self.lens_here = gr.Markdown(elem_id="logit-lens-here")
        # before Figs 8 and 9 in every output list
        self.here = [self.high_frequency_here, self.variance_here, self.lens, self.lens_here]

    def updates(self, page: Page) -> dict:
        """Every slot, Fig 8 and Fig 9 with what they show here, and the runs kept in the session state."""
        updates = {
            self.top.state: page.runs,
            self.high_frequency: page.high_frequency,
            self.variance: page.variance,
            self.high_frequency_here: page.high_frequency_here,
            self.variance_here: page.variance_here,
            self.lens: page.lens,
            self.lens_here: page.lens_here,
        }
        for i, slot in enumerate(self.slots):
            updates |= slot.show(page.columns[i] if i < len(page.columns) else None)
        return updates

    def analyze_page(self) -> Callable:
        """The handler of Analyze; `typed` adds any timm models named in the text box to the checked ones. A second
        Analyze of the session asking for the one under way (a double click) changes nothing and ends at once; one
        asking for something else runs once the first has ended (column_maps.analyzes)."""

        @user_facing
        def analyze(
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
            asked = Asked(str(image or ""), tuple(picked_models(names or [], typed)), str(weights))
            with self.analyzing.only_one(session(request), asked) as first:
                if not first:
                    return gr.skip()
                look = Look(colormap, opacity, log_y)
                page = self.tab.analyze(image, names, typed, weights, look, report=watched(progress, request))
            return self.updates(page) | {
                self.top.status: page.status,
                self.top.analyzed_photo: image or "",
                self.shaded: gr.Dropdown(page.shade_choices, value=page.shaded),
                self.figure_name: gr.Dropdown(page.figure_choices, value=DEFAULT_FIGURE),
                self.exported: gr.File(value=None, visible=False),  # a previous analysis's export must not stay
                self.top.views: {},  # nor its columns' chosen maps
            }

        return analyze

    @staticmethod
    def photo_status(photo: dict | None, analyzed: str | None, under_way: bool = False) -> str | dict:
        """The status line after the photo changed or an Analyze ended: the page model's photo_line; the line as it
        is when that says nothing (`photo`: as the browser sends it, not preprocessed)."""
        path = photo.get("path") if isinstance(photo, dict) else None
        line = photo_line(path, analyzed, bool(under_way))
        return gr.skip() if line is None else line

    def lesion(self, slot: int) -> Callable:
        """The handler re-running one slot's model with the chosen units switched off (none: restored)."""

        @user_facing
        def switch_off(
            runs: list[ModelRun],
            chosen: dict[int, ViewOptions],
            indices: list[int],
            colormap: str,
            opacity: float,
            log_y: bool,
            shade: int | None = None,
            request: gr.Request = None,
            progress: gr.Progress = gr.Progress(),
        ) -> dict:
            look = Look(colormap, opacity, log_y, shade)
            page = self.tab.lesion(runs, slot, indices, look, chosen.get(slot), watched(progress, request))
            updates = self.updates(page)
            shown = (self.top.state, self.high_frequency, self.variance, *self.here, *self.slots[slot].outputs)
            return {key: value for key, value in updates.items() if key in shown} | {
                self.top.views: {**chosen, slot: page.columns[slot].options}
            }

        return switch_off

    def wire(self) -> None:
        """Every event of the tab, and of Analyze above it."""
        top, slots = self.top, self.slots
        # another photo than the one analyzed: the status line says that the results shown are for the previous one
        # (CompareTab's photo_line, told by the browser whether an Analyze is under way)
        photos, private = [top.image, top.analyzed_photo], {"queue": False, "api_visibility": "private"}
        said = {"fn": self.photo_status, "outputs": top.status, "preprocess": False, **private}
        top.image.change(inputs=[*photos, top.under_way], js=REPORTS_UNDER_WAY, **said)
        # at most MAX_MODELS ticked, as Streamlit's picker allows: a tick past the limit is undone (the page model's)
        top.models.input(
            lambda picked: gr.skip() if limited(picked) == picked else limited(picked),
            top.models,
            top.models,
            **private,
        )
        analyzing = top.run.click(
            self.analyze_page(),
            [top.image, top.models, top.weights, self.colormap, self.opacity, self.log_y, top.typed_models],
            [
                top.state,
                top.status,
                top.analyzed_photo,
                *[c for slot in slots for c in slot.outputs],
                *self.here,
                self.shaded,
                self.high_frequency,
                self.variance,
                self.figure_name,
                self.exported,
                top.views,
            ],
            api_name="run",
            show_progress_on=top.status,
            js=SENDS_ANALYZE,
        )
        # the offline notice in a line once a photo is analyzed (in the browser: no request)
        analyzing.success(None, None, top.banner, js=writing(notice(self.tab.service.online, True)))
        analyzing.success(inputs=photos, js=ENDS_UNDER_WAY, **said)  # at its end, the photo is looked at again
        analyzing.failure(None, js=ENDS_UNDER_WAY)
        # a successful Analyze closes the error toasts before it: their problem is behind the user (an error stays
        # up until then, or until closed, so that it can be read whatever the time it takes to act on it)
        analyzing.success(None, js=CLOSING_ERRORS)
        # a photo refused on the way in: the status line says so (the line of its error), over the "Error" mark
        analyzing.failure(
            top.refused_status, top.image, top.status, preprocess=False, queue=False, api_visibility="private"
        )
        self.maps.wire(self.slots, top.state, top.views, self.colormap, self.opacity, self.steps)
        checks.wire(self.tab, self.maps.columns, self.slots, top.state, self.steps)
        self.wire_lesions()
        self.wire_curves_and_exports()

    def wire_lesions(self) -> None:
        """Each column's units switched off re-run its model."""
        top = self.top
        for i, slot in enumerate(self.slots):
            gr.on(
                [slot.lesion.input],
                self.lesion(i),
                [top.state, top.views, slot.lesion, self.colormap, self.opacity, self.log_y, self.shaded],
                [top.state, *slot.outputs, *self.here, self.high_frequency, self.variance, top.views],
                api_name=f"lesion_{i}",
                show_progress_on=slot.lesion,
            )

    def wire_curves_and_exports(self) -> None:
        """Figs 8 and 9's scale and shading, the exports, and the API's /analyze and /forward_passes."""
        tab, top = self.tab, self.top
        gr.on(
            [self.log_y.input, self.shaded.input],
            lambda runs, log, shade: tab.curves(runs, Look(log_y=log, shaded=shade)),
            [top.state, self.log_y, self.shaded],
            [self.high_frequency, self.variance, self.lens],
            api_visibility="private",
        )

        rest = Rest(tab)
        gr.api(rest.analyze, api_name="analyze")
        gr.api(rest.forward_passes, api_name="forward_passes")
        shown_on(self.export_one, self.exported)
        shown_on(self.export_all, self.exported)
        self.export_one.click(
            figure_export(tab),
            [top.state, self.figure_name, self.figure_format, self.log_y, self.shaded, top.analyzed_photo],
            self.exported,
            api_name="export_figure",
        )
        self.export_all.click(
            pack_export(tab),
            [top.state, top.analyzed_photo, self.colormap, self.log_y, self.shaded, top.views],
            self.exported,
            api_name="export_pack",
        )

"""The AlterNet tab in Gradio: widgets and bindings over app.tabs.alternet."""

from __future__ import annotations

from html import escape
from typing import Callable

import gradio as gr

from app.gradio_ui.downloads import saved, shown_on
from app.gradio_ui.errors import Refusals, user_facing, watched
from app.gradio_ui.repeats import dropping_repeats
from app.server.gradio_adapter import ImageData
from app.tabs import Problem
from app.tabs.alternet import (
    PAPER_STEP,
    STEPS,
    SUBSET_DEFAULT,
    SUBSET_MAX,
    SUBSET_MIN,
    AlterNetTab,
    AlterNetView,
    Builder,
)
from app.views import alt_text
from app.views import alternet as view
from app.views import texts as text
from app.views.texts import LABEL


def problem_box(message: str) -> gr.HTML:
    """A problem shown in a box announced to screen readers, as Streamlit's st.error (`message`: HTML-escaped)."""
    return gr.HTML(f'<div role="alert" class="problem-box">⚠️ {message}</div>', visible=True)


def checked_once(tab: AlterNetTab, refused: Refusals) -> Callable[[str], None]:
    """A check of a typed spec raising a Problem for a bad one, logged the first time that spec is refused only:
    one typed spec is checked by several events (Enter, its curves, Average), each a request of its own."""

    def check(spec: str) -> None:
        if (message := refused.get(spec)) is not None:
            raise Problem(message)
        try:
            tab.placement(spec)
        except Problem as exc:
            refused.add(spec, str(exc))
            raise

    return check


def build(demo: gr.Blocks, tab: AlterNetTab, image: gr.Image) -> None:
    """The tab's components and events; `image` is the page's photo input."""
    gr.Markdown(text.ALTERNET)
    with gr.Row(equal_height=False):
        with gr.Column(scale=1):
            step = gr.Radio(
                [(str(n), n) for n in range(len(STEPS))],
                value=PAPER_STEP,
                label=LABEL.step,
                info="Sets the toggles below",
                elem_id="alternet-step",
            )
            grids = [
                gr.CheckboxGroup(
                    choices,
                    value=values,
                    label=LABEL.stage.format(stage=s + 1),
                    info=view.stage_info(s),
                    elem_id=f"alternet-stage-{s + 1}",
                )
                for s, (choices, values) in enumerate(zip(view.grid_choices(), view.grid_values(STEPS[-1])))
            ]
            spec = gr.Textbox(str(STEPS[-1]), label=f"{LABEL.spec} (Enter applies)", elem_id="alternet-spec")
            spec_problem = gr.HTML(visible=False, elem_id="alternet-spec-problem")
        with gr.Column(scale=1):
            gr.Markdown(view.steps_markdown(), elem_id="alternet-steps")
    drawing = gr.HTML(elem_id="alternet-drawing", padding=True)
    cost = gr.Markdown(elem_id="alternet-cost")
    banner = gr.Markdown(elem_id="alternet-banner", visible=False)
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=220):
            seen = gr.Image(
                label=LABEL.seen,
                interactive=False,
                format="png",
                height=200,
                elem_id="alternet-input",
                buttons=["fullscreen"],
            )
            count = gr.Slider(SUBSET_MIN, SUBSET_MAX, value=SUBSET_DEFAULT, step=10, label=LABEL.subset_count)
            average = gr.Button(LABEL.subset, elem_id="alternet-average", size="md")
        with gr.Column(scale=4):
            source = gr.Markdown(elem_id="alternet-source")
            # one above the other, each as wide as the column: side by side their five-entry legends left the
            # plots a strip of ~120 px
            high_frequency = gr.Plot(show_label=False, elem_id="alternet-high-frequency")
            variance = gr.Plot(show_label=False, elem_id="alternet-variance")
            accuracy = gr.Markdown(elem_id="alternet-accuracy")
            with gr.Row():
                export_button = gr.Button(LABEL.alternet_export, size="sm", elem_id="alternet-export")
                exported = gr.File(
                    label=LABEL.download, interactive=False, visible=False, elem_id="alternet-export-file"
                )
    shown = gr.State(None, time_to_live=3600)  # the AlterNetView on screen, for the export
    check = checked_once(tab, Refusals())
    outputs = [drawing, cost, banner, seen, high_frequency, variance, source, accuracy, shown]

    def show(tab_view: AlterNetView) -> list:
        return [
            tab_view.drawing,
            tab_view.cost,
            gr.Markdown(tab_view.banner, visible=bool(tab_view.banner)),
            gr.Image(tab_view.seen, alt_text=alt_text.picture(LABEL.seen, tab_view.measured)),
            tab_view.high_frequency,
            tab_view.variance,
            f"{tab_view.source}\n\n{tab_view.here}".strip(),
            tab_view.accuracy,
            tab_view,
        ]

    def controls(built: Builder) -> list:
        return [built.step, *built.grid, built.spec]

    @user_facing
    def set_step(chosen: int) -> list:
        """Build-up step -> the grid's toggles and the spec text."""
        return controls(tab.from_step(chosen))[1:]

    @user_facing
    def set_grid(*values: list[int]) -> list:
        """Toggles -> the build-up step they match (none for a custom placement) and the spec text."""
        built = tab.from_grid(list(values))
        return [built.step, built.spec]

    def apply_spec(typed: str) -> list:
        """Typed spec -> the normalized spec, its build-up step and the toggles; a bad spec is named under the
        text box, and the controls stay as they were (and usable)."""
        try:
            check(typed)
            built = tab.from_text(typed)
        except Problem as exc:
            shown = escape(str(exc), quote=False)  # "s<stage>:<block>" is text, not an HTML tag
            return [gr.skip(), gr.skip(), *(gr.skip() for _ in grids), problem_box(shown)]
        return [built.spec, built.step, *built.grid, gr.HTML("", visible=False)]

    @user_facing
    def on_spec(spec_text: str, photo: str | None) -> list:
        """The curves for a typed spec, once it has been applied; nothing for a bad one (it is named already)."""
        try:
            check(spec_text)
        except Problem:
            return [gr.skip() for _ in outputs]
        return on_photo(spec_text, photo)

    @user_facing
    def on_photo(spec_text: str, photo: str | None) -> list:
        check(spec_text)
        return show(tab.on_photo(spec_text, photo))

    def on_new_photo(spec_text: str, payload: dict | None) -> list:
        """The curves for the photo just chosen; for a file that is not an image, nothing: this event is the page's
        own (made with preprocess=False), and Analyze names the file, in one toast rather than two."""
        try:
            photo = image.preprocess(ImageData.model_validate(payload)) if payload else None
        except gr.Error:
            return [gr.skip() for _ in outputs]
        return on_photo(spec_text, photo)

    @user_facing
    def on_subset(spec_text: str, images: float, request: gr.Request, progress: gr.Progress = gr.Progress()) -> list:
        """The subset's curves; refused while the spec box holds no placement (the page model's rule)."""
        return show(tab.on_subset(spec_text, int(images), watched(progress, request), typed=spec_text))

    @user_facing
    def on_export(current: AlterNetView | None, typed: str | None = None) -> str:
        return saved(tab.export(current, typed))

    inputs = [spec, image]
    # one queue for every update of the panel, so that they land in the order they were asked for
    update = {"concurrency_id": "alternet", "concurrency_limit": 1}
    private = {"api_visibility": "private", "show_progress_on": [drawing], **update}
    step.input(set_step, step, [*grids, spec], api_name="alternet_step").success(
        lambda: gr.HTML(visible=False), None, spec_problem, api_visibility="private"
    ).success(on_photo, inputs, outputs, api_name="alternet", show_progress_on=[drawing], **update)
    for grid in grids:
        toggled = grid.input(set_grid, grids, [step, spec], api_visibility="private")
        toggled.success(on_photo, inputs, outputs, **private)
        toggled.success(lambda: gr.HTML(visible=False), None, spec_problem, api_visibility="private")
    spec.submit(apply_spec, spec, [spec, step, *grids, spec_problem], api_name="alternet_spec").then(
        on_spec, inputs, outputs, **private
    )
    image.change(on_new_photo, inputs, outputs, js=dropping_repeats("alternet_photo"), preprocess=False, **private)
    shown_on(export_button, exported)
    export_button.click(on_export, [shown, spec], exported, api_name="alternet_export")
    average.click(on_subset, [spec, count], outputs, api_name="alternet_subset", show_progress_on=[source], **update)
    demo.load(on_photo, inputs, outputs, **private)

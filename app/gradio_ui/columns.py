"""A compare column in Gradio: its widgets (`compare_column`) and what it shows of a Column (`Slot.show`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import gradio as gr

from app.backend.service import IG_DEFAULT_STEPS, ModelRun
from app.tabs.compare import CheckShown, Column, CompareTab, attention_controls
from app.views import alt_text
from app.views import texts as text
from app.views.attention import MEAN, ViewOptions
from app.views.texts import LABEL


def applying(rollout: bool | None, method: str | None) -> list[dict]:
    """The layer, head and rollout controls enabled where they apply to the map, as the page model's
    attention_controls decides (a method not known: none of them)."""
    return [gr.update(interactive=on) for on in attention_controls(bool(rollout), method or "")]


@dataclass
class Slot:
    """One model's column: header, predictions, where it looks (with its controls), Fig 2a."""

    column: gr.Column
    header: gr.Markdown
    predictions: gr.Label
    known_classes: gr.Markdown  # which classes a model with few knows
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
    check: gr.Button  # how far the map shown can be trusted: its deletion and insertion against random orders
    check_stop: gr.Button  # shown while the check runs
    curves_box: gr.Accordion  # shown while the map shown has been checked, as the check button is while it has not
    curves: gr.Plot  # the checked map's deletion and insertion curves
    distance: gr.Markdown  # the model's attention distance, under its map's controls (not any one map's caption)
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
            self.known_classes,
            self.view,
            self.caption,
            self.controls,
            *self.options,
            self.not_offered,
            self.lesion,
            self.compute,
            self.check,
            self.curves_box,
            self.curves,
            self.distance,
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
            self.known_classes: gr.Markdown(column.known_classes, visible=bool(column.known_classes)),
            self.view: gr.Image(
                column.image, label=column.map_title, alt_text=alt_text.map_of(column.map_title, column.caption)
            ),
            self.caption: column.caption,
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
            **dict(zip(self.check_parts, check_parts(column.check))),
            self.distance: gr.Markdown(column.distance, visible=bool(column.distance)),
            self.spectrum_column: gr.Column(visible=True),
            self.spectrum: column.spectrum,
        }

    @property
    def check_parts(self) -> list[gr.components.Component]:
        """What check_parts updates: the check button, the curves' box and the curves."""
        return [self.check, self.curves_box, self.curves]

    @property
    def drawn(self) -> list[gr.components.Component]:
        """What a drawn map updates (Maps.draw's order): the map, its caption and its check's parts."""
        return [self.view, self.caption, *self.check_parts]


def check_parts(check: CheckShown) -> list:
    """The check's parts as the page model decided them (CompareTab.check_shown), in Slot.check_parts' order."""
    shown = check.curves is not None
    return [gr.Button(visible=check.offered), gr.Accordion(visible=shown), check.curves if shown else gr.skip()]


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


def unchecked() -> list:
    """The check's parts after a Stop: the map the controls ask for is not drawn (CompareTab.check_shown)."""
    return check_parts(CheckShown(False))


def offered(tab: CompareTab, slot: int) -> Callable:
    """The handler after a slot's map request: the check's parts for the map its controls ask for."""

    def parts(runs: list[ModelRun], steps: float, layer, head, rollout, method=None, target=None) -> list:
        if slot >= len(runs):
            return [gr.skip()] * 3
        return check_parts(tab.check_shown(runs[slot], view_options(layer, head, rollout, method, target, steps)))

    return parts


def compare_column(i: int) -> list:
    with gr.Column(visible=False, min_width=260, elem_id=f"model-{i}") as column:
        header = gr.Markdown()
        predictions = gr.Label(num_top_classes=5, label="Top-5 predictions")
        known_classes = gr.Markdown(visible=False, elem_classes="note", elem_id=f"known-classes-{i}")
        view = gr.Image(
            label=text.MAP_TITLE,
            interactive=False,
            format="png",
            height=340,
            buttons=["download", "fullscreen"],
            elem_id=f"view-{i}",
        )
        caption = gr.Markdown(elem_classes="caption")
        stop = gr.Button(LABEL.stop_map, size="sm", variant="stop", visible=False, elem_id=f"stop-{i}")
        compute = gr.Button(LABEL.compute_map, size="sm", visible=False, elem_id=f"compute-{i}")
        check = gr.Button(LABEL.check_map, size="sm", elem_id=f"check-{i}")
        check_stop = gr.Button(LABEL.stop_check, size="sm", variant="stop", visible=False, elem_id=f"check-stop-{i}")
        with gr.Accordion(LABEL.check_curves, open=False, visible=False, elem_id=f"check-curves-{i}") as curves_box:
            curves = gr.Plot(show_label=False, elem_id=f"check-plot-{i}")
        method = gr.Dropdown([], label=LABEL.method, elem_id=f"method-{i}")  # how each is made: above the columns
        target = gr.Dropdown([], label=LABEL.target, elem_id=f"target-{i}")
        not_offered = gr.Markdown(elem_classes="caption")
        with gr.Group(visible=False) as controls:
            layer = gr.Slider(1, 12, value=1, step=1, label=LABEL.layer)  # set to the last layer on Analyze
            with gr.Row():
                head = gr.Dropdown([MEAN], value=MEAN, label=LABEL.head, min_width=80)
                rollout = gr.Checkbox(label=LABEL.rollout, min_width=80)
        distance = gr.Markdown(visible=False, elem_classes="caption", elem_id=f"distance-{i}")
        lesion = gr.Dropdown(
            [], value=[], multiselect=True, label=LABEL.lesion, info=text.LESION, elem_id=f"lesion-{i}"
        )
    return [
        column,
        header,
        predictions,
        known_classes,
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
        check,
        check_stop,
        curves_box,
        curves,
        distance,
    ]

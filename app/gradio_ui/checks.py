"""A compare column's check in Gradio: "Can this map be trusted? Check it" computes the map's deletion and insertion
against random pixel orders (app.tabs.compare.CompareTab.check) and puts its line under the map, without redrawing
the map; the curves follow whatever map the column shows (a map never shows another map's check)."""

from __future__ import annotations

from typing import Callable

import gradio as gr

from app.gradio_ui.columns import Slot, with_distance
from app.gradio_ui.errors import user_facing, watched
from app.gradio_ui.maps import view_options
from app.service import ModelRun
from app.tabs import problem
from app.tabs.compare import CompareTab
from app.views import evidence
from app.views.attention import ViewOptions


def checking(tab: CompareTab, slot: int) -> Callable:
    """The handler of one column's check button: the caption with the check's line, and the curves."""

    @user_facing
    def check(
        runs: list[ModelRun],
        steps: float,
        layer: float,
        head: str,
        rollout: bool,
        method: str | None = None,
        target: int | None = None,
        request: gr.Request = None,
        progress: gr.Progress = gr.Progress(),
    ):
        if slot >= len(runs):
            raise problem("Analyze a photo first.")
        options = view_options(layer, head, rollout, method, target, steps)
        caption, curves = tab.check(runs[slot], options, watched(progress, request))
        return with_distance(caption, evidence.distance_here(runs[slot].result)), gr.Accordion(visible=True), curves

    return check


def following(tab: CompareTab, slot: int) -> Callable:
    """The handler run whenever a column's caption changes: the curves of the map now shown (the one last drawn, in
    the session's `views`; else the column's default), once checked. (Not the controls: after a model swap they
    still hold the old model's values, out of the new ranges, when the caption changes.)"""

    def follow(runs: list[ModelRun], views: dict[int, ViewOptions]):
        if slot >= len(runs):
            return gr.Accordion(visible=False), None
        curves = tab.checked_curves(runs[slot], views.get(slot) or tab.default_view(runs[slot]))
        return gr.Accordion(visible=curves is not None), curves

    return follow


def wire(tab: CompareTab, slots: list[Slot], state: gr.State, views: gr.State, steps: gr.Slider) -> None:
    for i, slot in enumerate(slots):
        inputs = [state, steps, *slot.options]
        slot.check.click(
            checking(tab, i),
            inputs,
            [slot.caption, slot.curves_box, slot.curves],
            api_name=f"check_{i}",
            show_progress_on=slot.caption,
        )
        slot.caption.change(following(tab, i), [state, views], [slot.curves_box, slot.curves], api_visibility="private")

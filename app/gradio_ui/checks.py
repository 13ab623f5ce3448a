"""A compare column's check in Gradio: "Can this map be trusted? Check it" computes the map's deletion and insertion
against random pixel orders (app.tabs.compare.CompareTab.check) and puts its line under the map, without redrawing
the map; the curves show only while the map they belong to does (a map never shows another map's check)."""

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
        caption, curves, line = tab.check(runs[slot], options, watched(progress, request))
        distance = evidence.distance_here(runs[slot].result)
        return with_distance(caption, distance), gr.Accordion(visible=True), curves, line

    return check


# The curves' box shown while the caption (the map shown, redrawn by any control) carries the line of the check they
# draw: run in the browser, as a request per redraw would take one of the page's few places in the queue
FOLLOWING = """(caption, line) => ({__type__: "update", visible: Boolean(line) && (caption || "").includes(line)})"""


def wire(tab: CompareTab, slots: list[Slot], state: gr.State, steps: gr.Slider) -> None:
    for i, slot in enumerate(slots):
        slot.check.click(
            checking(tab, i),
            [state, steps, *slot.options],
            [slot.caption, slot.curves_box, slot.curves, slot.curves_line],
            api_name=f"check_{i}",
            show_progress_on=slot.caption,
        )
        slot.caption.change(None, [slot.caption, slot.curves_line], slot.curves_box, js=FOLLOWING)

"""A compare column's check in Gradio: "Can this map be trusted? Check it" computes the map's deletion and insertion
against random pixel orders (app.tabs.compare.CompareTab.check) and puts its line under the map, without redrawing
the map; the curves show only while the map they belong to does (a map never shows another map's check), and the
button only while they do not (each map drawn says which: app.gradio_ui.columns.check_parts). Its Stop,
shown while it runs, ends it at its next batch and keeps nothing (app.tabs.column_maps.ColumnMaps.stop_check)."""

from __future__ import annotations

import time
from typing import Callable

import gradio as gr

from app.backend.service import ModelRun
from app.gradio_ui.columns import Slot, check_parts, view_options
from app.gradio_ui.errors import user_facing, watched
from app.gradio_ui.sessions import session
from app.tabs import problem
from app.tabs.column_maps import ColumnMaps
from app.tabs.compare import CompareTab


def checking(tab: CompareTab, columns: ColumnMaps, slot: int) -> Callable:
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
        options, started = view_options(layer, head, rollout, method, target, steps), time.monotonic()

        def stopped() -> bool:
            return columns.check_stopped_since(session(request), slot, started)

        caption, _, _ = tab.check(runs[slot], options, watched(progress, request, stopped))
        return [caption, *check_parts(tab.check_shown(runs[slot], options))]

    return check


def stopping(columns: ColumnMaps, slot: int) -> Callable:
    """The handler of one column's Stop of its check: the check ends at its next batch; the button goes."""

    def stop(request: gr.Request) -> gr.Button:
        columns.stop_check(session(request), slot)
        return gr.Button(visible=False)

    return stop


def wire(tab: CompareTab, columns: ColumnMaps, slots: list[Slot], state: gr.State, steps: gr.Slider) -> None:
    private = {"queue": False, "api_visibility": "private"}
    for i, slot in enumerate(slots):
        slot.check.click(lambda: gr.Button(visible=True), None, slot.check_stop, **private)
        checked = slot.check.click(
            checking(tab, columns, i),
            [state, steps, *slot.options],
            [slot.caption, *slot.check_parts],
            api_name=f"check_{i}",
            show_progress_on=slot.caption,
        )
        checked.then(lambda: gr.Button(visible=False), None, slot.check_stop, **private)
        slot.check_stop.click(stopping(columns, i), None, slot.check_stop, queue=False, api_name=f"check_stop_{i}")
        slot.check_stop.click(None, js="() => []", cancels=[checked])  # a check still waiting in the queue

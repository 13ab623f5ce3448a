"""A compare column's map in Gradio: drawn as its controls ask (from stored results, or computed once per run with
progress), re-drawn for a new number of Integrated Gradients steps or a new look, and its Stop and "Compute this
map" buttons. One `Maps` per page layout; the rules of a map in progress (what a Stop ends, when a column is
settled) are app.tabs.column_maps'."""

from __future__ import annotations

import time
from typing import Callable

import gradio as gr
import numpy as np

from app.backend.service import MAX_MODELS, ModelRun
from app.gradio_ui.columns import Slot, applying, check_parts, offered, unchecked, view_options
from app.gradio_ui.errors import user_facing, watched
from app.gradio_ui.sessions import session
from app.tabs import Problem
from app.tabs.column_maps import ColumnMaps, stopped_line
from app.tabs.compare import CompareTab, Look
from app.views import alt_text
from app.views import texts as text
from app.views.attention import ViewOptions

DRAWN = 5  # a drawn map's updates in the steps' redraw: Slot.drawn


def drawn_map(image: np.ndarray, caption: str) -> gr.Image:
    """A column's map with its text alternative (what its caption says)."""
    return gr.Image(image, alt_text=alt_text.map_of(text.MAP_TITLE, caption))


class Maps:
    """The handlers of the compare columns' maps, over `tab`."""

    def __init__(self, tab: CompareTab) -> None:
        self.tab = tab
        self.columns = ColumnMaps()  # what each page's columns asked for and stopped

    def draw(
        self,
        runs: list[ModelRun],
        slot: int,
        options: ViewOptions,
        look: Look,
        request: gr.Request | None,
        progress,
        started: float,
    ) -> list | None:
        """One slot's map as `options` choose it, its caption and its check's parts (Slot.drawn): from the stored
        results, or from an attribution computed once for the run (with progress); None when the column was stopped
        after the request `started` (time.monotonic): by its Stop (whose button said so) or by a newer map asked for
        (which draws its own)."""

        def stopped() -> bool:
            return self.columns.stopped_since(session(request), slot, started)

        try:
            image, caption = self.tab.view(runs[slot], options, look, watched(progress, request, stopped))
        except Problem:
            if stopped():  # no error on top of the Stop's own message
                return None
            self.columns.end(session(request), slot, started)
            raise
        if stopped():  # done as it was stopped: the Stop's message or the newer map stands
            return None
        self.columns.end(session(request), slot, started)
        return [drawn_map(image, caption), caption, *check_parts(self.tab.check_shown(runs[slot], options))]

    def redraw(self, slot: int) -> Callable:
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
            drawn = self.draw(runs, slot, options, look, request, progress, started) if slot < len(runs) else None
            return [gr.skip()] * 3 if drawn is None else [*drawn[:2], {**views, slot: options}]  # the map, its caption

        return view

    def redraw_steps(self) -> Callable:
        """The handler re-drawing every Integrated Gradients map for a new number of steps, column by column (the
        other maps stay): one event for the page, as one per column would pass the page's limit of requests in
        flight. Its inputs: the runs, views, colormap, opacity, steps and each slot's five controls. A column's
        problem is a warning naming its model, and the other columns are still drawn; a column stopped since the
        request was asked for (its Stop, a newer change of its controls or of the steps), even while it waited in
        the queue, is left to what stopped it."""

        @user_facing
        def redraw(request: gr.Request, progress: gr.Progress = gr.Progress(), *inputs) -> list:
            runs, views, colormap, opacity, steps, *controls = inputs
            look, drawn, chosen = Look(colormap, opacity), [], dict(views)
            started = self.columns.page_asked(session(request))
            for i in range(MAX_MODELS):
                options, shown = view_options(*controls[5 * i : 5 * i + 5], steps), None
                try:
                    if i < len(runs) and options.uses_steps(runs[i]):
                        shown = self.draw(runs, i, options, look, request, progress, started)
                except Problem as problem:
                    gr.Warning(f"{runs[i].result.label}: {problem}")
                if shown is not None:
                    chosen[i] = options
                drawn += [gr.skip()] * DRAWN if shown is None else shown
            return [*drawn, chosen]

        return redraw

    def restyle(self) -> Callable:
        """The handler drawing every column's map in new colours or opacity, from stored results: one event for the
        page (one per column would pass the page's limit of requests in flight). A map being computed is drawn once
        it is done, in the new look; one left unfinished by a Stop stays as it is (nothing is computed here)."""

        @user_facing
        def restyle(runs: list[ModelRun], colormap: str, opacity: float, steps: float, *controls) -> list:
            look, drawn = Look(colormap, opacity), []
            for i in range(MAX_MODELS):
                options = view_options(*controls[5 * i : 5 * i + 5], steps)
                shown = self.tab.restyle(runs[i], options, look) if i < len(runs) else None
                drawn += [gr.skip(), gr.skip()] if shown is None else [drawn_map(*shown), shown[1]]
            return drawn

        return restyle

    def stop_button(self, slot: int, controls: bool = False) -> Callable:
        """The handler run as a slot's map is asked for, before its request: it stops the slot's map in progress,
        which the controls no longer ask for (the browser sends the new request once that one has ended), and shows
        the Stop button when the new map has to be computed (hidden when it is drawn); with `controls` (a new
        method or rollout), then the layer, head and rollout enabled where they apply (columns.applying)."""

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
            self.columns.ask(session(request), slot)
            asked = view_options(layer, head, rollout, method, target, steps)
            button = gr.Button(visible=not (slot >= len(runs) or asked.computed(runs[slot])))
            return [button, *applying(rollout, method)] if controls else button

        return shown

    def stop_buttons(self, request: gr.Request, *inputs) -> list[gr.Button]:
        """stop_button for each slot whose map a change of the steps asks for anew, an Integrated Gradients map
        (`inputs` as for redraw_steps); the others are left as they are. Then the page-wide redraw is asked for."""
        runs, views, colormap, opacity, steps, *controls = inputs
        buttons = []
        for i in range(MAX_MODELS):
            mine = controls[5 * i : 5 * i + 5]
            redrawn = i < len(runs) and view_options(*mine, steps).uses_steps(runs[i])
            buttons.append(
                self.stop_button(i)(runs, views, colormap, opacity, steps, *mine, request) if redrawn else gr.skip()
            )
        self.columns.ask_page(session(request))
        return buttons

    def settled_hides(self, slots: range) -> Callable:
        """The handler hiding the Stop and Compute buttons of `slots` after a map request, except for a slot whose
        map has been asked for again since (a stopped request ends late, maybe after Compute has shown its Stop)."""

        def hide(request: gr.Request) -> list:
            hidden, kept = [gr.Button(visible=False)] * 2, [gr.skip()] * 2
            return [button for i in slots for button in (hidden if self.columns.settled(session(request), i) else kept)]

        return hide

    def hide_stop(self, slot: int) -> Callable:
        """The handler of one slot's Stop: stop its map work, hide the button, say that the map was not finished
        (the one shown is the previous map) and offer to compute it (a request ending now leaves that offer)."""

        def stop(request: gr.Request) -> tuple[gr.Button, str, gr.Button]:
            self.columns.stop(session(request), slot)
            return gr.Button(visible=False), stopped_line(), gr.Button(visible=True)

        return stop

    def wire(
        self,
        slots: list[Slot],
        state: gr.State,
        views: gr.State,
        colormap: gr.Dropdown,
        opacity: gr.Slider,
        steps: gr.Slider,
    ) -> None:
        """The columns' maps, Stops and Computes over the session's runs (`state`) and chosen maps (`views`), and
        the page-wide redraws (`steps`, `colormap`, `opacity`)."""
        every_control = [c for slot in slots for c in slot.options]
        stops_and_computes = [button for slot in slots for button in (slot.stop, slot.compute)]
        private = {"queue": False, "api_visibility": "private"}
        # the steps apply to every column: one event for the page (one per column would pass its limit in flight)
        steps_inputs = [state, views, colormap, opacity, steps, *every_control]
        gr.on([steps.input], self.stop_buttons, steps_inputs, [slot.stop for slot in slots], **private)
        styled = gr.on(
            [steps.input],
            self.redraw_steps(),
            steps_inputs,
            [*[c for slot in slots for c in slot.drawn], views],
            api_name="restyle_steps",
            api_visibility="private",
            show_progress_on=[slot.view for slot in slots],
            trigger_mode="always_last",  # a second change of the steps while the first one's maps are drawn: after
        )
        styled.then(self.settled_hides(range(MAX_MODELS)), None, stops_and_computes, **private)
        for i, slot in enumerate(slots):
            inputs = [state, views, colormap, opacity, steps, *slot.options]
            outputs = [slot.view, slot.caption, views]
            check_inputs = [state, steps, *slot.options]
            changes = [slot.layer.input, slot.head.input, slot.rollout.input, slot.method.input, slot.target.input]
            # the browser runs a trigger's listeners in the order made, each after the one before has finished:
            # the quick ones (the Stop button, the controls that apply) come before the map, which may take minutes
            # the Stop only while computing; a new method or rollout also sets which controls apply (rollout takes
            # every layer and head; other methods use none of them), in the same quick request
            gr.on(
                [slot.layer.input, slot.head.input, slot.target.input],
                self.stop_button(i),
                inputs,
                slot.stop,
                **private,
            )
            gr.on(
                [slot.rollout.input, slot.method.input],
                self.stop_button(i, controls=True),
                inputs,
                [slot.stop, slot.layer, slot.head, slot.rollout],
                **private,
            )
            chosen = gr.on(
                changes,
                self.redraw(i),
                inputs,
                outputs,
                api_name=f"view_{i}",
                show_progress_on=slot.view,
                trigger_mode="always_last",
            )
            # its Stop and "Compute this map" go once the map asked for last is drawn (a Stop keeps Compute)
            chosen.then(self.settled_hides(range(i, i + 1)), None, [slot.stop, slot.compute], **private)
            chosen.then(offered(self.tab, i), check_inputs, slot.check_parts, **private)
            # after a Stop, "Compute this map" computes the map the controls ask for
            computing = slot.compute.click(lambda: gr.Button(visible=False), None, slot.compute, **private)
            computing.then(self.stop_button(i), inputs, slot.stop, **private)
            asked = computing.then(
                self.redraw(i),
                inputs,
                outputs,
                show_progress_on=slot.view,
                api_name=f"compute_{i}",
                api_visibility="private",
            )
            asked.then(self.settled_hides(range(i, i + 1)), None, [slot.stop, slot.compute], **private)
            asked.then(offered(self.tab, i), check_inputs, slot.check_parts, **private)
            stop_outputs = [slot.stop, slot.caption, slot.compute]
            slot.stop.click(self.hide_stop(i), None, stop_outputs, queue=False, api_name=f"stop_{i}")
            slot.stop.click(unchecked, None, slot.check_parts, **private)  # the map asked for is not drawn
            # the page cancels a listener's requests one after the other, each looked up once the one before is
            # cancelled: one listener per request, so that a slow cancel cannot reach a Compute pressed after it.
            # The steps' redraw (every column's) is not cancelled: the Stop stops this column's part of it
            for work in (chosen, asked):
                slot.stop.click(None, js="() => []", cancels=[work])
        gr.on(
            [colormap.input, opacity.input],
            self.restyle(),
            [state, colormap, opacity, steps, *every_control],
            [c for slot in slots for c in (slot.view, slot.caption)],
            api_visibility="private",
            show_progress="hidden",  # a map being computed shows its own progress
            trigger_mode="always_last",
        )

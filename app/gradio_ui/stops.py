"""Stop buttons in the Gradio front end: a column's Stop stops the map work of that column at its next progress
report, and the column's Stop and "Compute this map" buttons are hidden only by the end of the map request its controls
asked for last (a request stopped, cancelled or superseded ends late, after the next one has shown its Stop)."""

from __future__ import annotations

import time

import gradio as gr

KEPT_S = 3600  # a session silent this long is forgotten
SAME_CLICK_S = 1.0  # a new map's own stop of the one before may reach the server after the new map has started


def forget_old(times: dict, now: float) -> None:
    """Drop the entries of `times` (values: time.monotonic) older than KEPT_S: a server meets many sessions."""
    for key in [key for key, when in times.items() if now - when > KEPT_S]:
        del times[key]


class Stops:
    """When each session's column was last stopped: by its Stop button, or by a new map asked for (which stops
    the one before)."""

    def __init__(self) -> None:
        self._pressed: dict[tuple[str, int], float] = {}  # (session hash, column): its Stop (time.monotonic)
        self._asked: dict[tuple[str, int], float] = {}  # ... a new map asked for, stopping the one before

    def ask(self, request: gr.Request, slot: int, anew: bool = False) -> None:
        """Stop the map work of the session's column `slot` at its next progress report: its Stop's handler, or
        (`anew`) the handler run as a new map is asked for, which stops the map before it."""
        now = time.monotonic()
        stops = self._asked if anew else self._pressed
        forget_old(stops, now)
        stops[request.session_hash, slot] = now

    def since(self, request: gr.Request | None, started: float, slot: int) -> bool:
        """Whether the Stop of the session's column `slot` was pressed after `started` (time.monotonic), or a new
        map was asked for over SAME_CLICK_S after it: the browser sends a new map's request and its stop of the one
        before at once, and under load the request can start first (it must not stop itself)."""
        if request is None:
            return False
        key = (request.session_hash, slot)
        return self._pressed.get(key, -1.0) >= started or self._asked.get(key, -1.0) >= started + SAME_CLICK_S


class MapRequests:
    """When each session's column last asked for a map (a control changed, or Compute was pressed: before its
    request starts) and when the latest map request to end had started. The column is settled once a request
    that started after the last ask has ended: only then may its Stop and Compute buttons go."""

    def __init__(self) -> None:
        self._asked: dict[tuple[str, int], float] = {}
        self._ended: dict[tuple[str, int], float] = {}
        self._page: dict[str, float] = {}  # when the session last asked for a page-wide redraw (the IG steps)

    def ask_page(self, request: gr.Request | None) -> None:
        """A page-wide redraw is asked for (after its columns' `ask`): its request may wait in the queue."""
        if request is not None:
            now = time.monotonic()
            forget_old(self._page, now)
            self._page[request.session_hash] = now

    def page_asked(self, request: gr.Request | None) -> float:
        """When the session's page-wide redraw was asked for (now, if never): a Stop pressed since stops its
        column's part, even while the request was still waiting in the queue."""
        now = time.monotonic()
        return now if request is None else self._page.get(request.session_hash, now)

    def ask(self, request: gr.Request | None, slot: int) -> None:
        if request is not None:
            now = time.monotonic()
            forget_old(self._asked, now)
            forget_old(self._ended, now)
            self._asked[request.session_hash, slot] = now

    def end(self, request: gr.Request | None, slot: int, started: float) -> None:
        """A request for the column's map that started at `started` has drawn its map or failed (not stopped)."""
        if request is not None:
            key = (request.session_hash, slot)
            self._ended[key] = max(started, self._ended.get(key, started))

    def settled(self, request: gr.Request | None, slot: int) -> bool:
        if request is None:
            return True
        key = (request.session_hash, slot)
        return self._ended.get(key, -1.0) >= self._asked.get(key, 0.0)

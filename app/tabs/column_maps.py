"""The rules of a compare column's map while it is computed, for every visitor's page: which work a Stop or a newer
map ends, when a column is settled (its Stop and "Compute this map" may go), and one Analyze at a time. Keyed by the
page's session id (a string; None for a direct call, which nothing stops), with no front end imported: a front end
whose events run concurrently (Gradio) asks these from its handlers.

    maps = ColumnMaps()
    maps.ask(session, 0)                      # a new map asked for: it ends the column's map before it
    maps.stopped_since(session, 0, started)   # asked at each progress report of the work started at `started`
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from app.backend.service import MapKey, ModelRun
from app.views import texts as text
from app.views.attention import ViewOptions
from app.views.texts import LABEL

KEPT_S = 3600  # a session silent this long is forgotten
SAME_CLICK_S = 1.0  # a new map's own stop of the one before may reach the server after the new map has started

Session = str | None


def forget_old(times: dict, now: float) -> None:
    """Drop the entries of `times` (values: time.monotonic) older than KEPT_S: a server meets many sessions."""
    for key in [key for key, when in times.items() if now - when > KEPT_S]:
        del times[key]


class ColumnMaps:
    """When each session's column last asked for a map, was stopped, and had a map request end; when the session
    last asked for a page-wide redraw. Times are time.monotonic(). A map request stopped, cancelled or superseded
    ends late, after the next one has shown its Stop: only the end of a request started after the last ask settles
    the column."""

    def __init__(self) -> None:
        self._pressed: dict[tuple[str, int], float] = {}  # the column's Stop
        self._anew: dict[tuple[str, int], float] = {}  # a new map asked for, stopping the one before
        self._asked: dict[tuple[str, int], float] = {}  # a map asked for or stopped: what the column waits for
        self._ended: dict[tuple[str, int], float] = {}  # the start of the latest map request to end
        self._page: dict[str, float] = {}  # a page-wide redraw (the Integrated Gradients steps)
        self._check_pressed: dict[tuple[str, int], float] = {}  # the Stop of the column's check

    def ask(self, session: Session, slot: int) -> None:
        """A new map is asked for in column `slot` (before its request starts): it stops the map before it."""
        self._note(session, slot, self._anew)

    def stop(self, session: Session, slot: int) -> None:
        """The column's Stop: its map work stops at its next progress report."""
        self._note(session, slot, self._pressed)

    def _note(self, session: Session, slot: int, stops: dict) -> None:
        if session is None:
            return
        now = time.monotonic()
        for times in (stops, self._asked, self._ended):
            forget_old(times, now)
        stops[session, slot] = self._asked[session, slot] = now

    def stopped_since(self, session: Session, slot: int, started: float) -> bool:
        """Whether the work of column `slot` that started at `started` is stopped: its Stop was pressed since, or
        after the column's last ask (a page asks before each map request it sends: only a new ask or Compute lifts a
        Stop; a direct API call, which never asks, is stopped by its Stop alone), or a new map was asked for over
        SAME_CLICK_S after it (a browser sends a new map's request and its stop of the
        one before at once, and under load the request can start first: it must not stop itself)."""
        if session is None:
            return False
        key = (session, slot)
        pressed, anew = self._pressed.get(key, -1.0), self._anew.get(key)
        if anew is not None and pressed > anew:  # the column's last word was its Stop: a request sent late (a
            return True  # change made before the Stop, resent by the page once the stopped one ended) is stopped
        return pressed >= started or (anew or -1.0) >= started + SAME_CLICK_S

    def end(self, session: Session, slot: int, started: float) -> None:
        """A request for the column's map that started at `started` has drawn its map or failed (not stopped)."""
        if session is not None:
            key = (session, slot)
            self._ended[key] = max(started, self._ended.get(key, started))

    def settled(self, session: Session, slot: int) -> bool:
        """Whether a request started after the column's last ask has ended: its Stop and Compute may go."""
        if session is None:
            return True
        key = (session, slot)
        return self._ended.get(key, -1.0) >= self._asked.get(key, 0.0)

    def stop_check(self, session: Session, slot: int) -> None:
        """The Stop of column `slot`'s check: the check in progress stops at its next progress report, keeping
        nothing (the map and its caption stay as they were; a check stopped is not half kept)."""
        if session is not None:
            now = time.monotonic()
            forget_old(self._check_pressed, now)
            self._check_pressed[session, slot] = now

    def check_stopped_since(self, session: Session, slot: int, started: float) -> bool:
        """Whether the check of column `slot` that started at `started` has been stopped since (a Stop pressed
        before it started, for an earlier check, does not stop it)."""
        return session is not None and self._check_pressed.get((session, slot), -1.0) >= started

    def ask_page(self, session: Session) -> None:
        """A page-wide redraw is asked for (after its columns' `ask`): its request may wait in the queue."""
        if session is not None:
            now = time.monotonic()
            forget_old(self._page, now)
            self._page[session] = now

    def page_asked(self, session: Session) -> float:
        """When the session's page-wide redraw was asked for (now, if never): a Stop pressed since stops its
        column's part, even while the request was still waiting in the queue."""
        now = time.monotonic()
        return now if session is None else self._page.get(session, now)


@dataclass
class StoppedMaps:
    """One page's columns for a front end that draws a column again on each change (Streamlit): which map each
    column's Stop left unfinished, and the map it drew last, shown again after a Stop (as a Gradio page keeps it).
    Each entry names the run it was for (`run_key`: the column's model in this analysis), so that nothing carries
    over to another model or analysis. Kept in the session, small: a key and options per column, no image."""

    stopped: dict[int, tuple[str, MapKey]] = field(default_factory=dict)  # column: (run's key, map key) stopped
    drawn: dict[int, tuple[str, ViewOptions]] = field(default_factory=dict)  # column: (run's key, options) drawn

    def stop(self, slot: int, run_key: str, asked: MapKey) -> None:
        """The column's Stop, pressed while the map keyed `asked` (ViewOptions.key) was computed on the run."""
        self.stopped[slot] = (run_key, asked)

    def is_stopped(self, slot: int, run_key: str, asked: MapKey) -> bool:
        """Whether the map keyed `asked` on the run is the one the column's Stop left unfinished: it waits for
        Compute."""
        return self.stopped.get(slot) == (run_key, asked)

    def compute(self, slot: int) -> None:
        """Compute (or another map asked for) lifts the column's Stop."""
        self.stopped.pop(slot, None)

    def drew(self, slot: int, run_key: str, options: ViewOptions) -> None:
        """The column drew the map `options` ask for on the run (one per column: nothing older is held)."""
        self.drawn[slot] = (run_key, options)

    def previous(self, slot: int, run_key: str, run: ModelRun) -> ViewOptions | None:
        """The map the column drew last on this run, to show again after a Stop (None: none, or not this run's)."""
        drawn_for, options = self.drawn.get(slot, (None, None))
        return options if drawn_for == run_key and options.computed(run) else None


def stopped_line(previous_shown: bool = True) -> str:
    """What a column says once its map was stopped before it was done: that the map shown is the one before (when
    one is shown), and that Compute computes the one picked."""
    return f"{LABEL.map_stopped} {text.MAP_STOPPED}" if previous_shown else LABEL.map_stopped


@dataclass(frozen=True)
class Asked:
    """What an Analyze asks for: the photo (a key for it: its path or its bytes' digest), the models picked and
    typed, and the weights."""

    photo: str
    models: tuple[str, ...]
    weights: str


def analyzes(asked: Asked, under_way: Asked | None) -> bool:
    """The one rule for a second Analyze, in every front end: one asking for what the page's Analyze under way asks
    for (a double click; clicks made while a photo uploads reach the server together) analyzes nothing, and the one
    under way fills the page; anything else analyzes (once the one under way has ended: one at a time per page). A
    later Analyze, once the page shows its results, analyzes afresh whatever it asks for."""
    return under_way is None or asked != under_way


class OnePerSession:
    """One Analyze at a time per page, by `analyzes`, for a front end whose events run at once (Gradio), keyed by the
    page's session id: a second Analyze sent while the first runs asking for the same does nothing, rather than run
    the whole analysis again; one asking for something else waits for the first to end, then runs."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running: dict[str, Asked] = {}

    @contextmanager
    def only_one(self, session: Session, asked: Asked = Asked("", (), "")) -> Iterator[bool]:
        """True (the caller runs the event) unless the session's own event asking for the same `asked` is running, in
        which case this yields False at once (the running one will fill the page); an event asking for something
        else waits for the running one to end. Without a session (a direct call) it is always True."""
        if not session:
            yield True
            return
        with self._changed:
            while session in self._running:
                if not analyzes(asked, self._running.get(session)):
                    break
                self._changed.wait()
            first = session not in self._running
            if first:
                self._running[session] = asked
        if not first:
            yield False
            return
        try:
            yield True
        finally:
            with self._changed:
                del self._running[session]
                self._changed.notify_all()

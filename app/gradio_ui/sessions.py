"""One event of a kind at a time per browser session: a second Analyze sent while the first runs (a double click
made while a new photo uploads reaches the server twice: the page sends every click that waited for the upload)
does nothing and ends at once, rather than running the whole analysis again or holding one of the page's few
places in the queue until the first has finished."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import gradio as gr


class OnePerSession:
    """Per session, whether an event of this kind is running; `only_one` yields True to the first caller."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._running: set[str] = set()

    @contextmanager
    def only_one(self, request: gr.Request | None) -> Iterator[bool]:
        """True (the caller runs the event) unless the session's own event is running, in which case this yields
        False at once (the running one will fill the page). Without a session (a direct call) it is always True."""
        session = request.session_hash if request is not None else None
        if not session:
            yield True
            return
        with self._guard:
            first = session not in self._running
            self._running.add(session)
        if not first:
            yield False
            return
        try:
            yield True
        finally:
            with self._guard:
                self._running.discard(session)

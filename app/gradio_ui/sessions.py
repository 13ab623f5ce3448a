"""One event of a kind at a time per browser session: a second Analyze sent while the first runs (a double
click lands twice when both clicks reach the page before it has marked the first as pending) waits for the
first and then does nothing, rather than running the whole analysis again."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import gradio as gr


class OnePerSession:
    """Per session, whether an event of this kind is running; `only_one` yields True to the first caller."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._running: dict[str, threading.Lock] = {}

    @contextmanager
    def only_one(self, request: gr.Request | None) -> Iterator[bool]:
        """True (the caller runs the event) unless the session's own event is running, in which case this
        waits until it ends and yields False. Without a session (a direct call) the caller always runs."""
        if request is None or not request.session_hash:
            yield True
            return
        with self._guard:
            lock = self._running.setdefault(request.session_hash, threading.Lock())
        if not lock.acquire(blocking=False):
            with lock:  # the running one ends first; this one leaves the page as that one made it
                pass
            yield False
            return
        try:
            yield True
        finally:
            lock.release()
            with self._guard:
                if not lock.locked():
                    self._running.pop(request.session_hash, None)

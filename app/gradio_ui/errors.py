"""Problems, stops and abandoned requests in the Gradio front end: a Problem reaches the page as a Gradio
error without server paths (no traceback in the log: it was logged as one line when made); work whose client
went away, or whose session pressed Stop, stops at its next progress report."""

from __future__ import annotations

import functools
import html
import re
import threading
import time
from typing import Callable, TypeVar

import gradio as gr
from gradio.context import LocalContext

from app.guard import refuse
from app.tabs import Problem

Report = Callable[[float, str], None]
Handler = TypeVar("Handler", bound=Callable)


SERVER_PATH = re.compile(r"(?<![^\s'\"(\[])(?:/[^\s/'\"()\[\],;]+)+/?")  # an absolute path, after a space or quote


def without_paths(message: str) -> str:
    """`message` with every absolute server path cut to its last part ("/tmp/gradio/ab12/x.zip" to "x.zip"):
    a visitor learns nothing of the server's folders, whatever raised the message."""
    return SERVER_PATH.sub(lambda match: match.group().rstrip("/").rsplit("/", 1)[-1] or "/", message)


def page_error(message: str) -> gr.Error:
    """The Gradio error showing `message` on the page as plain text: Gradio draws a toast's message as HTML, so
    "s<stage>:<block>" or markup typed by a user would be taken as tags; server paths are cut to their last part."""
    return gr.Error(html.escape(without_paths(message), quote=False), duration=None, print_exception=False)


class Refusals:
    """The messages the latest `kept` refused inputs (a spec, an upload's path) were refused with, shared by the
    server's sessions: looked up, an input is not checked or logged again."""

    def __init__(self, kept: int = 256) -> None:
        self.kept, self._messages, self._lock = kept, dict[str, str](), threading.Lock()

    def add(self, key: str, message: str) -> None:
        with self._lock:
            self._messages[key] = message
            if len(self._messages) > self.kept:
                del self._messages[next(iter(self._messages))]

    def get(self, key: object) -> str | None:
        return self._messages.get(key) if isinstance(key, str) else None


def user_facing(handler: Handler) -> Handler:
    """`handler` with its Problems shown on the page as errors."""

    @functools.wraps(handler)
    def run(*args, **kwargs):
        try:
            return handler(*args, **kwargs)
        except Problem as exc:
            raise page_error(str(exc)) from None

    return run  # type: ignore[return-value]


def client_gone(request: gr.Request | None) -> bool:
    """Whether Gradio's queue has marked this session's running events as abandoned (the page was closed
    or the client hung up)."""
    blocks = LocalContext.blocks.get(None)
    queue = getattr(blocks, "_queue", None)
    if request is None or queue is None:
        return False
    mine = [event for job in queue.active_jobs if job for event in job if event.session_hash == request.session_hash]
    return bool(mine) and not any(event.alive for event in mine)


STOPS: dict[str, float] = {}  # session hash: when its Stop was last pressed (time.monotonic)
STOPS_KEPT_S = 3600


def ask_stop(request: gr.Request) -> None:
    """Stop the session's work in progress at its next progress report (a Stop button's handler)."""
    now = time.monotonic()
    for session in [s for s, when in STOPS.items() if now - when > STOPS_KEPT_S]:
        del STOPS[session]
    STOPS[request.session_hash] = now


def stopped_since(request: gr.Request | None, started: float) -> bool:
    """Whether the session pressed Stop after `started` (time.monotonic)."""
    return request is not None and STOPS.get(request.session_hash, -1.0) >= started


def watched(progress: gr.Progress, request: gr.Request | None) -> Report:
    """The service's progress report for a handler: shown on the page, and raising Refused (which stops the
    work at a block or batch boundary) once the client has gone away or its session pressed Stop."""
    started = time.monotonic()

    def report(fraction: float, message: str) -> None:
        if client_gone(request):
            raise refuse("stopped: the client that asked went away", "the rest of an abandoned request")
        if stopped_since(request, started):
            raise refuse("stopped at your request", "work stopped by its user")
        progress(fraction, desc=message)

    return report

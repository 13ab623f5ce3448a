"""Expected failures and abandoned requests in the Gradio front end: shown to the user, one line in the
server log, no traceback; work whose client went away stops at its next progress report."""
from __future__ import annotations

import logging
from typing import Callable

import gradio as gr
from gradio.context import LocalContext

from app.guard import Refused, refuse
from engine.errors import shown

log = logging.getLogger("vit_explorer")
Report = Callable[[float, str], None]


def user_error(problem: Exception | str) -> gr.Error:
    """A gr.Error for bad input or an unavailable resource (Refused errors were logged when raised)."""
    message = str(problem)
    if not isinstance(problem, Refused):
        log.warning("refused a request: %s", shown(message, 200))
    return gr.Error(message, duration=None, print_exception=False)


def client_gone(request: gr.Request | None) -> bool:
    """Whether Gradio's queue has marked this session's running events as abandoned (the page was closed
    or the client hung up)."""
    blocks = LocalContext.blocks.get(None)
    queue = getattr(blocks, "_queue", None)
    if request is None or queue is None:
        return False
    mine = [event for job in queue.active_jobs if job for event in job if event.session_hash == request.session_hash]
    return bool(mine) and not any(event.alive for event in mine)


def watched(progress: gr.Progress, request: gr.Request | None) -> Report:
    """The service's progress report for a handler: shown on the page, and raising Refused (which stops the
    work at a block or batch boundary) once the client has gone away."""

    def report(fraction: float, message: str) -> None:
        if client_gone(request):
            raise refuse("stopped: the client that asked went away", "the rest of an abandoned request")
        progress(fraction, desc=message)

    return report

"""Problems, stops and abandoned requests in the Gradio front end: a Problem reaches the page as a Gradio
error without server paths (no traceback in the log: it was logged as one line when made); work whose client
went away, or whose column's Stop was pressed, stops at its next progress report."""

from __future__ import annotations

import functools
import html
import re
import threading
from typing import Callable, TypeVar

import gradio as gr

from app.server.gradio_adapter import session_gone
from app.server.refusal import refuse
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


def watched(progress: gr.Progress, request: gr.Request | None, stopped: Callable[[], bool] | None = None) -> Report:
    """The service's progress report for a handler: shown on the page, and raising Refused (which stops the
    work at a block or batch boundary) once the client has gone away or `stopped()` says the work was stopped
    (a map's column: its Stop, or a newer map asked for)."""

    def report(fraction: float, message: str) -> None:
        if session_gone(request):
            raise refuse("stopped: the client that asked went away", "the rest of an abandoned request")
        if stopped is not None and stopped():
            raise refuse("stopped at your request", "work stopped by its user")
        progress(fraction, desc=message)

    return report


# Gradio's page draws "Error" and no message when the server refuses a request before running it (429 or 413
# from the guard): the page shows the guard's message itself, in a box at the top that goes after 20 s
SHOW_REFUSALS = """() => {
    if (window.__vitRefusals) return;
    window.__vitRefusals = true;
    const show = (message) => {
        let box = document.getElementById('refusal');
        if (!box) {
            box = document.createElement('div');
            box.id = 'refusal';
            box.setAttribute('role', 'alert');
            box.onclick = () => { box.hidden = true; };
            document.body.appendChild(box);
        }
        box.textContent = 'Not started: ' + message + ' (click to close)';
        box.hidden = false;
        clearTimeout(box.closing);
        box.closing = setTimeout(() => { box.hidden = true; }, 20000);
    };
    const fetched = window.fetch;
    window.fetch = async (...args) => {
        const response = await fetched(...args);
        if (response.status === 429 || response.status === 413) {
            response.clone().json().then((body) => show(body.detail || body.error)).catch(() => {});
        }
        return response;
    };
}"""
REFUSAL_CSS = """
#refusal {position: fixed; top: 12px; left: 50%; transform: translateX(-50%); z-index: 1000;
max-width: 720px; padding: 10px 16px; background: #fef2f2; border-left: 4px solid #dc2626; cursor: pointer;
font-family: "Source Sans Pro", ui-sans-serif, system-ui, sans-serif}"""

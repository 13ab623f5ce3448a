"""Each tab's logic, shared by every front end: plain inputs in (strings, numbers, files' bytes or paths),
plain data out (figures, images, Markdown, downloads). The Gradio and Streamlit files only lay out
widgets and bind them to these calls; a third front end would do the same.

A request that cannot be served raises `Problem`, whose message is for the user as it is.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from app.exports.export import ExportError
from app.server.refusal import Refused
from app.views import texts as text
from engine.errors import EngineError, OfflineWeightsError, shown

log = logging.getLogger("vit_explorer")


class Problem(Exception):
    """Why a request could not be served, in words for the user (logged once, as one line)."""


def problem(message: str) -> Problem:
    """A Problem for a request the user must change, logged as one line."""
    log.warning("refused a request: %s", shown(message, 200))
    return Problem(message)


@contextmanager
def problems() -> Iterator[None]:
    """Turn the expected failures of a request (bad input, an unavailable model or weights, an export
    without a browser) into a Problem, logged as one line; anything else is a real fault and propagates."""
    try:
        yield
    except (EngineError, ValueError, ExportError) as exc:
        if isinstance(exc, Refused):  # refusals were logged where they were made
            raise Problem(str(exc)) from None
        if isinstance(exc, OfflineWeightsError):  # the engine's advice (a local file, HF_HOME) is for its CLI
            raise problem(text.OFFLINE_WEIGHTS.format(name=exc.name)) from None
        raise problem(str(exc)) from None


def notice(online: bool, analyzed: bool) -> str:
    """The line above the page when the hub cannot be reached (Markdown; "" online): in full until a photo is
    analyzed, then in one line, so that the results start on the first screen."""
    if online:
        return ""
    return text.OFFLINE_SHORT if analyzed else text.OFFLINE


@dataclass(frozen=True)
class Download:
    """A file to offer: its bytes and its name."""

    data: bytes
    filename: str

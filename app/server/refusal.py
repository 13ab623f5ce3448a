"""A refusal of what came in: one log line (what was refused and why, no traceback) and one message shown to the
user as it is, naming no server path and telling nothing about what exists on disk.

    raise refuse("pick at most 4 models (got 9)", "too many models")
"""

from __future__ import annotations

import logging

log = logging.getLogger("vit_explorer")


class Refused(ValueError):
    """An expected refusal of a request: its message is shown to the user as it is."""


def refuse(message: str, what: str) -> Refused:
    """A Refused error, logged as one line (what was refused and why), no traceback."""
    log.warning("refused %s: %s", what, message)
    return Refused(message)

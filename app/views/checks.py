"""What the page says of a map's check (its deletion and insertion against random orders, returned by the service
and kept on the session's run by the page model): the line under the map, in its caption, on screen and in the
exports; a map never shows another map's."""

from __future__ import annotations

from app.backend.service import ModelRun
from app.views import texts as text
from app.views.attention import ViewOptions
from engine.analyses.faithfulness import Faithfulness


def checked(run: ModelRun, options: ViewOptions) -> Faithfulness | None:
    """The check of the map `options` choose for `run`, if it has been made."""
    return run.checks.get(options.check_key(run))


def check_line(run: ModelRun, options: ViewOptions) -> str:
    """The line of the check of the map `options` choose for `run`, or "" before it is checked."""
    found = checked(run, options)
    return "" if found is None else found.line()


def with_check(caption: str, run: ModelRun, options: ViewOptions) -> str:
    """A map's caption, then its check's line once checked (a map never shows another map's)."""
    line = check_line(run, options)
    if not line:
        return caption
    note = f" ({text.CHECK_RANDOM})" if run.result.random_weights else ""
    return f"{caption}  \n**{text.CHECK_TITLE}** {line}{note}."

"""Progress in Streamlit: a bar drawn from the service's model thread, and the work stopped at its next report
once its Stop is clicked, the controls that chose it change, or the session ends."""

from __future__ import annotations

import streamlit as st

from app.server.refusal import refuse
from app.server.streamlit_adapter import asked, attach, script_context, session_alive, widget_states


def progress_bar(stop: str | None = None, asked_by: tuple[str, ...] = ()):
    """A progress bar and its report(fraction, message) function, callable from the service's model
    thread (Streamlit draws only from threads that carry the session's script context). With `stop`, the
    key of a Stop button, the work stops at its next report once that button is clicked, one of the widgets
    keyed `asked_by` (those that chose the work) is changed, or the session ends; any other change (the map's
    opacity, a colour) waits for the work instead of restarting it."""
    bar, context = st.progress(0.0), script_context()

    def report(fraction: float, message: str) -> None:
        if stop and (stop_asked(context, stop) or changed(context, asked_by)):
            raise refuse("stopped: the page asked for something else", "work stopped by its user")
        attach(context)
        bar.progress(min(max(fraction, 0.0), 1.0), message)

    return report


def stop_asked(context, button: str) -> bool:
    """Whether the session has ended, or asked for a run that is a click on the button keyed `button`, since
    `context`'s run began (Streamlit keeps the request, with the widgets' states, until the script reaches
    its next element, which a model call holds up). A full rerun (another opacity, a colour) stops this run
    while its session lives on (Streamlit's fast reruns): the work goes on, and the new run takes its result."""
    request, widgets = asked(context)
    if request == "stop":
        return not session_alive(context.session_id)
    clicked = (w for w in widgets if w.WhichOneof("value") == "trigger_value" and w.trigger_value)
    return request == "rerun" and any(w.id.endswith(f"-{button}") for w in clicked)


def changed(context, keys: tuple[str, ...]) -> bool:
    """Whether the run the session asked for (see stop_asked) gives a widget keyed one of `keys` another value
    than the run in progress has."""
    request, widgets = asked(context)
    if not keys or request != "rerun":
        return False
    now = {w.id: w for w in widget_states(context)}
    mine = (w for w in widgets if w.id in now and any(w.id.endswith(f"-{key}") for key in keys))
    return any(w != now[w.id] for w in mine)

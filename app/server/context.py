"""The work running here, as context variables the adapters set: whom it is for (`visitor`, as fair turns count
them) and whether it must stop (`stop_point`, called at every block or batch). What only a front end's framework
knows (a queued event cancelled, its visitor) its adapter tells through `FRAMEWORK`."""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from app.server.refusal import refuse


@dataclass(eq=False)
class Work:
    """A request the guard let through to a function, until it is answered: who sent it, and why its work must
    stop (None while it may go on)."""

    address: str
    session: str | None
    stopped: str | None = None


CURRENT: contextvars.ContextVar[Work | None] = contextvars.ContextVar("vit_explorer_work", default=None)


CANCELLED: OrderedDict[str, None] = OrderedDict()  # Gradio event ids whose clients cancelled them, newest last


CANCELLED_KEPT = 10_000


GONE = "stopped: the client that asked went away"


def stop_point() -> None:
    """Stop the work of the request running here (raise Refused) once it has been abandoned: a REST client hung
    up, a queued event was cancelled (gradio_client's job.cancel()) or its client went away. Called at every block
    or batch (the service's progress reports); a no-op outside a request."""
    work = CURRENT.get()
    why = work.stopped if work is not None else None
    if why is None:
        why = FRAMEWORK.stopped()
    if why:
        raise refuse(why, "the rest of an abandoned request")


@dataclass
class Framework:
    """What only the front end's framework knows of the work running here, told by its adapter
    (app.server.gradio_adapter.install): why its queued event must stop, and whom it is for (None: not known)."""

    stopped: Callable[[], str | None] = lambda: None
    visitor: Callable[[], str | None] = lambda: None


FRAMEWORK = Framework()  # nothing known (the CLI, Streamlit, the tests of the service) until an adapter says


def visitor() -> str:
    """Who the work running here is for, as fair turns count them: the address of the request the guard let through
    (REST), of the Gradio queue's event, or the one a front end without the guard set in VISITOR (Streamlit);
    'local' for the CLI and tests."""
    work = CURRENT.get()
    if work is not None:
        return work.address
    if chosen := VISITOR.get():
        return chosen
    return FRAMEWORK.visitor() or "local"


VISITOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("vit_explorer_visitor", default=None)


def stoppable(report: Callable[[float, str], None] | None) -> Callable[[float, str], None]:
    """`report` (or no report) passing first through `stop_point`."""

    def checked(fraction: float, message: str) -> None:
        stop_point()
        if report is not None:
            report(fraction, message)

    return checked

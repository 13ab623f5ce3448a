"""Gradio's internals, used in this one module: the running handler's request and queued event, the app's queue and
the events in it (to stop work whose page has gone), the sessions' stored state, and the endpoints' functions. A
Gradio upgrade that moves one of them fails tests/test_framework_internals.py, which names it (`missing`).

    install()                 # the guard learns who a queued event is for and when it has been abandoned
    calm(demo.queue(...))     # the queue looks for work every QUEUE_LOOK_S, not every millisecond
    event_gone()              # why the queued event running here must stop, or None
    sessions(demo).session_data, sessions(demo).time_last_used, sessions(demo).lock
"""

from __future__ import annotations

from typing import Callable

import gradio as gr
from gradio.context import LocalContext
from gradio.data_classes import ImageData
from gradio.queueing import Queue
from gradio.state_holder import StateHolder
from gradio.utils import get_upload_folder

from app.server import adapters, context

__all__ = ("ImageData",)  # the payload of an image upload, as the photo's preview check reads it

# what this module reads: (object, attribute) pairs, checked against the pinned Gradio by `missing`
USED = (
    (LocalContext, "event_id"),
    (LocalContext, "blocks"),
    (LocalContext, "request"),
    (Queue, "event_queue_per_concurrency_id"),
    (Queue, "active_jobs"),
    (Queue, "sleep_when_free"),
    (Queue, "progress_update_sleep_when_free"),
    (StateHolder, "session_data"),
    (StateHolder, "time_last_used"),
    (StateHolder, "lock"),
    (gr.Blocks, "_queue"),
    (gr.Blocks, "state_holder"),
    (gr.Blocks, "fns"),
)


def missing() -> list[str]:
    """The internals this module reads that the installed Gradio does not have ('Class.attribute')."""
    return adapters.missing(USED)


def queue_of(blocks: gr.Blocks | None) -> Queue | None:
    """The app's queue (None before it is set up)."""
    return getattr(blocks, "_queue", None)


QUEUE_LOOK_S = 0.05  # how often an idle queue looks for a new event (Gradio's own: 1 ms on Linux, 50 ms on Windows)
PROGRESS_LOOK_S = 0.05  # how often a progress bar is sent on (Gradio's own: 10 ms on Linux, 100 ms on Windows)


def calm(demo: gr.Blocks) -> gr.Blocks:
    """`demo` with its queue looking for work every QUEUE_LOOK_S and sending progress every PROGRESS_LOOK_S: at
    Gradio's Linux defaults an idle server spent 8% of a core waking its event loop, and now under 1%
    (bench/idle_server.py); an event starts at most 50 ms later (Gradio's own wait on Windows), and a progress bar
    still moves 20 times a second."""
    queue = queue_of(demo)
    queue.sleep_when_free, queue.progress_update_sleep_when_free = QUEUE_LOOK_S, PROGRESS_LOOK_S
    return demo


def pending_events(queue: Queue | None) -> list:
    """The events the queue holds, waiting or running."""
    if queue is None:
        return []
    waiting = [event for line in queue.event_queue_per_concurrency_id.values() for event in line.queue]
    return waiting + [event for job in queue.active_jobs if job for event in job]


def event_gone() -> str | None:
    """Why the queued event running here must stop (cancelled by its client, or its client gone), or None."""
    event_id = LocalContext.event_id.get(None)
    if not event_id:
        return None
    if event_id in context.CANCELLED:
        return "stopped: cancelled by the client that asked"
    mine = [e for e in pending_events(queue_of(LocalContext.blocks.get(None))) if getattr(e, "_id", None) == event_id]
    return context.GONE if mine and not any(event.alive for event in mine) else None


def queued_visits(demo: gr.Blocks):
    """A function giving the (session, visitor address) of each event in `demo`'s queue, for the guard's limits."""

    def visits() -> list[tuple[str | None, str | None]]:
        return [(e.session_hash, _host(getattr(e, "request", None))) for e in pending_events(queue_of(demo))]

    return visits


def session_gone(request: gr.Request | None) -> bool:
    """Whether the queue has marked this request's session's running events as abandoned (the page was closed or
    the client hung up)."""
    queue = queue_of(LocalContext.blocks.get(None))
    if request is None or queue is None:
        return False
    mine = [event for job in queue.active_jobs if job for event in job if event.session_hash == request.session_hash]
    return bool(mine) and not any(event.alive for event in mine)


def request_host() -> str | None:
    """The client address of the request the running handler serves (the guard has put the visitor there)."""
    return _host(LocalContext.request.get(None))


def _host(request) -> str | None:
    return getattr(getattr(request, "client", None), "host", None)


def request_session() -> str | None:
    """The page session of the request the running handler serves."""
    return getattr(LocalContext.request.get(None), "session_hash", None)


def upload_folder() -> str:
    """Where Gradio keeps uploads and the files it hands out (GRADIO_TEMP_DIR, else its default)."""
    return get_upload_folder()


def sessions(demo: gr.Blocks) -> StateHolder:
    """The stored state of every page session: `session_data`, `time_last_used` and their `lock`."""
    return demo.state_holder


def endpoints(demo: gr.Blocks) -> list[tuple[str, Callable, int]]:
    """Each named endpoint of `demo`: its API name, its function and how many inputs it takes."""
    return [
        (str(block_fn.api_name), block_fn.fn, len(block_fn.inputs))
        for block_fn in demo.fns.values()
        if block_fn.api_name and block_fn.fn is not None
    ]


def install() -> None:
    """Tell the framework-neutral guard how to read a queued event's visitor and abandonment."""
    context.FRAMEWORK.stopped = event_gone
    context.FRAMEWORK.visitor = request_host

"""Browser sessions on the server: one event of a kind at a time per session, and what a session holds let go.

One event of a kind at a time per browser session: a second Analyze sent while the first runs (a double click
made while a new photo uploads reaches the server twice: the page sends every click that waited for the upload)
does nothing and ends at once, rather than running the whole analysis again or holding one of the page's few
places in the queue until the first has finished."""

from __future__ import annotations

import datetime
import logging
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import gradio as gr

from app.guard import SessionFiles
from engine.analyses.budget import give_back

log = logging.getLogger("vit_explorer")


class OnePerSession:
    """Per session, whether an event of this kind is running; `only_one` yields True to the first caller."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._running: set[str] = set()

    @contextmanager
    def only_one(self, request: gr.Request | None) -> Iterator[bool]:
        """True (the caller runs the event) unless the session's own event is running, in which case this yields
        False at once (the running one will fill the page). Without a session (a direct call) it is always True."""
        session = request.session_hash if request is not None else None
        if not session:
            yield True
            return
        with self._guard:
            first = session not in self._running
            self._running.add(session)
        if not first:
            yield False
            return
        try:
            yield True
        finally:
            with self._guard:
                self._running.discard(session)


GRACE_S = 30  # a page closed this long (no event since) is dropped: a reconnect after a short drop keeps it
SHORT_IDLE_S = 600  # when memory is short, sessions idle this long are dropped, oldest first


def resident_mb() -> float:
    """This process's resident memory, in MB (/proc; 0 where there is none)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class Sessions:
    """What a browser session holds on the server, let go: when its page closes (Gradio's unload), its uploads
    are deleted at once and its stored results and page state (Gradio keeps them an hour) after GRACE_S; when
    the process holds over `high_mb`, sessions idle over SHORT_IDLE_S are dropped, oldest first."""

    def __init__(self, demo: gr.Blocks, files: SessionFiles, high_mb: float) -> None:
        self.demo, self.files, self.high_mb = demo, files, high_mb

    def close(self, request: gr.Request) -> None:
        """The unload event of a page: drop what its session holds."""
        session = request.session_hash if request is not None else None
        if not session:
            return
        deleted = self.files.forget(session)
        closed = datetime.datetime.now()
        timer = threading.Timer(GRACE_S, self._drop_if_idle, (session, closed))
        timer.daemon = True
        timer.start()
        log.info(
            "a page closed: %d upload%s deleted, its results dropped in %d s", deleted, "s" * (deleted != 1), GRACE_S
        )

    def _drop_if_idle(self, session: str, since: datetime.datetime) -> None:
        holder = self.demo.state_holder
        if holder.time_last_used.get(session, since) <= since:
            self._drop(session)

    def _drop(self, session: str) -> None:
        holder = self.demo.state_holder
        with holder.lock:
            holder.session_data.pop(session, None)
            holder.time_last_used.pop(session, None)
        self.files.forget(session)

    def trim(self) -> int:
        """When memory is short, drop the sessions idle over SHORT_IDLE_S, oldest first, until it is not; the
        count dropped."""
        if resident_mb() <= self.high_mb:
            return 0
        holder, cutoff = self.demo.state_holder, datetime.datetime.now() - datetime.timedelta(seconds=SHORT_IDLE_S)
        idle = sorted((used, session) for session, used in list(holder.time_last_used.items()) if used < cutoff)
        dropped = 0
        for _, session in idle:
            self._drop(session)
            dropped += 1
            if dropped % 20 == 0:
                give_back()
                if resident_mb() <= self.high_mb:
                    break
        give_back()
        if dropped:
            log.info("memory short: dropped %d session%s idle over %d s", dropped, "s" * (dropped != 1), SHORT_IDLE_S)
        return dropped

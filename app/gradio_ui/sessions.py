"""Browser sessions on the server: what a session holds let go when its page closes, or early when memory is
short."""

from __future__ import annotations

import datetime
import logging
import os
import threading
from pathlib import Path

import gradio as gr

from app.gradio_ui.downloads import delete_exports
from app.server.gradio_adapter import sessions
from app.server.uploads import SessionFiles
from engine.analyses.budget import give_back

log = logging.getLogger("vit_explorer")


def session(request: gr.Request | None) -> str | None:
    """The page's session id, as app.tabs' rules key a visitor's page (None: a direct call)."""
    return getattr(request, "session_hash", None)


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
    and exports are deleted at once, and its stored results and page state (Gradio keeps them an hour) after
    GRACE_S; when the process holds over `high_mb`, sessions idle over SHORT_IDLE_S are dropped, oldest first."""

    def __init__(self, demo: gr.Blocks, files: SessionFiles, high_mb: float) -> None:
        self.demo, self.files, self.high_mb = demo, files, high_mb

    def close(self, request: gr.Request) -> None:
        """The unload event of a page: drop what its session holds."""
        session = request.session_hash if request is not None else None
        if not session:
            return
        deleted, exports = self.files.forget(session), delete_exports(session)
        closed = datetime.datetime.now()
        timer = threading.Timer(GRACE_S, self._drop_if_idle, (session, closed))
        timer.daemon = True
        timer.start()
        log.info(
            "a page closed: %d upload%s deleted, %d export%s, its results dropped in %d s",
            deleted,
            "s" * (deleted != 1),
            exports,
            "s" * (exports != 1),
            GRACE_S,
        )

    def _drop_if_idle(self, session: str, since: datetime.datetime) -> None:
        holder = sessions(self.demo)
        if holder.time_last_used.get(session, since) <= since:
            self._drop(session)

    def _drop(self, session: str) -> None:
        holder = sessions(self.demo)
        with holder.lock:
            holder.session_data.pop(session, None)
            holder.time_last_used.pop(session, None)
        self.files.forget(session)
        delete_exports(session)  # made since its page closed, if any

    def trim(self) -> int:
        """When memory is short, drop the sessions idle over SHORT_IDLE_S, oldest first, until it is not; the
        count dropped."""
        if resident_mb() <= self.high_mb:
            return 0
        holder, cutoff = sessions(self.demo), datetime.datetime.now() - datetime.timedelta(seconds=SHORT_IDLE_S)
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

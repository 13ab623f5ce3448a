"""What the Streamlit server needs for a class at once, in front of and beside Streamlit's own runtime (the server's,
as app.server.middleware.RequestGuard is the Gradio server's: no page is drawn here):

- `StreamlitGuard`: the Gradio app's limits on who is who and on uploads (app.server.middleware.UploadGuard), with the
  uploads Streamlit keeps in memory as what is held, and a cap on the uploads one page session holds;
- `Closed`: the sessions whose page has closed let go of their uploads and drawn images. Streamlit keeps a closed
  page's session for `server.disconnectedSessionTTL` seconds, for a reconnect, and then drops it without shutting
  it down, so its uploaded files and media references would stay in memory for the life of the process.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from contextlib import asynccontextmanager

from app.server.middleware import UploadGuard
from app.server.settings import SETTINGS
from app.server.streamlit_adapter import (
    forget,
    held_bytes,
    reconnect_seconds,
    running,
    session_alive,
    session_bytes,
    upload_sessions,
)

log = logging.getLogger("vit_explorer")
UPLOAD_ROUTE = re.compile(r"/_stcore/upload_file/([^/]+)/")
# bytes of uploads one page session may hold: its photo, the camera's photo and a dataset zip, each within
# server.maxUploadSize (50 MB), with room for one being replaced
SESSION_UPLOADS = SETTINGS.bytes(SETTINGS.session_upload_mb)
SWEEP_S = SETTINGS.session_sweep_s
# One record per server process, kept by the middleware and read by the pages' runs: Streamlit gives a page's
# script no handle on its server's middleware (st.cache_resource, its shared store, warns outside a script's run).
REFUSED: OrderedDict[str, str] = OrderedDict()  # page session: why its last upload was refused, not yet said
REFUSALS_KEPT = 1000


class StreamlitGuard(UploadGuard):
    """UploadGuard in front of Streamlit's app: each visitor counted behind the trusted proxies (so that
    st.context.ip_address is the visitor), their uploads within their bytes a minute and the uploads held, and a
    page session's uploads within SESSION_UPLOADS."""

    def __init__(self, app, per_session: int = SESSION_UPLOADS) -> None:
        super().__init__(app, held_bytes)
        self.per_session = per_session

    def refusal(self, scope, size: int) -> str | None:
        """Why `size` more bytes of this upload are refused now, or None; a refusal is kept for its page to say
        (Streamlit's uploader itself shows only the status code)."""
        session = UPLOAD_ROUTE.match(scope["path"])
        refused = super().refusal(scope, size)
        if session and session_bytes(session[1]) + size > self.per_session:
            refused = f"a page may hold {self.per_session / 2**20:.0f} MB of uploads: remove one before adding another"
        if refused and session:
            REFUSED[session[1]] = refused
            while len(REFUSED) > REFUSALS_KEPT:
                REFUSED.popitem(last=False)
        return refused


def refused_upload(session: str) -> str | None:
    """Why this page session's last upload was refused, once (None: none was)."""
    return REFUSED.pop(session, None)


class Closed:
    """The page sessions this process has seen (`seen`, from each run of the page), and the sweep that lets go
    of the uploads and drawn images of those whose page closed over `server.disconnectedSessionTTL` ago."""

    def __init__(self) -> None:
        self.last_active: dict[str, float] = {}  # session id: when it was last seen connected

    def seen(self, session: str) -> None:
        self.last_active[session] = time.monotonic()

    def sweep(self) -> int:
        """Let go of what the closed sessions hold; the count of sessions let go of."""
        if not running():
            return 0
        now, ttl = time.monotonic(), reconnect_seconds()
        for session in upload_sessions():  # uploads of a session whose page never ran to the end
            self.last_active.setdefault(session, now)
        closed = []
        for session, when in list(self.last_active.items()):
            if session_alive(session):
                self.last_active[session] = now
            elif now - when > ttl:
                closed.append(session)
        freed = held_bytes()
        for session in closed:
            del self.last_active[session]
        if closed:
            forget(closed)
            log.info(
                "let go of %d closed page session(s): %.1f MB of uploads and their drawn images",
                len(closed),
                (freed - held_bytes()) / 2**20,
            )
        return len(closed)


CLOSED = Closed()


@asynccontextmanager
async def sweeping(_app):
    """st.App's lifespan: CLOSED swept every SWEEP_S seconds while the server runs."""

    async def every() -> None:
        while True:
            await asyncio.sleep(SWEEP_S)
            try:
                CLOSED.sweep()
            except Exception:  # a sweep must never stop the server; the next one tries again
                log.exception("sweeping closed Streamlit sessions failed")

    task = asyncio.create_task(every())
    try:
        yield
    finally:
        task.cancel()

"""The browser that draws exported figures (plotly's exporter, kaleido, drives a Chromium or Chrome), shared by
every visitor of a server: started by the first export, closed once none has used it for a while, and never able
to keep an export waiting for ever. Each figure is a call with a deadline; a browser that fails to start, crashes
or stops answering gives an ExportError naming what happened, and the next export starts a fresh one.

    with EXPORTS.open() as browser:
        png = browser.image(figure, "png", 1200, 700, 2)

A handout's PDF is printed by the same browser executable, one headless run per handout (print_pdf), within
PRINT_S. It is kaleido's adapter: what it reads of kaleido (and of choreographer, which kaleido's browser is) is
listed in `USED`, checked by tests/test_framework_internals.py against the installed version.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import plotly.graph_objects as go
from choreographer import Browser
from kaleido import Kaleido

from app.server import adapters
from app.server.settings import SETTINGS

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
START_S = 90.0  # a Chromium that has not opened its page by then will not
DRAW_S = 120.0  # one figure, waiting for the browser included: a big figure draws in a few seconds
CLOSE_S = 10.0  # a browser that has not closed by then is terminated
PRINT_S = 90.0  # one handout printed to PDF, the browser's start included: it takes a few seconds


USED = (
    (Kaleido, "open"),
    (Kaleido, "calc_fig"),
    (Kaleido, "close"),
    (Browser, "subprocess"),  # the browser's process, ended when it will not close
)


GOODBYE = "{bye}"  # what choreographer's wrapper writes on the browser's pipe as the browser closes
PIPE_LOGGER = "choreographer.channels.pipe"


class CloseIsNoFault(logging.Filter):
    """Drops choreographer's log record of the browser's goodbye. Read together with the last answers, `{bye}` is
    taken for a message that is not JSON and logged as an error with a traceback ("JSONError decoding message.
    Ignoring"): it is the close handshake, not a fault, and a server's log keeps its tracebacks for faults. Any
    other message that cannot be read is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return getattr(getattr(error, "__cause__", None), "doc", "").strip() != GOODBYE


logging.getLogger(PIPE_LOGGER).addFilter(CloseIsNoFault())


def missing() -> list[str]:
    """What this module reads of kaleido that the installed kaleido does not have ('Class.attribute')."""
    return adapters.missing(USED)


class ExportError(Exception):
    """An export that cannot be made here, with what to do about it."""


def browser_path() -> str:
    """The browser kaleido will drive, or an ExportError saying what to install."""
    path = os.environ.get("BROWSER_PATH") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if not path:
        raise ExportError(
            "static images (PNG, SVG) need Chromium or Chrome, and none was found: on Debian or Ubuntu "
            "`apt-get install chromium` (a Hugging Face Space lists `chromium` in packages.txt), or set "
            "BROWSER_PATH to the browser's executable"
        )
    return path


def _end(process: subprocess.Popen) -> None:
    """End `process` and every process it started (its own session's group), if any is left."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def print_pdf(files: dict[str, bytes], page: str, timeout: float = PRINT_S) -> bytes:
    """The HTML file `page` of `files` (each by its relative path: the page and the images it shows) printed to
    PDF by headless Chromium, from a temporary folder holding them all, with the page's own print CSS (its @page
    size and margins) and no header or footer. An ExportError when no browser is found (what to install), when it
    does not print within `timeout` seconds, or when it prints nothing."""
    browser = browser_path()
    with tempfile.TemporaryDirectory(prefix="vit-explorer-print-") as folder:
        root = Path(folder)
        for name, data in files.items():
            path = root / name
            if root.resolve() not in path.resolve().parents:
                raise ExportError(f"the handout names a file outside its folder: {name!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        out = root / "printed.pdf"
        command = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-extensions",
            "--no-first-run",
            f"--user-data-dir={root / 'profile'}",  # its own profile: two handouts print at once
            "--no-pdf-header-footer",
            f"--print-to-pdf={out}",
            (root / page).as_uri(),
        ]
        log = root / "browser.log"  # a file, not a pipe: a helper process the browser leaves may hold a pipe open
        with log.open("wb") as said:
            process = subprocess.Popen(command, stdout=said, stderr=said, start_new_session=True, cwd=root)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise ExportError(
                    f"the browser did not print the handout to PDF within {timeout:.0f} s; try again"
                ) from None
            finally:
                _end(process)  # and any helper process it left behind
        if process.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
            last = log.read_text(errors="replace").strip().splitlines()[-1:]
            raise ExportError(
                f"the browser could not print the handout to PDF (exit status {process.returncode}"
                + "".join(f": {line[:200]}" for line in last)
                + ")"
            )
        return out.read_bytes()


class ExportBrowser:
    """kaleido's browser on its own event-loop thread, started by the first export and closed once no export has
    used it for `idle` seconds: a hosted server does not keep a Chromium (about 400 MB over its processes) for a
    class that exported one figure an hour ago. Figures asked for at once from several threads are drawn one after
    another, each answered to the thread that asked for it."""

    def __init__(self, idle: float, start_s: float = START_S, draw_s: float = DRAW_S) -> None:
        self.idle, self.start_s, self.draw_s = idle, start_s, draw_s
        self._lock = threading.Lock()  # guards everything below
        self._users = 0
        self._closing: threading.Timer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._kaleido: Any = None
        self._broken = False  # a figure failed: the browser is replaced once nobody is using it
        atexit.register(self._exit)

    @contextmanager
    def open(self) -> Iterator[ExportBrowser]:
        """The browser, started if it is not running, for the exports made inside the `with`."""
        with self._lock:
            if self._closing:
                self._closing.cancel()
                self._closing = None
            if self._broken and not self._users:
                self._stop()
            if self._kaleido is None:
                self._start()
            self._users += 1
        try:
            yield self
        finally:
            with self._lock:
                self._users -= 1
                if not self._users:
                    self._closing = threading.Timer(self.idle, self._close_idle)
                    self._closing.daemon = True
                    self._closing.start()

    @property
    def running(self) -> bool:
        return self._kaleido is not None

    def image(self, figure: go.Figure, fmt: str, width: int, height: int, scale: float) -> bytes:
        """`figure` as `fmt` ("png", "svg", ...) bytes; inside `open()`."""
        opts = {"format": fmt, "width": width, "height": height, "scale": scale}
        drawing = asyncio.run_coroutine_threadsafe(self._kaleido.calc_fig(figure.to_dict(), opts=opts), self._loop)
        try:
            return drawing.result(timeout=self.draw_s)
        except FutureTimeout:
            drawing.cancel()
            self._broken = True
            raise ExportError(
                f"the export browser did not draw the figure within {self.draw_s:.0f} s; it is restarted for "
                "the next export: try again"
            ) from None
        except Exception as exc:
            self._broken = True
            raise ExportError(f"the export browser could not draw the figure ({type(exc).__name__}: {exc})") from exc

    def _start(self) -> None:
        os.environ.setdefault("BROWSER_PATH", browser_path())
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="export-browser", daemon=True)
        thread.start()

        async def made() -> Any:  # made on its loop, whose objects it uses
            return Kaleido(n=1, timeout=self.draw_s, mathjax=False)  # no MathJax: nothing is fetched online

        kaleido = asyncio.run_coroutine_threadsafe(made(), loop).result(timeout=self.start_s)
        opening = asyncio.run_coroutine_threadsafe(kaleido.open(), loop)
        try:
            opening.result(timeout=self.start_s)
        except Exception as exc:
            opening.cancel()
            self._loop, self._thread, self._kaleido = loop, thread, kaleido
            self._stop(polite=False)  # the browser process it started, if any, with it: it never answered
            why = f"it did not open within {self.start_s:.0f} s" if isinstance(exc, FutureTimeout) else exc
            raise ExportError(f"the export browser did not start ({why}); try again") from None
        self._loop, self._thread, self._kaleido = loop, thread, kaleido

    def _stop(self, polite: bool = True) -> None:
        """Close the browser and its thread, whatever state they are in; under the lock. A browser that never
        opened is not asked to close (it would not answer for CLOSE_S): its process is ended at once."""
        loop, thread, kaleido = self._loop, self._thread, self._kaleido
        self._loop = self._thread = self._kaleido = None
        self._broken = False
        if loop is None:
            return
        process = getattr(kaleido, "subprocess", None)
        if not polite:
            if process is not None:
                _end(process)  # choreographer's wrapper leads its own session, the browser in it
        elif kaleido is not None:
            try:
                asyncio.run_coroutine_threadsafe(kaleido.close(), loop).result(timeout=CLOSE_S)
            except Exception:  # noqa: BLE001 -- a browser that will not close is ended with its process
                if process is not None:
                    process.terminate()  # choreographer's wrapper ends the browser it runs, then itself
                    try:
                        process.wait(CLOSE_S)
                    except subprocess.TimeoutExpired:
                        process.kill()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_S)

    def _close_idle(self) -> None:
        with self._lock:
            if not self._users:
                self._stop()
                self._closing = None

    def _exit(self) -> None:
        with self._lock:
            if self._closing:
                self._closing.cancel()
            self._stop()


EXPORTS = ExportBrowser(SETTINGS.export_browser_idle_s)

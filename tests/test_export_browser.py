"""The export browser a server shares: it closes when idle, answers each thread with its own figure, and a
browser that will not start or draw gives an ExportError instead of keeping an export waiting."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import plotly.graph_objects as go
import pytest

from app.exports import export
from app.exports.export_browser import PIPE_LOGGER, ExportBrowser, ExportError, browser_path


def browser_processes() -> set[int]:
    """This process's descendants that are a Chromium (an export browser), not counting those of the servers it
    started."""
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if pid != os.getpid() and (b"app.gradio_app" in command or b"streamlit" in command):
                continue
            if "chrom" in Path(f"/proc/{pid}/comm").read_text():
                found.add(pid)
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def titled_figure(title: str) -> go.Figure:
    return go.Figure(go.Scatter(x=[0, 1], y=[1, 0]), layout={"title": {"text": title}})


def test_without_a_browser_the_export_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ExportError, match="apt-get install chromium"):
        browser_path()


def test_the_export_browser_closes_when_idle_and_opens_again(monkeypatch) -> None:
    """A hosted server keeps no Chromium for exports nobody makes: it is gone `idle` seconds after the last export,
    and the next export starts it again."""
    monkeypatch.setattr(export, "EXPORTS", ExportBrowser(idle=1.0))
    figure = titled_figure("idle")
    before = browser_processes()  # not this one: the process's own EXPORTS, up a minute after an earlier test's export
    assert export.images_of([figure], "svg")[0].startswith(b"<svg")
    started = browser_processes() - before
    assert started
    deadline = time.monotonic() + 30
    while started & browser_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not started & browser_processes(), "the export browser still runs after 30 s without an export"
    assert export.images_of([figure], "png")[0].startswith(b"\x89PNG")


def test_exports_asked_for_at_once_each_get_their_own_figure() -> None:
    """Six threads (six visitors' requests) export at once through one browser: each SVG is its own figure."""
    exports = ExportBrowser(idle=1.0)

    def svg(i: int) -> str:
        with exports.open() as browser:
            return browser.image(titled_figure(f"figure number {i}"), "svg", 400, 300, 1).decode()

    with ThreadPoolExecutor(6) as pool:
        drawn = list(pool.map(svg, range(6)))
    for i, image in enumerate(drawn):
        assert f"figure number {i}" in image and all(f"figure number {j}<" not in image for j in range(6) if j != i)


def test_a_browser_that_does_not_start_is_an_error_not_a_wait(monkeypatch, tmp_path) -> None:
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\nexec sleep 600\n")  # a browser that never answers
    broken.chmod(0o755)
    monkeypatch.setenv("BROWSER_PATH", str(broken))
    exports = ExportBrowser(idle=1.0, start_s=3.0)
    started = time.monotonic()
    with pytest.raises(ExportError, match="did not start"), exports.open():
        pass
    # the 3 s start and no more: a browser that never opened is ended at once, not asked to close (that waited 15 s)
    assert time.monotonic() - started < 15
    assert not exports.running
    assert subprocess.run(["pgrep", "-f", str(broken)], capture_output=True).returncode == 1, "the browser was left"
    monkeypatch.delenv("BROWSER_PATH")
    monkeypatch.setenv("BROWSER_PATH", browser_path())
    exports.start_s = 60.0  # a real Chromium on a loaded 2-core machine can take longer than 3 s to open
    with exports.open() as browser:  # the next export starts a working browser
        assert browser.image(titled_figure("after"), "svg", 400, 300, 1).startswith(b"<svg")


def test_a_figure_not_drawn_in_time_is_an_error_and_the_browser_is_replaced() -> None:
    exports = ExportBrowser(idle=1.0, draw_s=0.001)
    with pytest.raises(ExportError, match="did not draw the figure within"), exports.open() as browser:
        browser.image(titled_figure("late"), "svg", 400, 300, 1)
    exports.draw_s = 60.0
    with exports.open() as browser:
        assert b"after a failure" in browser.image(titled_figure("after a failure"), "svg", 400, 300, 1)


@pytest.mark.parametrize("message, logged", [("{bye}\n", False), ("{bye}", False), ('{"id": 1,', True)])
def test_the_browsers_goodbye_is_no_fault_in_the_servers_log(caplog, message: str, logged: bool) -> None:
    """Chromium's `{bye}` read with its last answers is the close handshake, not a traceback in the server's log
    (a CI run failed on one); a message that truly cannot be read is still logged."""
    from choreographer.channels._errors import JSONError
    from choreographer.channels._wire import deserialize

    with caplog.at_level(logging.INFO):
        try:
            deserialize(message)
        except JSONError:
            logging.getLogger(PIPE_LOGGER).exception("JSONError decoding message. Ignoring")
    assert bool(caplog.records) is logged, caplog.text

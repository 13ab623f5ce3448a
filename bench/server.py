"""The real Gradio server for the load benchmarks (bench/hostile.py, bench/soak.py): started offline on a loopback
port, stopped with the benchmark, its process tree's memory read from /proc."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

ROOT = Path(__file__).resolve().parent.parent
START_SECONDS = 300  # a loaded 2-core machine has taken over 90 s to start the app


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tree_mb(pid: int, measure: str = "rss") -> float:
    """Memory of process `pid` and all its descendants, in MB: `rss` sums each one's resident memory (pages shared
    between them, a browser's processes for instance, counted in each), `pss` shares them out (each shared page
    counted once over the tree: what the tree costs the machine)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            if measure == "pss":
                rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
                total += int(re.search(r"^Pss:\s+(\d+) kB", rollup, re.M).group(1)) * 1024
            else:
                total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total / 2**20


@contextmanager
def gradio_server(
    port: int, settings: Mapping[str, str | None] = {}, log: Path | None = None
) -> Iterator[subprocess.Popen]:
    """`python -m app.gradio_app` offline on loopback `port` (checked free: never measure someone else's server),
    answering; stopped on leaving, a killed benchmark included. All the simulated visitors share one address:
    its limit is raised to 64. `settings` override its environment (None: unset, the app's default); `log`: a file
    for its output (default: none kept)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # OSError when another server has it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with tempfile.TemporaryDirectory() as hub:
        env = {
            **os.environ,
            "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_ENDPOINT": "http://127.0.0.1:9",
            "HF_HUB_CACHE": hub,
            "VIT_EXPLORER_MAX_PER_ADDRESS": "64",
        }
        env = {key: value for key, value in {**env, **settings}.items() if value is not None}
        command = [sys.executable, "-m", "app.gradio_app", "--port", str(port)]
        output = open(log, "ab") if log else subprocess.DEVNULL
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            wait_until_up(process, f"http://127.0.0.1:{port}")
            yield process
        finally:
            stop_process(process)
            if log:
                output.close()


def stop_process(process: subprocess.Popen) -> None:
    """Ask `process` to end; killed if it has not within 30 s."""
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_up(process: subprocess.Popen, url: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not start (exit status {process.poll()})")

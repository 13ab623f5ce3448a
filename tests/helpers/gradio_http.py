"""The Gradio server spoken to over raw HTTP, as its page (or an attacker) does: each event's index, an upload
through its own route; a gradio_client Client; and the server process's resident memory."""

from __future__ import annotations

import ssl
import time
from pathlib import Path

import httpx
from gradio_client import Client

# One TLS context for every HTTP client the tests make (`verify=LOOPBACK_TLS`): httpx makes one per client otherwise,
# OpenSSL 3 takes about 30 ms of CPU to make one, and gradio_client makes a client per request (84 CPU-s a run). The
# tests speak plain HTTP to loopback servers, where it is never used.
LOOPBACK_TLS = ssl.create_default_context()


def gradio_client(url: str, **options) -> Client:
    """A gradio_client Client of the server at `url` (a page session of its own), quiet, on LOOPBACK_TLS."""
    return Client(url, verbose=False, ssl_verify=LOOPBACK_TLS, **options)


def fn_indices(url: str) -> dict[str, int]:
    """Each named event's index, from the page's config."""
    config = httpx.get(f"{url}/config", timeout=30, verify=LOOPBACK_TLS).json()
    return {d["api_name"]: d["id"] for d in config["dependencies"] if d.get("api_name")}


def upload(url: str, name: str, data: bytes) -> dict:
    """A file sent through the server's own upload route, as the page sends it."""
    path = httpx.post(
        f"{url}/gradio_api/upload", files={"files": (name, data)}, timeout=60, verify=LOOPBACK_TLS
    ).json()[0]
    return {"path": path, "meta": {"_type": "gradio.FileData"}, "orig_name": name}


def rss_mb(pid: int) -> float:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024


def steady_rss_mb(pid: int, within_mb: float = 2, timeout: float = 30) -> float:
    """The process's memory once it has stayed within `within_mb` for a second (an earlier test's work, stopped,
    still frees or takes memory for a while: a server was seen 150 MB lighter a few seconds later), `timeout` at most:
    a baseline for what a test's own requests make it grow by."""
    deadline, last = time.monotonic() + timeout, rss_mb(pid)
    while time.monotonic() < deadline:
        time.sleep(1)
        now = rss_mb(pid)
        if abs(now - last) < within_mb:
            return now
        last = now
    return last

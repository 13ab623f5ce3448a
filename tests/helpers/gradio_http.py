"""The Gradio server spoken to over raw HTTP, as its page (or an attacker) does: each event's index, an upload
through its own route; and the server process's resident memory."""

from __future__ import annotations

from pathlib import Path

import httpx


def fn_indices(url: str) -> dict[str, int]:
    """Each named event's index, from the page's config."""
    config = httpx.get(f"{url}/config", timeout=30).json()
    return {d["api_name"]: d["id"] for d in config["dependencies"] if d.get("api_name")}


def upload(url: str, name: str, data: bytes) -> dict:
    """A file sent through the server's own upload route, as the page sends it."""
    path = httpx.post(f"{url}/gradio_api/upload", files={"files": (name, data)}, timeout=60).json()[0]
    return {"path": path, "meta": {"_type": "gradio.FileData"}, "orig_name": name}


def rss_mb(pid: int) -> float:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024

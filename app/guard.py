"""What comes in over the network, checked in one place: files must have been uploaded through the
front end's own upload route, model lists must be lists of short names, and every refusal is one
log line and one message that names no server path and tells nothing about what exists on disk.

    uploads = Uploads.gradio()
    path = uploads.file(value, "the photo")   # raises Refused for anything not uploaded
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from engine.errors import shown

log = logging.getLogger("vit_explorer")
NOT_UPLOADED = (
    "files must be uploaded to this server (a browser upload, or gradio_client's handle_file); "
    "server paths are not read"
)
MODEL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,120}")


class Refused(ValueError):
    """An expected refusal of a request: its message is shown to the user as it is."""


def refuse(message: str, what: str) -> Refused:
    """A Refused error, logged as one line (what was refused and why), no traceback."""
    log.warning("refused %s: %s", what, message)
    return Refused(message)


def _path_of(value: object) -> str | None:
    """The path a network value names: a string, a {"path": ...} dict, or a FileData-like object."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, dict):
        path = value.get("path")
        return path if isinstance(path, str) else None
    path = getattr(value, "path", None)
    return path if isinstance(path, str) else None


@dataclass(frozen=True)
class Uploads:
    """The folders a front end's upload route writes into; a network file must lie inside one of them
    (checked on the resolved path, so `..` and symlinks do not lead out). `public` are single files
    anyone may name (the bundled sample photos)."""

    roots: tuple[Path, ...]
    public: frozenset[Path] = frozenset()

    @classmethod
    def gradio(cls, public: tuple[Path, ...] = ()) -> Uploads:
        """Gradio's upload folder (GRADIO_TEMP_DIR, default <tmp>/gradio)."""
        root = os.environ.get("GRADIO_TEMP_DIR") or str(Path(tempfile.gettempdir()) / "gradio")
        return cls((Path(os.path.realpath(root)),), frozenset(Path(os.path.realpath(p)) for p in public))

    def file(self, value: object, what: str) -> Path:
        """The uploaded file `value` names, or Refused with the same message whatever the path is."""
        path = _path_of(value)
        if path and "\x00" not in path:
            real = Path(os.path.realpath(path))
            if real in self.public or any(real.is_relative_to(root) and real != root for root in self.roots):
                return real
        raise refuse(NOT_UPLOADED, f"{what} outside the upload folder")

    def sweep(self, older_than_s: float) -> int:
        """Delete the temporary files of uploads dropped half-way (`tmp*`) last changed over `older_than_s`
        ago, and the folders left empty; returns the count of files deleted. Finished uploads are Gradio's
        to delete (delete_cache)."""
        cutoff, deleted = time.time() - older_than_s, 0
        for root in self.roots:
            for folder, subfolders, files in os.walk(root, topdown=False):
                for name in (n for n in files if n.startswith("tmp")):
                    path = Path(folder) / name
                    try:
                        if path.lstat().st_mtime < cutoff:
                            path.unlink()
                            deleted += 1
                    except OSError:
                        pass  # gone already, or in use
                if Path(folder) != root and not os.listdir(folder):
                    try:
                        os.rmdir(folder)
                    except OSError:
                        pass
        return deleted

    def image(self, value: object, what: str = "the photo") -> Path | bytes | Image.Image | np.ndarray:
        """An image input: in-memory images (bytes, PIL, arrays) as they are, files through `file`."""
        if isinstance(value, (bytes, Image.Image, np.ndarray)):
            return value
        return self.file(value, what)


def model_names(value: object, limit: int) -> list[str]:
    """A list of model names as sent over the network: a list (a lone string is one name, not letters),
    at most `limit`, each a short timm-style name."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise refuse("models must be a list of model names", "models argument of the wrong type")
    names = [n.strip() for n in names if n.strip()]
    if len(names) > limit:
        raise refuse(f"pick at most {limit} models (got {len(names)})", "too many models")
    for name in names:
        if not MODEL_NAME.fullmatch(name):
            raise refuse(
                f"'{shown(name)}' is not a model name (letters, digits, '_', '.', '-'; at most 120)",
                "malformed model name",
            )
    return names


MAX_JSON_BYTES = 5 * 2**20


def file_paths(data: object) -> list[object]:
    """Every `path` value of a file payload ({"path": ...}) anywhere in a request's JSON data."""
    if isinstance(data, dict):
        found = [data["path"]] if "path" in data else []
        return found + [p for value in data.values() for p in file_paths(value)]
    if isinstance(data, list):
        return [p for value in data for p in file_paths(value)]
    return []


@dataclass(frozen=True)
class Fairness:
    """How many requests one visitor may have waiting or running at once: per browser session and per
    client address (a visitor can make up new sessions, not new addresses)."""

    per_session: int = int(os.environ.get("VIT_EXPLORER_MAX_PER_SESSION", 3))
    per_address: int = int(os.environ.get("VIT_EXPLORER_MAX_PER_ADDRESS", 12))


def pending_events(queue) -> list:
    """The events Gradio's queue holds, waiting or running."""
    if queue is None:
        return []
    waiting = [event for line in queue.event_queue_per_concurrency_id.values() for event in line.queue]
    return waiting + [event for job in queue.active_jobs if job for event in job]


def _address(event) -> str | None:
    client = getattr(getattr(event, "request", None), "client", None)
    return getattr(client, "host", None)


class RequestGuard:
    """ASGI middleware in front of the Gradio app, checking every JSON request before Gradio sees it:
    - a request naming a file anywhere outside the upload folder is refused (Gradio would copy such a file
      into its cache, whatever it is), with one message for every path; uploads themselves (multipart, to
      /gradio_api/upload) pass;
    - a visitor with `fairness` requests already waiting or running in `queue()` is told to wait."""

    def __init__(self, app, uploads: Uploads, queue=lambda: None, fairness: Fairness = Fairness()) -> None:
        self.app, self.uploads, self.queue, self.fairness = app, uploads, queue, fairness

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].endswith("/upload"):
            return await self.app(scope, receive, send)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size, more = size + len(chunks[-1]), message.get("more_body", False)
            if size > MAX_JSON_BYTES:
                log.warning("refused a request body of over %d MB", MAX_JSON_BYTES // 2**20)
                return await _answer(send, 413, "the request is too large")
        body = b"".join(chunks)
        try:
            data = json.loads(body) if body.strip().startswith((b"{", b"[")) else None
        except ValueError:
            data = None
        for path in file_paths(data):
            try:
                self.uploads.file(path, "a file")
            except Refused as exc:
                return await _answer(send, 400, str(exc))
        if scope["path"].endswith("/queue/join") or "/call/" in scope["path"]:
            busy = self.busy(
                data.get("session_hash") if isinstance(data, dict) else None, (scope.get("client") or ("",))[0]
            )
            if busy:
                return await _answer(send, 429, busy)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def busy(self, session: str | None, address: str) -> str | None:
        """Why a new request of this session and address must wait, or None."""
        events = pending_events(self.queue())
        mine = sum(1 for event in events if session and event.session_hash == session)
        here = sum(1 for event in events if _address(event) == address)
        if mine >= self.fairness.per_session or here >= self.fairness.per_address:
            limit = self.fairness.per_session if mine >= self.fairness.per_session else self.fairness.per_address
            where = "this page" if mine >= self.fairness.per_session else "your address"
            message = (
                f"{max(mine, here)} requests from {where} are waiting or running (at most {limit}); "
                "try again when they have finished"
            )
            log.warning("refused a request from %s: %s", shown(address, 40), message)
            return message
        return None


async def _answer(send, status: int, message: str) -> None:
    body = json.dumps({"detail": message, "error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})

"""Uploaded files: a network file must lie inside the front end's upload folder (`Uploads`), each visitor's upload
bytes a minute and the uploads the server holds are bounded (`UploadMeter`), and a closed session's uploads are
deleted with it (`SessionFiles`).

    uploads = Uploads.gradio()
    path = uploads.file(value, "the photo")   # raises Refused for anything not uploaded
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

from app.server.refusal import Refused, refuse
from app.server.settings import SETTINGS

NOT_UPLOADED = (
    "files must be uploaded to this server (a browser upload, or gradio_client's handle_file); "
    "server paths are not read"
)


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

    @cached_property
    def _public_digests(self) -> dict[int, set[str]]:
        """The public files' SHA-256 digests, by size."""
        digests: dict[int, set[str]] = {}
        for path in self.public:
            try:
                digests.setdefault(path.stat().st_size, set()).add(hashlib.sha256(path.read_bytes()).hexdigest())
            except OSError:
                continue
        return digests

    def copy_of_public(self, path: Path) -> bool:
        """Whether `path` holds the same bytes as a public file: Gradio stores a sample photo shown as an example and
        an upload of the same photo under one path (by content), so deleting one visitor's upload would delete the
        sample's picture for every page."""
        try:
            wanted = self._public_digests.get(path.stat().st_size)
            return bool(wanted) and hashlib.sha256(path.read_bytes()).hexdigest() in wanted
        except OSError:
            return False

    @classmethod
    def gradio(cls, public: tuple[Path, ...] = ()) -> Uploads:
        """Gradio's upload folder (GRADIO_TEMP_DIR, default <tmp>/gradio)."""
        root = os.environ.get("GRADIO_TEMP_DIR") or str(Path(tempfile.gettempdir()) / "gradio")
        return cls((Path(os.path.realpath(root)),), frozenset(Path(os.path.realpath(p)) for p in public))

    def file(self, value: object, what: str, quiet: bool = False) -> Path:
        """The uploaded file `value` names, or Refused with the same message whatever the path is (logged unless
        `quiet`)."""
        path = _path_of(value)
        if path and "\x00" not in path:
            real = Path(os.path.realpath(path))
            if real in self.public or any(real.is_relative_to(root) and real != root for root in self.roots):
                return real
        if quiet:
            raise Refused(NOT_UPLOADED)
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

    def size(self) -> int:
        """Bytes of every file in the upload folders."""
        total = 0
        for root in self.roots:
            for folder, _, files in os.walk(root):
                for name in files:
                    try:
                        total += (Path(folder) / name).lstat().st_size
                    except OSError:
                        pass
        return total

    def image(self, value: object, what: str = "the photo") -> Path | bytes | Image.Image | np.ndarray:
        """An image input: in-memory images (bytes, PIL, arrays) as they are, files through `file`."""
        if isinstance(value, (bytes, Image.Image, np.ndarray)):
            return value
        return self.file(value, what)


@dataclass(frozen=True)
class UploadLimits:
    """Bounds on uploads: bytes one visitor (address) may upload per minute, and the bytes of uploads the server
    holds (Gradio's upload folder; the uploads Streamlit keeps in memory)."""

    per_minute: int = SETTINGS.bytes(SETTINGS.upload_mb_per_minute)
    folder: int = SETTINGS.bytes(SETTINGS.upload_folder_mb)


class UploadMeter:
    """The bytes each visitor uploaded in the last minute, and the bytes of uploads held (`held()`)."""

    def __init__(self, held: Callable[[], int], limits: UploadLimits) -> None:
        self.held, self.limits = held, limits
        self.recent: dict[str, deque[tuple[float, int]]] = {}  # address: (time, bytes), oldest first

    def used(self, address: str) -> int:
        """Bytes `address` uploaded in the last 60 s."""
        line, cutoff = self.recent.get(address), time.monotonic() - 60
        while line and line[0][0] < cutoff:
            line.popleft()
        if line is not None and not line:
            del self.recent[address]
        return sum(size for _, size in line or ())

    def count(self, address: str, size: int) -> None:
        self.recent.setdefault(address, deque()).append((time.monotonic(), size))

    def refusal(self, address: str, size: int) -> str | None:
        """Why an upload of `size` bytes from `address` is refused now, or None."""
        if self.used(address) + size > self.limits.per_minute:
            return (
                f"too many uploads from your address: at most {self.limits.per_minute / 2**20:.0f} MB a minute; "
                "try again in a minute"
            )
        if self.held() + size > self.limits.folder:
            return "the server holds too many uploads just now; try again in a few minutes"
        return None


class SessionFiles:
    """The uploaded files each browser session named in its requests, so that a closed session's uploads are
    deleted with it. Uploads are stored by their content's hash, so two visitors uploading the same photo share one
    file: a file another holder named (a session, or the address of a client that sends none, such as a REST
    client), or that was uploaded again since the session last named it, or that holds a sample photo's bytes (the
    sample's own picture, where Gradio stores both under one path), is kept. (The page's upload request does
    not say its session, so a visitor who uploaded the same photo and has not yet used it can find it gone: the
    page then says it cannot be read, and an upload again mends it.) `prune` forgets files deleted since."""

    def __init__(self, uploads: Uploads) -> None:
        self.uploads = uploads
        self.named: dict[str, dict[Path, float]] = {}  # holder: {file: when it last named it}

    def note(self, holder: str, paths: list[object]) -> None:
        for path in paths:
            try:
                real = self.uploads.file(path, "a file", quiet=True)
            except Refused:
                continue
            if real not in self.uploads.public:
                self.named.setdefault(holder, {})[real] = time.time()

    def forget(self, session: str) -> int:
        """Delete the files only `session` named, unless uploaded again since, and their folders left empty; the
        count deleted."""
        mine = self.named.pop(session, {})
        others = set().union(*self.named.values()) if self.named else set()
        deleted = 0
        for path, when in mine.items():
            try:
                if path in others or path.stat().st_mtime > when or self.uploads.copy_of_public(path):
                    continue
                path.unlink()
                deleted += 1
                if path.parent not in self.uploads.roots and not any(path.parent.iterdir()):
                    path.parent.rmdir()
            except OSError:
                pass  # gone already
        return deleted

    def prune(self) -> None:
        """Forget the files deleted since they were noted (by Gradio's hourly cleanup)."""
        for holder in list(self.named):
            self.named[holder] = {path: when for path, when in self.named[holder].items() if path.exists()}
            if not self.named[holder]:
                del self.named[holder]

"""What comes in over the network, checked in one place: files must have been uploaded through the
front end's own upload route, model lists must be lists of short names, and every refusal is one
log line and one message that names no server path and tells nothing about what exists on disk.

    uploads = Uploads.gradio()
    path = uploads.file(value, "the photo")   # raises Refused for anything not uploaded
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import ipaddress
import json
import logging
import os
import re
import tempfile
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

from app.server.settings import SETTINGS
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
MAX_JSON_DEPTH = 32  # Gradio's own bodies nest 5 deep
RUNS = re.compile(r"/(run|api|call|component_server)(/|$)|/queue/join/?$")  # POST routes that run a function
NAMED_CALL = re.compile(r"/(?:run|call)/(?:v2/)?(?P<api>[A-Za-z0-9_]+)/?$")  # a REST call of an API by name
CANCELS = re.compile(r"/(cancel|reset)/?$")  # gradio_client's job.cancel() posts both


def file_paths(data: object) -> list[object]:
    """Every `path` value of a file payload ({"path": ...}) anywhere in a request's JSON data."""
    if isinstance(data, dict):
        found = [data["path"]] if "path" in data else []
        return found + [p for value in data.values() for p in file_paths(value)]
    if isinstance(data, list):
        return [p for value in data for p in file_paths(value)]
    return []


def depth(data: object) -> int:
    """How deeply JSON data nests lists and objects (a scalar: 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


@dataclass(frozen=True)
class Fairness:
    """How many requests one visitor may have waiting or running at once, over every route that runs a function
    (the page's queue, /call, the REST /run and /api): per browser session and per client address (a visitor
    can make up new sessions, not new addresses)."""

    # the page's own events: 3 on opening (the banner, the tour, the AlterNet tab's photo), then a new photo's
    # AlterNet models, the Analyze, a map and its quick Stop handlers; at 3, an Analyze pressed soon after
    # opening the page or after a change of the steps was refused
    per_session: int = SETTINGS.max_per_session
    per_address: int = SETTINGS.max_per_address


@dataclass(frozen=True)
class Bodies:
    """Bounds on request bodies while they arrive: each must be whole within `seconds`, and all those the guard
    holds at once take at most `budget` bytes (a new one past it is told to come back)."""

    seconds: float = SETTINGS.body_seconds
    budget: int = SETTINGS.bytes(SETTINGS.body_budget_mb)
    largest: int = MAX_JSON_BYTES
    nesting: int = MAX_JSON_DEPTH


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(value: str) -> tuple[Network, ...]:
    """Addresses and CIDR ranges, comma-separated ("127.0.0.1, 10.0.0.0/8"); ValueError naming a bad one."""
    found = []
    for part in (p.strip() for p in value.split(",")):
        if part:
            try:
                found.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise ValueError(f"VIT_EXPLORER_TRUSTED_PROXIES: '{shown(part)}' is not an address or range") from None
    return tuple(found)


@dataclass(frozen=True)
class Proxies:
    """The reverse proxies whose X-Forwarded-For is believed (VIT_EXPLORER_TRUSTED_PROXIES, addresses or CIDR
    ranges; none unless set), so that every visitor behind them is counted as one visitor and nobody else can
    pose as another."""

    trusted: tuple[Network, ...] = field(default_factory=lambda: networks(SETTINGS.trusted_proxies))

    def trusts(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    def visitor(self, peer: str, forwarded: str | None) -> str:
        """The visitor's address: `peer`'s own, unless `peer` is a trusted proxy; then, going right to left
        through `forwarded` (X-Forwarded-For, each proxy appends the address it was reached from), the first
        address that is not a trusted proxy."""
        hops = [hop.strip() for hop in (forwarded or "").split(",") if hop.strip()]
        address = peer
        while hops and self.trusts(address):
            address = hops.pop()
        return shown(address, 60)

    def of_scope(self, scope) -> str:
        """The visitor's address of an ASGI request (its X-Forwarded-For headers joined, as proxies may send
        several)."""
        peer = (scope.get("client") or ("",))[0] or ""
        headers = [v.decode("latin1") for k, v in scope.get("headers") or [] if k == b"x-forwarded-for"]
        return self.visitor(peer, ", ".join(headers) or None)


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


@dataclass(eq=False)
class Work:
    """A request the guard let through to a function, until it is answered: who sent it, and why its work must
    stop (None while it may go on)."""

    address: str
    session: str | None
    stopped: str | None = None


CURRENT: contextvars.ContextVar[Work | None] = contextvars.ContextVar("vit_explorer_work", default=None)
CANCELLED: OrderedDict[str, None] = OrderedDict()  # Gradio event ids whose clients cancelled them, newest last
CANCELLED_KEPT = 10_000
GONE = "stopped: the client that asked went away"


def stop_point() -> None:
    """Stop the work of the request running here (raise Refused) once it has been abandoned: a REST client hung
    up, a queued event was cancelled (gradio_client's job.cancel()) or its client went away. Called at every block
    or batch (the service's progress reports); a no-op outside a request."""
    work = CURRENT.get()
    why = work.stopped if work is not None else None
    if why is None:
        why = FRAMEWORK.stopped()
    if why:
        raise refuse(why, "the rest of an abandoned request")


@dataclass
class Framework:
    """What only the front end's framework knows of the work running here, told by its adapter
    (app.gradio_ui.internals.install): why its queued event must stop, and whom it is for (None: not known)."""

    stopped: Callable[[], str | None] = lambda: None
    visitor: Callable[[], str | None] = lambda: None


FRAMEWORK = Framework()  # nothing known (the CLI, Streamlit, the tests of the service) until an adapter says


def visitor() -> str:
    """Who the work running here is for, as fair turns count them: the address of the request the guard let through
    (REST), of the Gradio queue's event, or the one a front end without the guard set in VISITOR (Streamlit);
    'local' for the CLI and tests."""
    work = CURRENT.get()
    if work is not None:
        return work.address
    if chosen := VISITOR.get():
        return chosen
    return FRAMEWORK.visitor() or "local"


VISITOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("vit_explorer_visitor", default=None)


def stoppable(report: Callable[[float, str], None] | None) -> Callable[[float, str], None]:
    """`report` (or no report) passing first through `stop_point`."""

    def checked(fraction: float, message: str) -> None:
        stop_point()
        if report is not None:
            report(fraction, message)

    return checked


class UploadGuard:
    """ASGI middleware in front of a front end: every request's client is the visitor behind the trusted `proxies`
    (X-Forwarded-For from anyone else is ignored), for the limits and for the framework; an upload (multipart, or
    to an upload route) past its visitor's bytes a minute, or past the uploads the server holds (`held()`), is
    refused (429, 507) before anything is stored, and one that sends nothing for `bodies.seconds` is dropped
    (408)."""

    def __init__(
        self,
        app,
        held: Callable[[], int],
        bodies: Bodies = Bodies(),
        proxies: Proxies | None = None,
        upload_limits: UploadLimits = UploadLimits(),
    ) -> None:
        self.app, self.bodies, self.proxies = app, bodies, proxies or Proxies()
        self.meter = UploadMeter(held, upload_limits)

    async def __call__(self, scope, receive, send) -> None:
        scope = self.visited(scope)
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT") and _streamed(scope):
            return await self._stream(scope, receive, send)
        return await self.app(scope, receive, send)

    def visited(self, scope):
        """`scope` with its client made the visitor behind the trusted proxies."""
        if scope["type"] not in ("http", "websocket"):
            return scope
        port = (scope.get("client") or ("", 0))[1]
        return {**scope, "client": (self.proxies.of_scope(scope), port)}

    async def _stream(self, scope, receive, send) -> None:
        """Pass an upload on as it arrives, within its visitor's bytes a minute and the uploads held (counted as
        declared, or as it arrives); one that sends nothing for `bodies.seconds` is dropped (408)."""
        address = (scope.get("client") or ("",))[0]
        declared = _content_length(scope) or 0
        if refused := self.refusal(scope, declared):
            status = 507 if "server holds" in refused else 429
            return await _answer(send, status, self._refused(refused))
        self.meter.count(address, declared)
        stalled, answered, whole, over, received = False, False, False, None, 0

        async def timed():
            nonlocal stalled, whole, over, received, declared
            if whole:
                return await receive()
            try:
                async with asyncio.timeout(self.bodies.seconds):
                    message = await receive()
            except TimeoutError:
                stalled = True
                return {"type": "http.disconnect"}  # the framework drops the upload as if its client had left
            received += len(message.get("body", b""))
            if received > declared:  # more than declared (a chunked body): counted as it arrives
                over = self.refusal(scope, received - declared)
                self.meter.count(address, received - declared)
                declared = received
                if over:
                    return {"type": "http.disconnect"}
            whole = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def answering(message) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, timed, answering)
        except Exception:
            if not (stalled or over):
                raise
        if over and not answered:
            await _answer(send, 429, self._refused(over))
        elif stalled and not answered:
            await _answer(send, 408, self._refused(f"the upload sent nothing for {self.bodies.seconds:g} s"))

    def refusal(self, scope, size: int) -> str | None:
        """Why `size` more bytes of this upload are refused now, or None."""
        return self.meter.refusal((scope.get("client") or ("",))[0], size)

    def _refused(self, message: str) -> str:
        log.warning("refused a request: %s", message)
        return message


class RequestGuard(UploadGuard):
    """ASGI middleware in front of the Gradio app, the one way in for every POST body (and the UploadGuard's
    limits on the uploads, which Gradio writes to its upload folder):
    - a body is read whole within `bodies.seconds` (else 408), and those being read hold at most `bodies.budget`
      bytes together (a new one past it: 503 with Retry-After); uploads (multipart, to /upload) stream past to
      disk, dropped (408) when they send nothing for `bodies.seconds`;
    - it is parsed as the framework will parse it (json.loads on the bytes: BOMs, UTF-16 and UTF-32 alike); what
      does not parse, or nests deeper than `bodies.nesting`, is refused (400);
    - a request naming a file anywhere outside the upload folder is refused (Gradio would copy such a file into
      its cache, whatever it is), with one message for every path;
    - on a route that runs a function, a visitor with `fairness` requests already waiting in the framework's queue
      (`queued`: the session and address of each event in it) or running
      is told to wait (429); a REST request whose client hangs up has its work stopped at the next `stop_point`,
      and so has a queued event its client cancels;
    - the uploaded files a session names are noted in `files`, to be deleted when its page closes;
    - a REST call by API name that leaves off trailing values gets their defaults (`fill`: api, values -> values),
      so a script written before a parameter was added keeps working."""

    def __init__(
        self,
        app,
        uploads: Uploads,
        queued: Callable[[], list[tuple[str | None, str | None]]] = lambda: [],
        fairness: Fairness = Fairness(),
        bodies: Bodies = Bodies(),
        proxies: Proxies | None = None,
        upload_limits: UploadLimits = UploadLimits(),
        files: SessionFiles | None = None,
        fill: Callable[[str, list], list] = lambda api, values: values,
    ) -> None:
        super().__init__(app, uploads.size, bodies, proxies, upload_limits)
        self.uploads, self.queued, self.fairness, self.files = uploads, queued, fairness, files
        self.fill = fill
        self.running: list[Work] = []  # requests let through to a function and not yet answered
        self.reading = 0  # bytes of the bodies being read

    async def __call__(self, scope, receive, send) -> None:
        scope = self.visited(scope)
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        if _streamed(scope):
            return await self._stream(scope, receive, send)
        body = await self._body(scope, receive, send)
        if body is None:
            return
        try:
            data = json.loads(body) if body.strip() else None
        except RecursionError:
            return await _answer(send, 400, self._refused(f"the request nests deeper than {self.bodies.nesting}"))
        except ValueError:  # JSONDecodeError, UnicodeDecodeError
            return await _answer(send, 400, self._refused("the request body is not JSON"))
        if depth(data) > self.bodies.nesting:
            return await _answer(send, 400, self._refused(f"the request nests deeper than {self.bodies.nesting}"))
        for path in file_paths(data):
            try:
                self.uploads.file(path, "a file")
            except Refused as exc:
                return await _answer(send, 400, str(exc))
        if CANCELS.search(scope["path"]) and isinstance(data, dict) and isinstance(data.get("event_id"), str):
            CANCELLED[data["event_id"]] = None
            while len(CANCELLED) > CANCELLED_KEPT:
                CANCELLED.popitem(last=False)
        if not RUNS.search(scope["path"]):
            return await self.app(scope, _replay(body, receive), send)
        named = NAMED_CALL.search(scope["path"])
        if named and isinstance(data, dict) and isinstance(sent := data.get("data"), list):
            if (filled := self.fill(named["api"], sent)) is not sent:
                body = json.dumps({**data, "data": filled}).encode()
                scope = {**scope, "headers": _with_length(scope.get("headers") or [], len(body))}
        session = data.get("session_hash") if isinstance(data, dict) else None
        work = Work((scope.get("client") or ("",))[0], session if isinstance(session, str) else None)
        if self.files is not None:
            self.files.note(work.session or f"address {work.address}", file_paths(data))
        if busy := self.busy(work.session, work.address):
            return await _answer(send, 429, busy)
        await self._run(work, scope, body, receive, send)

    async def _body(self, scope, receive, send) -> bytes | None:
        """The whole body, or None once the request has been answered (too large, too slow, over the budget)."""
        declared = _content_length(scope)
        if declared is not None and declared > self.bodies.largest:
            return await _answer(send, 413, self._refused("the request is too large"))
        held = declared or 0
        if self.reading + held > self.bodies.budget:
            return await self._over_budget(send)
        self.reading += held
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.bodies.seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunks.append(message.get("body", b""))
                    size += len(chunks[-1])
                    if size > self.bodies.largest:
                        return await _answer(send, 413, self._refused("the request is too large"))
                    if size > held:  # more than declared (a chunked body): held against the budget as it grows
                        if self.reading + size - held > self.bodies.budget:
                            return await self._over_budget(send)
                        self.reading, held = self.reading + size - held, size
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            return await _answer(
                send, 408, self._refused(f"the request body did not arrive within {self.bodies.seconds:g} s")
            )
        finally:
            self.reading -= held

    async def _over_budget(self, send) -> None:
        message = "the server is receiving too many requests at once; try again in a few seconds"
        retry = str(max(1, round(self.bodies.seconds))).encode()
        await _answer(send, 503, self._refused(message), [(b"retry-after", retry)])

    async def _run(self, work: Work, scope, body: bytes, receive, send) -> None:
        """Let `work` through, counted until it is answered (a hang-up: until its work has stopped, at its next
        block or batch, so that abandoned work cannot pile up); its client hanging up marks it stopped."""
        gone = asyncio.Event()

        async def watch() -> None:  # the client's side after the body: only a hang-up can come
            while (await receive())["type"] != "http.disconnect":
                pass
            work.stopped = work.stopped or GONE
            gone.set()

        async def downstream():
            if not sent:
                sent.append(True)
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def answer(message) -> None:  # a queued request is counted in the queue once it is answered
            if message["type"] == "http.response.start":
                done()
            await send(message)

        def done() -> None:
            if work in self.running:
                self.running.remove(work)

        sent: list[bool] = []
        self.running.append(work)
        token, watcher = CURRENT.set(work), asyncio.create_task(watch())
        try:
            await self.app(scope, downstream, answer)
        finally:
            watcher.cancel()
            CURRENT.reset(token)
            done()

    def busy(self, session: str | None, address: str) -> str | None:
        """Why a new request of this session and address must wait, or None."""
        both = self.queued() + [(work.session, work.address) for work in self.running]
        mine = sum(1 for s, _ in both if session and s == session)
        here = sum(1 for _, a in both if a == address)
        if mine >= self.fairness.per_session or here >= self.fairness.per_address:
            limit = self.fairness.per_session if mine >= self.fairness.per_session else self.fairness.per_address
            where = "this page" if mine >= self.fairness.per_session else "your address"
            count = max(mine, here)
            message = (
                f"{count} request{'s' * (count != 1)} from {where} {'are' if count != 1 else 'is'} waiting or "
                f"running (at most {limit}); "
                "try again when they have finished"
            )
            log.warning("refused a request from %s: %s", shown(address, 40), message)
            return message
        return None


def _streamed(scope) -> bool:
    """An upload (multipart, or to the upload route): streamed past to the framework, which writes it to disk."""
    content_type = dict(scope.get("headers") or []).get(b"content-type", b"")
    return scope["path"].endswith("/upload") or content_type.lower().startswith(b"multipart/form-data")


def _content_length(scope) -> int | None:
    value = dict(scope.get("headers") or []).get(b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _with_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    """`headers` with their content-length set to `length` (a body rewritten)."""
    return [(k, v) for k, v in headers if k.lower() != b"content-length"] + [(b"content-length", str(length).encode())]


def _replay(body: bytes, receive):
    """A receive giving `body` whole, then what the client sends next."""
    sent = []

    async def replay():
        if sent:
            return await receive()
        sent.append(True)
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _answer(send, status: int, message: str, headers: list[tuple[bytes, bytes]] = ()) -> None:
    """A JSON refusal; the connection is closed after it (the rest of a body is not read)."""
    body = json.dumps({"detail": message, "error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

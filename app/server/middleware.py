"""The ASGI middlewares in front of a front end, the one way in for every request body: `UploadGuard` (visitors
behind proxies, upload bytes, stalled uploads; Streamlit's and Gradio's) and `RequestGuard` (Gradio's: bodies read
whole and bounded, JSON checked, files named checked, fair turns, abandoned requests stopped)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Callable

from app.server.context import CANCELLED, CANCELLED_KEPT, CURRENT, GONE, Work
from app.server.inputs import MAX_JSON_BYTES, MAX_JSON_DEPTH, depth, file_paths
from app.server.refusal import Refused, log
from app.server.settings import SETTINGS
from app.server.uploads import SessionFiles, UploadLimits, UploadMeter, Uploads
from app.server.visitors import Fairness, Proxies
from engine.errors import shown

RUNS = re.compile(r"/(run|api|call|component_server)(/|$)|/queue/join/?$")  # POST routes that run a function


NAMED_CALL = re.compile(r"/(?:run|call)/(?:v2/)?(?P<api>[A-Za-z0-9_]+)/?$")  # a REST call of an API by name


CANCELS = re.compile(r"/(cancel|reset)/?$")  # gradio_client's job.cancel() posts both


@dataclass(frozen=True)
class Bodies:
    """Bounds on request bodies while they arrive: each must be whole within `seconds`, and all those the guard
    holds at once take at most `budget` bytes (a new one past it is told to come back)."""

    seconds: float = SETTINGS.body_seconds
    budget: int = SETTINGS.bytes(SETTINGS.body_budget_mb)
    largest: int = MAX_JSON_BYTES
    nesting: int = MAX_JSON_DEPTH


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

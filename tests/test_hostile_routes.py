"""Every route that runs a function, probed over loopback as a hostile client would, against a real server started
with small bounds: the per-address and per-session limits on each route, bodies in other encodings and nested
deep, stalled bodies, and work stopped when its client hangs up or cancels (REST, /call and gradio_client)."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterator

import httpx
import pytest
from gradio_client import handle_file

from app.server.uploads import NOT_UPLOADED
from tests.conftest import Server, gradio_server
from tests.helpers.files import png_bytes
from tests.helpers.gradio_http import LOOPBACK_TLS, fn_indices, gradio_client, rss_mb, steady_rss_mb, upload

PER_ADDRESS, PER_SESSION, BODY_SECONDS, BODY_BUDGET_MB = 4, 3, 6, 20
ABANDONED = "refused the rest of an abandoned request"
OCCLUSION = "vit_tiny_patch16_224"  # 7 batches of 32 occluded copies, a few seconds each here


@pytest.fixture(scope="module")
def server(output_dir: Path) -> Iterator[Server]:
    """`python -m app.gradio_app` with small bounds (limits, body time and budget), offline; its log in test-output/."""
    bounds = {
        "VIT_EXPLORER_MAX_PER_ADDRESS": str(PER_ADDRESS),
        "VIT_EXPLORER_MAX_PER_SESSION": str(PER_SESSION),
        "VIT_EXPLORER_BODY_SECONDS": str(BODY_SECONDS),
        "VIT_EXPLORER_BODY_BUDGET_MB": str(BODY_BUDGET_MB),
    }
    with gradio_server(output_dir / "hostile-server.log", bounds) as started:
        yield started


@pytest.fixture(scope="module")
def photo(server: Server, sample_photo: Path) -> dict:
    return upload(server.url, "cat.jpg", sample_photo.read_bytes())


def post(
    server: Server, route: str, body: bytes | dict, address: str = "127.0.0.1", timeout: float = 60
) -> httpx.Response:
    """POST to /gradio_api/<route> from a loopback `address` (Linux answers all of 127/8), JSON or raw bytes."""
    transport = httpx.HTTPTransport(local_address=address, verify=LOOPBACK_TLS)
    with httpx.Client(transport=transport, timeout=timeout) as client:
        if isinstance(body, bytes):
            return client.post(f"{server.url}/gradio_api/{route}", content=body, headers=JSON)
        return client.post(f"{server.url}/gradio_api/{route}", json=body)


JSON = {"content-type": "application/json"}


def passes(server: Server) -> int:
    """The server's forward passes so far, asked from an address of its own."""
    return post(server, "run/forward_passes", {"data": []}, "127.0.0.2").json()["data"][0]


def logged(server: Server, text: str) -> int:
    return server.log.read_text().count(text)


def wait_for(condition: Callable[[], bool], seconds: float, what: str, poll: float = 0.5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds:.0f} s"
        time.sleep(poll)


@contextlib.contextmanager
def rest_call(server: Server, api: str, data: list, address: str) -> Iterator[socket.socket]:
    """POST /gradio_api/run/<api> over a raw connection from `address`; leaving the block hangs up."""
    body = json.dumps({"data": data}).encode()
    connection = socket.socket()
    connection.bind((address, 0))
    connection.connect(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
    head = f"POST /gradio_api/run/{api} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    connection.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    try:
        yield connection
    finally:
        connection.close()


def occlusion(photo: dict) -> list:
    return [photo, [OCCLUSION], "random", "Occlusion", None, False]


def assert_stops(server: Server, hang_up: Callable[[], None], stops: int) -> None:
    """Once the work has made its first Occlusion batch, `hang_up`: the service stops it at a batch boundary
    (one log line) and makes no forward pass for three batches' time after (a batch timed as it ran, 2 s at least)."""
    start = passes(server)
    wait_for(lambda: passes(server) >= start + 2, 300, "captum's first pass", poll=0.1)  # after the analysis's
    began = time.monotonic()
    wait_for(lambda: passes(server) >= start + 3, 300, "the first Occlusion batch", poll=0.1)
    batch = time.monotonic() - began
    hang_up()
    wait_for(lambda: logged(server, ABANDONED) > stops, 120, "stopping the work")
    stopped = passes(server)
    time.sleep(max(2.0, 3 * batch))
    assert passes(server) == stopped, f"forward passes went on after the work was stopped (a batch: {batch:.1f} s)"


def test_a_rest_call_stops_when_its_client_hangs_up(server: Server, photo: dict):
    stops, gone = logged(server, ABANDONED), logged(server, "went away")
    with rest_call(server, "analyze", occlusion(photo), "127.0.0.3") as connection:
        assert_stops(server, connection.close, stops)
    assert logged(server, "went away") > gone


def test_a_call_stops_when_its_stream_is_dropped(server: Server, photo: dict):
    stops = logged(server, ABANDONED)
    event = post(server, "call/analyze", {"data": occlusion(photo)}, "127.0.0.4").json()["event_id"]
    with httpx.stream(
        "GET", f"{server.url}/gradio_api/call/analyze/{event}", verify=LOOPBACK_TLS, timeout=300
    ) as stream:
        assert_stops(server, stream.close, stops)


def test_gradio_clients_cancel_stops_the_work(server: Server, sample_photo: Path):
    stops, cancelled = logged(server, ABANDONED), logged(server, "cancelled by the client")
    job = gradio_client(server.url).submit(
        handle_file(str(sample_photo)), [OCCLUSION], "random", "Occlusion", None, api_name="/analyze"
    )
    assert_stops(server, job.cancel, stops)
    assert logged(server, "cancelled by the client") > cancelled


@contextlib.contextmanager
def held_by(server: Server, address: str) -> Iterator[None]:
    """Dataset curves of 500 images through ResNet-50 four times over REST (minutes) from `address`, past its first
    batch: that visitor's other jobs wait behind it (one visitor's jobs go in order; other visitors' take turns
    with it). Hung up on leaving (and stopped at its next batch)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(500):
            archive.writestr(f"{i}.png", png_bytes(i, (32, 32)))
    archive = upload(server.url, "many.zip", buffer.getvalue())
    stops, start = logged(server, ABANDONED), passes(server)
    with rest_call(server, "dataset_curves", [archive, ["resnet50"] * 4, "", "random"], address):
        wait_for(lambda: passes(server) > start, 300, "the first batch")
        yield
    wait_for(lambda: logged(server, ABANDONED) > stops, 120, "stopping the held work")


def analyze_via(route: str, server: Server, photo: dict, address: str, session: str) -> int:
    """One quick /analyze request through `route` from `address` and `session`: its HTTP status (0 while it
    waits for an answer past 10 s, as the REST routes do behind the held model thread)."""
    data = [photo, ["vit_cifar"], "random", "", None, False]
    body: dict = {"data": data, "session_hash": session}
    if route == "call/v2/analyze":
        body = dict(zip(("image", "models", "weights", "method", "target", "faithfulness"), data))
    if route == "queue/join":
        body |= {"fn_index": fn_indices(server.url)["analyze"], "event_data": None, "trigger_id": None}
    try:
        return post(server, route, body, address, timeout=10).status_code
    except httpx.TimeoutException:
        return 0


def parallel(count: int, request: Callable[[int], int]) -> list[int]:
    """`count` requests at once: their statuses."""
    statuses = [0] * count

    def one(i: int) -> None:
        statuses[i] = request(i)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return statuses


ROUTES = ["run/analyze", "api/analyze", "call/analyze", "call/v2/analyze", "queue/join"]


class TestLimits:
    """Each visitor's requests wait behind a long job of their own, so that none finishes while they are counted."""

    @pytest.mark.parametrize("route", ROUTES)
    def test_every_route_meets_the_per_address_limit(self, server: Server, photo: dict, route: str):
        address = f"127.0.1.{ROUTES.index(route) + 1}"  # a visitor of its own per route
        statuses: list[int] = []
        with held_by(server, address):  # its first request: the others wait behind it
            sending = threading.Thread(
                target=lambda: statuses.extend(
                    parallel(PER_ADDRESS + 2, lambda i: analyze_via(route, server, photo, address, f"{route}-{i}"))
                )
            )
            sending.start()
            wait_for(lambda: logged(server, f"refused a request from {address}") >= 3, 60, "three refusals")
            refused = post(server, "run/forward_passes", {"data": []}, address)  # every route counts toward one limit
            assert refused.status_code == 429 and f"at most {PER_ADDRESS}" in refused.json()["error"]
            assert post(server, "run/forward_passes", {"data": []}, "127.0.2.1").status_code == 200  # others served
            sending.join(60)
        assert statuses.count(429) == 3 and all(s in (0, 200) for s in statuses if s != 429), statuses

    def test_a_session_meets_its_limit_on_the_rest_route(self, server: Server, photo: dict):
        address = "127.0.1.9"
        with held_by(server, address):
            statuses = parallel(PER_SESSION + 2, lambda i: analyze_via("run/analyze", server, photo, address, "one"))
        assert statuses.count(429) == 2 and statuses.count(0) == PER_SESSION, statuses


def encoded(data: dict, encoding: str) -> bytes:
    text = json.dumps(data)
    return b"\xef\xbb\xbf" + text.encode() if encoding == "utf-8-sig" else text.encode(encoding)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-32"])
def test_bodies_in_every_json_encoding_are_checked_as_the_framework_reads_them(server: Server, encoding: str):
    refusals = logged(server, "refused a file outside the upload folder")
    hostile = {"data": [{"path": "/etc/passwd"}, ["vit_cifar"], "random", "", None, False], "session_hash": "s"}
    for route in ("run/analyze", "call/analyze", "queue/join"):
        body = hostile | {"fn_index": fn_indices(server.url)["analyze"]} if route == "queue/join" else hostile
        response = post(server, route, encoded(body, encoding))
        assert response.status_code == 400 and response.json()["error"] == NOT_UPLOADED, response.text
    assert logged(server, "refused a file outside the upload folder") == refusals + 3  # by the guard, each
    served = post(server, "run/forward_passes", encoded({"data": []}, encoding))  # read, not refused for its form
    assert served.status_code == 200 and isinstance(served.json()["data"][0], int)


def test_deep_nesting_and_non_json_get_a_400_and_one_warning(server: Server):
    refused = "WARNING vit_explorer: refused a request:"  # not an earlier test's abandoned request, logged late
    tracebacks, warnings = logged(server, "Traceback"), logged(server, refused)
    for levels in (33, 600, 100_000):
        body = b'{"data": ' + b"[" * levels + b"]" * levels + b"}"
        response = post(server, "run/analyze", body)
        assert response.status_code == 400 and response.json()["error"] == "the request nests deeper than 32"
    response = post(server, "run/analyze", b'{"data": [1, 2')
    assert response.status_code == 400 and response.json()["error"] == "the request body is not JSON"
    assert logged(server, refused) == warnings + 4 and logged(server, "Traceback") == tracebacks
    assert post(server, "run/forward_passes", encoded({"data": [[[[]]]]}, "utf-8")).status_code == 200


def stalled(server: Server, count: int, declared: int, sent: int) -> list[socket.socket]:
    """`count` connections that each declare a body of `declared` bytes, send `sent` of them unless answered at
    once, and stall."""
    connections = [socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1]))) for _ in range(count)]
    head = "POST /gradio_api/run/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    for connection in connections:
        connection.sendall(f"{head}Content-Length: {declared}\r\n\r\n".encode())
    time.sleep(1)
    for connection in connections:
        connection.setblocking(False)
        try:
            connection.recv(1, socket.MSG_PEEK)  # answered at once: nothing more is sent
        except BlockingIOError:
            connection.settimeout(10)
            connection.sendall(b" " * sent)
    return connections


def answer(connection: socket.socket, seconds: float) -> bytes:
    """The head of the connection's response (b'' if none came within `seconds`)."""
    connection.settimeout(seconds)
    try:
        return connection.recv(4096).split(b"\r\n\r\n")[0].lower()
    except (TimeoutError, ConnectionResetError):
        return b""


def test_stalled_bodies_are_dropped_in_time_and_bounded_in_memory(server: Server):
    start, count = steady_rss_mb(server.pid), 12
    connections = stalled(server, count, 4 * 2**20, 3 * 2**20)  # 48 MB declared, 20 MB let in at once
    started, peak = time.monotonic(), 0.0
    while time.monotonic() - started < BODY_SECONDS - 2:
        peak = max(peak, rss_mb(server.pid))
        time.sleep(0.1)
    heads = [answer(connection, 2 * BODY_SECONDS + 10) for connection in connections]
    for connection in connections:
        connection.close()
    waiting = [head for head in heads if head.startswith(b"http/1.1 503")]
    dropped = [head for head in heads if head.startswith(b"http/1.1 408")]
    assert len(waiting) + len(dropped) == count, heads
    assert len(dropped) <= BODY_BUDGET_MB // 4 and all(f"retry-after: {BODY_SECONDS}".encode() in h for h in waiting)
    assert peak - start < BODY_BUDGET_MB + 30, f"the server grew by {peak - start:.0f} MB"
    (too_large,) = stalled(server, 1, 6 * 2**20, 0)
    assert answer(too_large, 10).startswith(b"http/1.1 413")
    too_large.close()
    assert post(server, "run/forward_passes", {"data": []}).status_code == 200  # still serving


def test_hostile_strings_come_back_without_escapes_and_cut_short(server: Server, photo: dict):
    name = "\x1b[31m\x1b]0;owned\x07" + "x" * 10_000
    response = post(server, "run/analyze", {"data": [photo, [name], "random", "", None, False]})
    message = response.json()["error"]
    assert "not a model name" in message and "'" + "x" * 59 + "…'" in message, message
    assert "\x1b" not in message and "owned" not in message and "x" * 60 not in message
    (line,) = [line for line in server.log.read_text().splitlines() if "not a model name" in line]
    assert "\x1b" not in line and len(line) < 300


def test_a_stalled_upload_is_dropped(server: Server, sample_photo: Path):
    tracebacks = logged(server, "Traceback")
    connection = socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
    part = b'--B\r\nContent-Disposition: form-data; name="files"; filename="big.jpg"\r\n\r\n'
    connection.sendall(
        b"POST /gradio_api/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
        b"Content-Length: 20000000\r\n\r\n" + part + bytes(1_000_000)
    )
    started = time.monotonic()
    head = answer(connection, 2 * BODY_SECONDS + 10)
    connection.close()
    assert head.startswith(b"http/1.1 408") and time.monotonic() - started < 2 * BODY_SECONDS + 10, head
    assert logged(server, "Traceback") == tracebacks
    assert upload(server.url, "cat.jpg", sample_photo.read_bytes())["path"]  # uploads that arrive still do

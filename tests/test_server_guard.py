"""The server probed over raw HTTP as an attacker would: server paths in every input form and handler,
ZIP bombs and broken members, the pixel budget, one visitor filling the queue, a client that hangs up,
hostile model names; plus the upload sweeper and the model cache's byte bound."""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import threading
import time
import zipfile
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from app.backend import service as service_module
from app.backend.service import Service
from app.server.uploads import Uploads
from app.server.visitors import Fairness
from tests.conftest import ROOT, Server
from tests.helpers.files import header_only_png, patch_member, png_bytes
from tests.helpers.gradio_http import LOOPBACK_TLS, fn_indices, gradio_client, rss_mb, upload

SERVER_PATHS = [
    str(ROOT / "docs" / "screenshot.jpg"),
    "docs/screenshot.jpg",
    "/nope/missing.jpg",
    "/etc/passwd",
    "/tmp/gradio",
    "/tmp/gradio/../../etc/passwd",
    "http://127.0.0.1:9/x.jpg",
    str(ROOT),
]
FORMS = {
    "path only": lambda p: {"path": p},
    "file data": lambda p: {"path": p, "meta": {"_type": "gradio.FileData"}, "orig_name": "x.jpg"},
}
HANDLERS = {  # api name -> its inputs around the file
    "analyze": lambda f: [f, ["resnet50"], "random", "", None, False],  # no attribution method, no check
    "run": lambda f: [f, ["resnet50"], "random", "inferno", 0.6, True, ""],
    "dataset_curves": lambda f: [f, ["preact_resnet"], "", "auto"],
    "paper_noise_photo": lambda f: [f],
}


def call(url: str, api: str, data: list) -> tuple[int, str]:
    """POST /gradio_api/call/<api> and, if accepted, the stream's last event: (HTTP status, message or data)."""
    response = httpx.post(f"{url}/gradio_api/call/{api}", json={"data": data}, verify=LOOPBACK_TLS, timeout=60)
    if response.status_code != 200:
        return response.status_code, response.json().get("error", response.text)
    event_id = response.json()["event_id"]
    with httpx.stream("GET", f"{url}/gradio_api/call/{api}/{event_id}", verify=LOOPBACK_TLS, timeout=300) as stream:
        lines = [line for line in stream.iter_lines() if line.startswith("data:")]
    return 200, json.loads(lines[-1][5:]) if lines else ""


def join(url: str, api: str, data: list, session: str, indices: dict[str, int] | None = None) -> httpx.Response:
    """The page's way in: POST /gradio_api/queue/join for event `api` of browser session `session`."""
    index = (indices or fn_indices(url))[api]
    body = {"data": data, "fn_index": index, "session_hash": session, "event_data": None, "trigger_id": None}
    return httpx.post(f"{url}/gradio_api/queue/join", json=body, verify=LOOPBACK_TLS, timeout=30)


def tracebacks(server: Server) -> int:
    return server.log.read_text().count("Traceback")


def test_server_paths_are_refused_alike_in_every_form_and_handler(server: Server):
    passes = gradio_client(server.url).predict(api_name="/forward_passes")
    before = tracebacks(server)
    answers = set()
    for api, inputs in HANDLERS.items():
        for form in FORMS.values():
            for path in SERVER_PATHS:
                status, message = call(server.url, api, inputs(form(path)))
                assert status == 400, (api, path, status, message)
                answers.add(message)
        for path in SERVER_PATHS:  # the page's own event, as the browser sends it
            response = join(server.url, api, inputs(FORMS["file data"](path)), "attacker")
            assert response.status_code == 400
            answers.add(response.json()["error"])
    assert len(answers) == 1, answers  # one answer, whatever the path is or whether it exists
    (answer,) = answers
    assert "uploaded to this server" in answer and not any(p in answer for p in SERVER_PATHS)
    plain = {
        call(server.url, "analyze", HANDLERS["analyze"](path))[1]["error"] for path in SERVER_PATHS
    }  # bare strings
    assert plain == answers
    assert gradio_client(server.url).predict(api_name="/forward_passes") == passes  # nothing ran
    assert tracebacks(server) == before and "refused" in server.log.read_text()


def test_a_sample_photo_and_an_upload_are_still_analyzed(server: Server, sample_photo: Path):
    status, out = call(
        server.url,
        "analyze",
        [upload(server.url, "cat.jpg", sample_photo.read_bytes()), ["vit_cifar"], "random", "", None, False],
    )
    assert status == 200 and out[0]["models"][0]["name"] == "vit_cifar"
    status, out = call(
        server.url, "analyze", [{"path": str(sample_photo)}, "vit_cifar", "random", "", None, False]
    )  # a sample
    assert status == 200 and len(out[0]["models"]) == 1  # and a lone model name is one name, not letters


def test_a_rest_call_with_the_values_documented_before_newer_parameters_gets_their_defaults(
    server: Server, sample_photo: Path
):
    """A script written when /analyze took five values (or two, or three) is answered as if it sent the defaults
    of the rest; one more left off than has a default is still refused."""
    photo = upload(server.url, "cat.jpg", sample_photo.read_bytes())
    for sent in ([photo, ["vit_cifar"], "random", "Saliency", None], [photo, ["vit_cifar"], "random"]):
        status, out = call(server.url, "analyze", sent)
        assert status == 200 and out[0]["models"][0]["name"] == "vit_cifar", (sent, out)
        model = out[0]["models"][0]
        assert ("maps" in model) == (len(sent) == 5) and "faithfulness" not in str(model.get("maps")), model.keys()
    status, out = call(server.url, "analyze", [photo])
    assert status != 200 or "needed: 6, got: 1" in str(out), out  # the models have no default


def hostile_zip() -> bytes:
    """Three good photos, a 1 GB member of zeros (about 1 MB packed), a 30 MB one at 1000:1, and members
    that are encrypted, corrupt (bad CRC) and packed with Deflate64."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(3):
            archive.writestr(f"good/{i}.png", png_bytes(i))
        with archive.open("bomb.png", "w", force_zip64=True) as member:
            zeros = bytes(2**20)
            for _ in range(1024):
                member.write(zeros)
        archive.writestr("ratio.png", bytes(30 * 2**20))
        for name in ("locked.png", "deflate64.png"):
            archive.writestr(name, png_bytes(7))
        archive.writestr(zipfile.ZipInfo("badcrc.png"), png_bytes(8), compress_type=zipfile.ZIP_STORED)
    data = patch_member(buffer.getvalue(), "locked.png", flags=0x1)
    data = patch_member(data, "deflate64.png", method=9)
    return patch_member(data, "badcrc.png", flip_data_byte=True)


def test_a_zip_bomb_and_broken_members_are_skipped_and_named_without_inflating(server: Server):
    archive = upload(server.url, "hostile.zip", hostile_zip())
    peak, start, done = [0.0], rss_mb(server.pid), threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(server.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        status, out = call(server.url, "dataset_curves", [archive, ["preact_resnet"], "", "auto"])
    finally:
        done.set()
        sampler.join()
    assert status == 200, out
    summary = next(value for value in out if isinstance(value, str) and "Averaged over" in value)
    assert "3 images. 5 unreadable skipped" in summary, summary
    for name in ("bomb.png", "ratio.png", "locked.png", "deflate64.png", "badcrc.png"):
        assert name in summary
    assert peak[0] - start < 300, f"the server grew by {peak[0] - start:.0f} MB"  # the bomb alone inflates to 1 GB


def test_the_pixel_budget_refuses_a_zip_of_huge_images_before_decoding(server: Server):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(20):
            archive.writestr(f"{i}.png", header_only_png(7000, 7000))  # 49 megapixels each, a few bytes
    started = time.monotonic()
    status, out = call(
        server.url, "dataset_curves", [upload(server.url, "huge.zip", buffer.getvalue()), ["preact_resnet"], "", "auto"]
    )
    assert status == 200 and "980 megapixels in all" in out["error"] and "at most 200" in out["error"]
    assert time.monotonic() - started < 30


def test_hostile_model_names_get_short_clear_messages(server: Server, sample_photo: Path):
    client = gradio_client(server.url)
    photo = handle_file(str(sample_photo))
    with pytest.raises(AppError) as info:
        client.predict(photo, ["x" * 10_000], "random", api_name="/analyze")
    assert "not a model name" in str(info.value) and len(str(info.value)) < 400
    with pytest.raises(AppError, match="unknown model 'vit_tiny_patch16_224.evil'"):
        client.predict(photo, ["vit_tiny_patch16_224.evil"], "random", api_name="/analyze")
    with pytest.raises(AppError, match="models must be a list of model names"):
        client.predict(photo, {"a": 1}, "random", api_name="/analyze")


def idle_passes(client: Client) -> int:
    """The server's forward-pass count once it has stopped changing for 3 s (earlier tests' work drained)."""
    passes = client.predict(api_name="/forward_passes")
    while True:
        time.sleep(3)
        now = client.predict(api_name="/forward_passes")
        if now == passes:
            return now
        passes = now


@contextlib.contextmanager
def long_request(server: Server, session: str) -> Iterator[None]:
    """Dataset curves of 320 images through ResNet-50 (20 batches, a minute or more here) holding the model
    thread, from `session`, past its first progress report; its client hangs up on leaving the block."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(320):
            archive.writestr(f"{i}.png", png_bytes(i, (32, 32)))
    inputs = HANDLERS["dataset_curves"](upload(server.url, "many.zip", buffer.getvalue()))
    inputs[1] = ["resnet50"]
    assert join(server.url, "dataset_curves", inputs, session).status_code == 200
    with httpx.stream(
        "GET", f"{server.url}/gradio_api/queue/data", params={"session_hash": session}, timeout=120, verify=LOOPBACK_TLS
    ) as stream:
        for line in stream.iter_lines():
            if '"progress"' in line and "of 320 images" in line:
                break
        yield  # leaving the stream hangs up


def test_one_visitor_cannot_fill_the_queue(server: Server, sample_photo: Path):
    photo = upload(server.url, "cat.jpg", sample_photo.read_bytes())
    # /analyze calls, each of which waits for the model: a page's repeated Analyze (/run) ends at once by design
    inputs, indices = HANDLERS["analyze"](photo), fn_indices(server.url)
    with long_request(server, "someone-else"):  # the greedy visitor's requests wait behind it
        limit = Fairness().per_session
        answers = [join(server.url, "analyze", inputs, "greedy-visitor", indices) for _ in range(limit + 1)]
        assert [a.status_code for a in answers[:limit]] == [200] * limit, [a.text for a in answers]
        assert answers[limit].status_code == 429 and f"at most {limit}" in answers[limit].json()["error"]
        assert join(server.url, "analyze", inputs, "another-visitor", indices).status_code == 200  # others served
    deadline = time.monotonic() + 300
    while join(server.url, "analyze", inputs, "greedy-visitor", indices).status_code == 429:  # until drained
        assert time.monotonic() < deadline
        time.sleep(1)


def test_work_stops_when_the_client_hangs_up(server: Server):
    client = gradio_client(server.url)
    start, stops = idle_passes(client), server.log.read_text().count("the rest of an abandoned request")
    with long_request(server, "hangs-up"):
        pass
    deadline = time.monotonic() + 120
    while server.log.read_text().count("the rest of an abandoned request") == stops:
        assert time.monotonic() < deadline, "the work went on after the client hung up"
        time.sleep(0.5)
    stopped = idle_passes(client)
    assert 0 < stopped - start < 20  # stopped at a batch boundary, long before the 20th batch


def test_the_sweeper_deletes_only_stale_dropped_uploads(tmp_path: Path):
    uploads = Uploads((tmp_path,))
    (tmp_path / "abc").mkdir()
    stale, fresh, finished = tmp_path / "tmpdropped", tmp_path / "tmpuploading", tmp_path / "abc" / "photo.jpg"
    for path in (stale, fresh, finished):
        path.write_bytes(b"x")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    os.utime(finished, (old, old))
    assert uploads.sweep(3600) == 1
    assert not stale.exists() and fresh.exists() and finished.exists()


def test_an_upload_dropped_half_way_leaves_a_file_the_sweeper_removes(server: Server):
    """Gradio writes an upload's body into a tmp* file in the upload folder, which stays when the client drops."""
    folder = Uploads.gradio().roots[0]
    before = set(folder.glob("tmp*"))
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as connection:
        part = b'--B\r\nContent-Disposition: form-data; name="files"; filename="big.jpg"\r\n\r\n'
        connection.sendall(
            b"POST /gradio_api/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
            b"Content-Length: 20000000\r\n\r\n" + part + bytes(3_000_000)
        )
        time.sleep(1)
    time.sleep(1)
    (dropped,) = [path for path in set(folder.glob("tmp*")) - before if path.stat().st_size >= 1_000_000]
    old = time.time() - 7200
    os.utime(dropped, (old, old))
    assert Uploads((folder,)).sweep(3600) >= 1 and not dropped.exists()


def test_the_model_cache_is_bounded_in_bytes(monkeypatch):
    service = Service()
    service.load("vit_cifar", "random")
    one_model = service.cached_bytes
    monkeypatch.setattr(service_module, "MAX_CACHED_BYTES", int(1.5 * one_model))
    service.load("preact_resnet", "random")  # over the bound: the least recently used goes
    assert not service.is_loaded("vit_cifar", "random") and service.is_loaded("preact_resnet", "random")
    assert service.cached_bytes <= 1.5 * one_model

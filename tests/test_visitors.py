"""Who a visitor is and what their uploads may take, over loopback against a real server: visitors behind a trusted
proxy counted one by one, X-Forwarded-For from anyone else ignored, uploads within a visitor's bytes a minute and
the folder's cap, a closed page's uploads deleted with it, and what a session keeps."""

from __future__ import annotations

import os
import pickle
import socket
import time
from io import BytesIO
from pathlib import Path
from typing import Iterator

import httpx
import numpy as np
import pytest
from PIL import Image

from app.backend.service import Service
from app.gradio_ui.downloads import exports_prefix
from app.server.uploads import SessionFiles, Uploads
from app.server.visitors import Proxies, networks
from app.tabs.compare import CompareTab, Look
from tests.conftest import Server, gradio_server
from tests.helpers.files import png_bytes
from tests.helpers.gradio_http import LOOPBACK_TLS, fn_indices, gradio_client

PER_MINUTE_MB, FOLDER_MB = 2, 6
PHOTO = png_bytes(7, (500, 500))  # about 0.7 MB: two fit a visitor's minute, a third does not


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("uploads")


@pytest.fixture(scope="module")
def server(output_dir: Path, folder: Path) -> Iterator[Server]:
    """The app behind a trusted proxy at 127.0.0.1, with small upload bounds and an upload folder of its own."""
    settings = {
        "VIT_EXPLORER_TRUSTED_PROXIES": "127.0.0.1",
        "VIT_EXPLORER_UPLOAD_MB_PER_MINUTE": str(PER_MINUTE_MB),
        "VIT_EXPLORER_UPLOAD_FOLDER_MB": str(FOLDER_MB),
        "GRADIO_TEMP_DIR": str(folder),
    }
    with gradio_server(output_dir / "visitors-server.log", settings) as started:
        yield started


def send(server: Server, data: bytes, peer: str, forwarded: str | None = None) -> httpx.Response:
    """An upload from loopback address `peer`, with an X-Forwarded-For header when given."""
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    with httpx.Client(transport=httpx.HTTPTransport(local_address=peer, verify=LOOPBACK_TLS), timeout=60) as client:
        return client.post(f"{server.url}/gradio_api/upload", files={"files": ("p.png", data)}, headers=headers)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_the_visitor_is_the_first_untrusted_address_from_the_right():
    proxies = Proxies(networks("127.0.0.1, 10.0.0.0/8"))
    assert proxies.visitor("127.0.0.1", "203.0.113.5") == "203.0.113.5"
    assert proxies.visitor("127.0.0.1", "1.2.3.4, 203.0.113.5, 10.1.2.3") == "203.0.113.5"  # a spoofed left part
    assert proxies.visitor("198.51.100.7", "203.0.113.5") == "198.51.100.7"  # not a trusted proxy: ignored
    assert proxies.visitor("127.0.0.1", None) == "127.0.0.1"
    assert proxies.visitor("127.0.0.1", "10.0.0.1, 10.0.0.2") == "10.0.0.1"  # every hop trusted: the farthest
    assert Proxies(()).visitor("127.0.0.1", "203.0.113.5") == "127.0.0.1"  # none set: nobody is believed
    with pytest.raises(ValueError, match="not an address"):
        networks("127.0.0.1, proxy.example")


def test_thirteen_visitors_behind_the_trusted_proxy_are_each_counted_alone(server: Server):
    answers = [send(server, PHOTO, "127.0.0.1", f"198.51.100.{i}") for i in range(13) for _ in range(2)]
    assert [a.status_code for a in answers] == [200] * 26, [a.text for a in answers if a.status_code != 200]
    third = send(server, PHOTO, "127.0.0.1", "198.51.100.0")  # the first visitor's third photo in the minute
    assert third.status_code == 429 and f"at most {PER_MINUTE_MB} MB a minute" in third.json()["error"]


def test_a_forwarded_address_from_an_untrusted_peer_is_ignored(server: Server):
    statuses = [send(server, PHOTO, "127.0.0.3", f"203.0.113.{i}").status_code for i in range(3)]
    assert statuses == [200, 200, 429]  # one visitor, whatever the header says


def test_uploads_past_a_visitors_minute_are_refused_before_anything_is_written(server: Server, folder: Path):
    before = folder_bytes(folder)
    big = png_bytes(8, (900, 900))  # about 2.3 MB: over the minute's 2 MB alone
    answer = send(server, big, "127.0.0.4")
    assert answer.status_code == 429 and "try again in a minute" in answer.json()["error"]
    assert folder_bytes(folder) == before


def test_the_upload_folder_stays_under_its_cap(server: Server, folder: Path):
    photos = [png_bytes(100 + i, (500, 500)) for i in range(12)]  # each its own file (Gradio names them by hash)
    statuses = [send(server, photo, f"127.0.3.{i}").status_code for i, photo in enumerate(photos)]  # 8.6 MB in all
    assert 507 in statuses and folder_bytes(folder) <= FOLDER_MB * 2**20, statuses
    refused = send(server, png_bytes(99, (500, 500)), "127.0.3.99")
    assert refused.status_code == 507 and "too many uploads" in refused.json()["error"]


def open_heartbeat(url: str, session: str) -> socket.socket:
    """The heartbeat connection a page of `session` keeps open, once the server has answered on it: closing the
    socket closes the page at once (a client that reads the stream notices only at its next beat, 15 s later)."""
    host, port = url.removeprefix("http://").split(":")
    page = socket.create_connection((host, int(port)), timeout=60)
    page.sendall(f"GET /gradio_api/heartbeat/{session} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    said = b""
    while b"ALIVE" not in said:
        chunk = page.recv(4096)
        assert chunk, f"the heartbeat closed: {said!r}"
        said += chunk
    assert said.startswith(b"HTTP/1.1 200"), said
    return page


def test_a_closed_pages_uploads_and_exports_are_deleted_with_it(output_dir: Path, tmp_path: Path, sample_photo: Path):
    with gradio_server(output_dir / "visitors-close.log", {"GRADIO_TEMP_DIR": str(tmp_path)}) as server:
        session = "closing-page"
        own = BytesIO()
        Image.open(sample_photo).save(own, "PNG")  # the visitor's own photo (a sample's bytes are kept: see below)
        path = httpx.post(
            f"{server.url}/gradio_api/upload", files={"files": ("cat.png", own.getvalue())}, verify=LOOPBACK_TLS
        )
        photo = {"path": path.json()[0], "meta": {"_type": "gradio.FileData"}, "orig_name": "cat.png"}
        assert Path(photo["path"]).is_file()
        page = open_heartbeat(server.url, session)  # the page's open connection: closing it is closing the page
        body = {
            "data": [photo, ["vit_cifar"], "random", "", None, False],
            "fn_index": fn_indices(server.url)["analyze"],
            "session_hash": session,
            "event_data": None,
            "trigger_id": None,
        }
        assert (
            httpx.post(f"{server.url}/gradio_api/queue/join", json=body, verify=LOOPBACK_TLS, timeout=30).status_code
            == 200
        )
        export = tmp_path / f"{exports_prefix(session)}x1" / "fig9-variance.png"  # where its export would be
        other = tmp_path / f"{exports_prefix('another-page')}x2" / "fig9-variance.png"
        for path in (export, other):
            path.parent.mkdir()
            path.write_bytes(b"png")
        page.close()
        deadline = time.monotonic() + 120
        said = "a page closed: 1 upload deleted, 1 export,"
        while Path(photo["path"]).exists() or said not in server.log.read_text():
            assert time.monotonic() < deadline, "the closed page's upload or export was kept, or not logged"
            time.sleep(0.5)
        assert not Path(photo["path"]).exists() and not export.parent.exists() and other.exists()


@pytest.mark.parametrize(
    "long_job",
    [("/alternet_subset", ("s2:4,s3:2,s3:4,s3:6,s4:2,s4:4", 1000)), ("/paper_noise", (1000,))],
    ids=["alternet-subset", "paper-recompute"],
)
def test_a_plain_analysis_goes_between_the_batches_of_another_visitors_long_job(
    server: Server, sample_photo: Path, long_job: tuple[str, tuple]
):
    """A teacher averages the AlterNet tab over 1,000 test images or recomputes a Paper figure; a student's plain
    analysis, asked once that has begun, is answered while it still runs (it waits for a batch, not for the job)."""
    from gradio_client import handle_file

    api, args = long_job
    teacher = gradio_client(server.url, headers={"x-forwarded-for": "198.51.100.60"})
    student = gradio_client(server.url, headers={"x-forwarded-for": "198.51.100.61"})
    job = teacher.submit(*args, api_name=api)
    deadline = time.monotonic() + 300
    while job.status().code.name != "PROGRESS":  # its first batches are computing
        assert not job.done() and time.monotonic() < deadline, job.status()
        time.sleep(0.2)
    asked = time.monotonic()
    answer = student.predict(handle_file(str(sample_photo)), ["vit_cifar"], "random", api_name="/analyze")
    waited = time.monotonic() - asked
    running = not job.done()
    job.cancel()
    assert answer["models"][0]["name"] == "vit_cifar"
    assert running, f"{api} ended before the student's analysis was answered ({waited:.1f} s)"


def test_a_session_that_analyzed_a_phone_photo_keeps_under_5_mb(tmp_path: Path):
    """What a page keeps (its runs) after a 12-megapixel photo on two models: their inputs and measurements, not
    the photo (36 MB decoded)."""
    rng = np.random.default_rng(0)
    small = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    phone = Image.fromarray(small).resize((4000, 3000), Image.BICUBIC)  # 12 MP, compressing like a photo
    phone.save(tmp_path / "phone.jpg", quality=90)
    service = Service(uploads=Uploads((tmp_path,)))
    page = CompareTab(service).analyze(
        str(tmp_path / "phone.jpg"), ["resnet50", "vit_small_patch16_224"], None, "random", Look()
    )
    kept = len(pickle.dumps(page.runs))
    assert kept < 5 * 2**20, f"{kept / 2**20:.1f} MB"
    assert all(run.photo_size == (2000, 1500) for run in page.runs)  # decoded at half size: still over 1,024 px


def test_a_shared_upload_outlives_one_of_its_sessions(tmp_path: Path):
    """Uploads are stored by content: a photo two pages use, or uploaded again since, stays when one page closes."""
    files = SessionFiles(Uploads((tmp_path,)))
    shared, own, again = (tmp_path / name / "p.png" for name in ("shared", "own", "again"))
    for path in (shared, own, again):
        path.parent.mkdir()
        path.write_bytes(b"x")
    files.note("page a", [str(shared), str(own), str(again)])
    files.note("address 127.0.0.9", [str(shared)])  # a REST client (no session) named it too
    later = time.time() + 5
    os.utime(again, (later, later))  # uploaded again (by another page) after page a named it
    assert files.forget("page a") == 1
    assert shared.exists() and again.exists() and not own.exists() and not own.parent.exists()


def test_an_upload_of_a_sample_photo_is_not_deleted_with_its_page(tmp_path: Path, sample_photo: Path):
    """Gradio keeps a sample shown as an example and an upload of the same photo at one path (by content): the page
    that uploaded it closing must not take the sample's picture from every page (seen: a broken cat thumbnail)."""
    root = tmp_path / "uploads"
    files = SessionFiles(Uploads((root,), frozenset({sample_photo})))
    same, other = root / "a" / sample_photo.name, root / "b" / sample_photo.name
    for path, data in ((same, sample_photo.read_bytes()), (other, sample_photo.read_bytes()[:-1] + b"\0")):
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
    files.note("page a", [str(same), str(other)])
    assert files.forget("page a") == 1
    assert same.exists() and not other.exists()

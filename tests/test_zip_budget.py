"""ZIPs whose directory repeats itself, over HTTP against the real server: a member name listed many times and
many names pointing at one stored copy are refused at once (the issue's 2.5 MB ZIP naming one 64 MB member 500
times took 193 s per model), and a plain ZIP is unpacked once and still measured, its unreadable member named."""

from __future__ import annotations

import io
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from PIL import Image

from bench.repeated_zip import one_copy_named
from engine.data.zip_images import shared_entries
from tests.helpers.gradio_http import gradio_client

MODELS = ["vit_cifar", "preact_resnet"]


@pytest.fixture(scope="module")
def zip_client(budget_server) -> Client:  # tests/conftest.py's server with a request budget
    return gradio_client(budget_server[0].url)


def png(seed: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(buffer, "PNG")
    return buffer.getvalue()


def duplicate_names(copies: int) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it writes
        for i in range(copies):
            archive.writestr("cat.png", png(i))
    return buffer.getvalue()


@pytest.mark.parametrize(
    "archive, reason",
    [
        (lambda: duplicate_names(50), "it lists cat.png more than once"),
        (lambda: one_copy_named(500, png(0)), "share one stored copy"),
    ],
)
def test_repeated_members_are_refused_at_once(zip_client: Client, tmp_path: Path, archive, reason: str) -> None:
    path = tmp_path / "repeated.zip"
    path.write_bytes(archive())
    with zipfile.ZipFile(path) as opened:
        assert len(opened.infolist()) >= 50 and shared_entries(opened)  # the directory really repeats itself
    started = time.monotonic()
    with pytest.raises(AppError) as refused:
        zip_client.predict(handle_file(str(path)), MODELS, "", "random", api_name="/dataset_curves")
    assert time.monotonic() - started < 60
    assert reason in str(refused.value) and str(tmp_path) not in str(refused.value)


def test_a_plain_zip_is_measured_once_unpacked(zip_client: Client, tmp_path: Path) -> None:
    path = tmp_path / "plain.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(6):
            archive.writestr(f"img/{i}.png", png(i))
        archive.writestr("img/broken.png", b"not a png at all")
    out = zip_client.predict(handle_file(str(path)), MODELS, "", "random", api_name="/dataset_curves")
    text = str(out)
    assert "6 images" in text and "broken.png" in text  # both models measured the six; the bad one named

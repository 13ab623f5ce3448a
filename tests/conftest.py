"""Shared fixtures: the repo, sample photos, test-output/, and one real app server per session."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "assets" / "samples").glob("*.jpg"))
SERVER_START_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one thread for a module of tiny models: they gain nothing from threads, and on a busy CPU
    extra threads only wait for one another."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def output_dir() -> Path:
    path = ROOT / "test-output"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def sample_photo() -> Path:
    return ROOT / "assets" / "samples" / "cat.jpg"


@pytest.fixture(scope="session")
def photo_path(sample_photo: Path) -> Path:
    return sample_photo


@pytest.fixture(scope="session")
def photos() -> list[Image.Image]:
    """The bundled sample photos (cat, coffee, rocket) as RGB images."""
    return [Image.open(path).convert("RGB") for path in SAMPLES]


def two_class_folder(root: Path, train: int, test: int, stripes: bool) -> Path:
    """An ImageFolder tree of two classes of 32x32 noise, red and blue, `train` and `test` images each;
    with `stripes` the reds get vertical stripes and the blues horizontal ones."""
    import numpy as np

    rng = np.random.default_rng(0)
    for split, count in (("train", train), ("test", test)):
        for label, name in enumerate(("reds", "blues")):
            (root / split / name).mkdir(parents=True)
            for i in range(count):
                pixels = rng.integers(0, 80, (32, 32, 3))
                pixels[:, :, 2 * label] += 150
                if stripes:
                    pixels[:: 4 if label else 1, :: 1 if label else 4] += 25
                Image.fromarray(pixels.astype(np.uint8)).save(root / split / name / f"{i:03d}.png")
    return root


def stop(process: subprocess.Popen) -> None:
    """End a server: asked first, killed if it has not exited 10 s later (a busy machine can be that slow)."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the app did not answer within {SERVER_START_TIMEOUT_S} s:\n{log.read_text()}")


@dataclass(frozen=True)
class Server:
    url: str
    pid: int
    log: Path


@pytest.fixture(scope="session")
def server(output_dir: Path):
    """`python -m app.gradio_app --port FREE` running for the whole session; its log in test-output/."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = output_dir / "server.log"
    # offline, as on CI and in air-gapped use: the hub is a closed local port and the cache is empty
    hub = output_dir / "hub-cache"
    env = {
        **os.environ,
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HUB_CACHE": str(hub),
    }
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.gradio_app", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(url, process, log)
        yield Server(url, process.pid, log)
    finally:
        stop(process)


@pytest.fixture(scope="session")
def server_url(server: Server) -> str:
    return server.url


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def page():
    """A 1440x1000 page of a real headless Chromium (one browser per test module)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: `bash scripts/setup.sh dev` installs Debian's chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser.new_page(viewport={"width": 1440, "height": 1000})
        browser.close()


def streamlit_settled(page, timeout_ms: int = 600_000) -> None:
    """Wait for the Streamlit script run in progress, or requested, to end."""
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=timeout_ms)


def streamlit_upload(page, path: Path, timeout_ms: int = 600_000) -> None:
    """Put `path` in the page's first Streamlit uploader and wait until it is uploaded and its rerun has
    ended: a click made during the upload starts a run that the upload's own rerun then interrupts."""
    page.locator("input[type=file]").first.set_input_files(str(path))
    page.locator("[data-testid=stFileChipName]", has_text=path.name).first.wait_for(timeout=timeout_ms)
    page.locator("[data-testid=stFileChipIconSpinner]").first.wait_for(state="detached", timeout=timeout_ms)
    streamlit_settled(page, timeout_ms)

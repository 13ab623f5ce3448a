"""Shared fixtures: the repo, sample photos, test-output/, and one real app server per session."""

from __future__ import annotations

import functools
import gc
import os
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.request
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from PIL import Image

# The test processes, and the servers and commands they start, keep the project's compiled code and pytest's rewritten
# tests in __pycache__ (git-ignored) even where PYTHONDONTWRITEBYTECODE is set, as on this project's machines:
# compiled again in every process, they cost each one about 3.5 s before its first test
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "assets" / "samples").glob("*.jpg"))
OUTPUT = ROOT / "test-output"
WORKER = "-" + os.environ["PYTEST_XDIST_WORKER"] if "PYTEST_XDIST_WORKER" in os.environ else ""  # "-gw0", ...
SERVER_START_TIMEOUT_S = 300  # a loaded 2-core machine has taken over 90 s to start the app
STREAMLIT_SCRIPT = ROOT / "app" / "streamlit_server.py"


def pytest_configure(config: pytest.Config) -> None:
    """In a pytest-xdist worker, torch takes the worker's share of the cores, in the worker and in the processes it
    starts: workers whose torch threads outnumber the cores spend their time waiting on one another (two workers of
    two threads each ran slower than one)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        import torch

        share = max(1, (os.cpu_count() or 1) // workers)
        torch.set_num_threads(share)
        # and so do the servers and commands it starts (OpenMP's threads, torch's): on the 2-core machine, four test
        # files whose Gradio servers compute most took 247 s and 436 CPU-s with two threads a server, 224 s and 373
        # CPU-s with one
        os.environ.setdefault("OMP_NUM_THREADS", str(share))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (torch, timm, Gradio, Streamlit: some million objects) is kept out of the garbage
    collector's sweeps, which otherwise walk it again at every full collection during the tests."""
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """pytest ends a process with five full garbage collections over everything the tests left (about 2 s a process
    here): frozen now, they are over at once."""
    gc.freeze()


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
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT


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
    """End a server started in a session of its own, and every process it started (ZeroGPU's forked workers outlive
    their parent): asked first, killed if the server has not exited 10 s later (a busy machine can be that slow)."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    try:
        os.killpg(process.pid, signal.SIGKILL)  # what is left of the group once the server has gone
    except ProcessLookupError:
        pass


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


@contextmanager
def running(command: list[str], url: str, health: str, log: Path, settings: dict[str, str]) -> Iterator[Server]:
    """`command` (a server that will answer at `url` + `health`) running, offline as on CI and in air-gapped use
    (the hub a closed local port, its cache in test-output/), with `settings` in its environment and its output
    in `log`; stopped on leaving."""
    offline = {"GRADIO_ANALYTICS_ENABLED": "False", "HF_ENDPOINT": "http://127.0.0.1:9"}
    env = {**os.environ, **offline, "HF_HUB_CACHE": str(OUTPUT / "hub-cache"), **settings}
    OUTPUT.mkdir(exist_ok=True)
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_until_up(url + health, process, log)
        yield Server(url, process.pid, log)
    finally:
        stop(process)


def gradio_server(log: Path, settings: dict[str, str] | None = None) -> AbstractContextManager[Server]:
    """`python -m app.gradio_app` on a free loopback port (see `running`)."""
    port = free_port()
    command = [sys.executable, "-m", "app.gradio_app", "--host", "127.0.0.1", "--port", str(port)]
    return running(command, f"http://127.0.0.1:{port}", "", log, settings or {})


def streamlit_server(log: Path, settings: dict[str, str] | None = None) -> AbstractContextManager[Server]:
    """`streamlit run app/streamlit_server.py` headless on a free loopback port (see `running`); the rest of its
    settings from .streamlit/config.toml, as scripts/run.sh."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(STREAMLIT_SCRIPT), "--server.port", str(port)]
    command += ["--server.headless", "true", "--server.address", "127.0.0.1"]
    return running(command, f"http://127.0.0.1:{port}", "/_stcore/health", log, settings or {})


@pytest.fixture(scope="session")
def server(output_dir: Path) -> Iterator[Server]:
    """`python -m app.gradio_app` running for the whole session; its log in test-output/."""
    # slow maps on purpose (Integrated Gradients at 64-128 steps on ResNet-50): on a loaded machine their estimate can
    # pass the default 5 min and they are refused; the time limit is not what these tests check
    log = output_dir / f"server{WORKER}.log"  # one per pytest-xdist worker, each with its own server
    with gradio_server(log, {"VIT_EXPLORER_REQUEST_SECONDS": "1800"}) as running_server:
        yield running_server


@pytest.fixture(scope="session")
def server_url(server: Server) -> str:
    return server.url


@pytest.fixture(scope="session")
def streamlit(output_dir: Path) -> Iterator[Server]:
    """The Streamlit explorer as served (app/streamlit_server.py), for the whole session (one per xdist worker); its
    log in test-output/."""
    # slow maps on purpose (Integrated Gradients at 128 steps on ResNet-50): on a loaded machine their estimate
    # passed the default 5 min and they were refused; the time limit is not what these tests check
    log = output_dir / f"streamlit{WORKER}.log"
    with streamlit_server(log, {"VIT_EXPLORER_REQUEST_SECONDS": "1800"}) as started:
        yield started


@pytest.fixture(scope="session")
def streamlit_url(streamlit: Server) -> str:
    return streamlit.url


BUDGET_MB = 170  # over ViT-Ti's one-image Integrated Gradients (~190 MB), room for two images of vit_cifar


@pytest.fixture(scope="session")
def budget_server(output_dir: Path, tmp_path_factory) -> Iterator[tuple[Server, Path]]:
    """The app with a BUDGET_MB request budget, its Gradio cache and its other temporary files in folders of
    their own (under the returned root), for the whole session (one per xdist worker)."""
    root = tmp_path_factory.mktemp("budget-server")
    (root / "tmp").mkdir()
    settings = {
        "VIT_EXPLORER_REQUEST_MB": str(BUDGET_MB),
        "GRADIO_TEMP_DIR": str(root / "gradio-cache"),
        "TMPDIR": str(root / "tmp"),
    }
    with gradio_server(output_dir / f"budget-server{WORKER}.log", settings) as started:
        yield started, root


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """The hub a closed local port and its cache empty, for Streamlit's AppTest (which runs the page script in this
    process); a module asks for it for all its tests with `pytestmark = pytest.mark.usefixtures("offline")`."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


@pytest.fixture
def client(server_url: str):
    """A gradio_client Client of the session's Gradio server: a page session of its own."""
    from tests.helpers.gradio_http import gradio_client

    return gradio_client(server_url)


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


FOCUSED_ELEMENT = "() => { const e = document.activeElement; return e ? e.outerHTML.slice(0, 300) : null; }"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A browser test that fails leaves what its page showed: test-output/failed-<test>.png, and the page's
    address, the element with focus and the last lines of text in the report (a failure on a loaded CI machine can
    then be read)."""
    report = yield
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and page is not None:
        try:
            OUTPUT.mkdir(exist_ok=True)
            page.screenshot(path=str(OUTPUT / f"failed-{item.name}.png"), full_page=True, timeout=30_000)
            text = page.locator("body").inner_text(timeout=10_000)
            focused = page.evaluate(FOCUSED_ELEMENT)
            report.sections.append(("page at failure", f"{page.url}\nfocus on: {focused}\n{text[-3000:]}"))
        except Exception as error:  # the page itself may be what broke
            report.sections.append(("page at failure", f"not captured: {error}"))
    return report


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


BROWSER_FIXTURES = {"page"}  # a real Chromium
BROWSER_CALLS = ("sync_playwright", "ExportBrowser(", "EXPORTS.", "print_pdf(", "teaching_pack(")  # kaleido's too
SERVER_FIXTURES = {
    "server",
    "server_url",
    "client",
    "space",
    "device_api",
    "budget_server",
    "streamlit",
    "streamlit_url",
}
SERVER_CALLS = ("gradio_server(", "streamlit_server(", "running(", "subprocess.", "run_cli(", "Client(", "_client(")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test marked by what it starts, so that `pytest -m "not browser and not server"` runs the page-model,
    engine and rule tests alone: `browser` (a real Chromium), `server` (a real server or another process),
    `slow` (Streamlit's AppTest runs the whole page script)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        function = getattr(item, "function", None)
        source = _source(function) if isinstance(function, types.FunctionType) else ""
        if fixtures & BROWSER_FIXTURES or any(call in source for call in BROWSER_CALLS):
            item.add_marker(pytest.mark.browser)
        if fixtures & SERVER_FIXTURES or any(call in source for call in SERVER_CALLS):
            item.add_marker(pytest.mark.server)
        if "AppTest" in source or any(_runs_app_test(item.module, name) for name in _globals_used(item)):
            item.add_marker(pytest.mark.slow)


def _globals_used(item: pytest.Item) -> tuple[str, ...]:
    code = getattr(getattr(item, "function", None), "__code__", None)
    return code.co_names if code else ()


def _runs_app_test(module, name: str) -> bool:
    """Whether `name` in the test's module is a helper that runs the page script in AppTest (test_streamlit's
    analyzed(), opened())."""
    helper = getattr(module, name, None)
    return isinstance(helper, types.FunctionType) and "AppTest.from_file" in _source(helper)


@functools.cache  # a test's parameters and the helpers many tests call: each read once
def _source(function: types.FunctionType) -> str:
    """A function's source, or "" where it cannot be read."""
    import inspect

    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""

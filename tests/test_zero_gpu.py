"""`python app.py` started as a Hugging Face Space starts it, with and without ZeroGPU. With ZeroGPU: the real `spaces`
package against the stand-in device API (tests/zero_gpu_standin.py), its GPU steps on the CPU, so that every model
job takes the package's real fork-per-call path: the startup report, /analyze, a map and its check, a refusal's own
line, Stop, five visitors at once, and a quota refusal that runs the job on the CPU and says so."""

from __future__ import annotations

import sys
import time
from concurrent.futures import CancelledError, ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from app.server import gpu_cost
from app.server.zero_gpu import NOTICE, ON_CPU
from tests.conftest import OUTPUT, ROOT, Server, free_port, running
from tests.helpers.gradio_http import gradio_client
from tests.zero_gpu_standin import DeviceApi, as_space_user, space_settings

CIFAR = ["preact_resnet", "vit_cifar"]


@pytest.fixture(scope="module")
def device_api() -> Iterator[DeviceApi]:
    api = DeviceApi().start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def space(device_api: DeviceApi) -> Iterator[Server]:
    """app.py as a ZeroGPU Space, against the stand-in device API."""
    port = free_port()
    settings = space_settings(port)
    settings |= {"SPACES_ZERO_GPU": "true", "SPACES_ZERO_DEVICE_API_URL": device_api.url}
    command = [sys.executable, str(ROOT / "tests" / "zero_gpu_standin.py")]
    command = as_space_user(command, settings["HOME"])
    with running(command, f"http://127.0.0.1:{port}", "", OUTPUT / "zero-gpu-space.log", settings) as server:
        yield server


def visitor(space: Server, address: str = "203.0.113.7") -> Client:
    """A page session of a visitor at `address` (as the Space's proxy tells it)."""
    return gradio_client(space.url, headers={"X-Forwarded-For": address})


def analyze(client: Client, photo: Path, models: list[str] = CIFAR, *extra) -> dict:
    return client.predict(handle_file(str(photo)), models, "random", *extra, api_name="/analyze")


def test_the_space_reports_its_gpu_function_and_asks_for_its_own_durations(
    space: Server, device_api: DeviceApi, sample_photo: Path
):
    assert device_api.asked("/startup-report") == [{}]  # at launch: without it a ZeroGPU Space is stopped
    before = len(device_api.asked("/schedule"))
    out = analyze(visitor(space), sample_photo)
    assert [model["name"] for model in out["models"]] == CIFAR and out["models"][1]["attention"]["layers"]
    asked = [int(params["durationSeconds"]) for params in device_api.asked("/schedule")[before:]]
    assert len(asked) == 1, asked  # one GPU call for the analysis of both models
    assert gpu_cost.MIN_S <= asked[0] <= gpu_cost.CAP_S and asked[0] != 60, asked  # the app's estimate, not 60 s
    releases = device_api.asked("/release")
    assert releases and releases[-1]["fail"] == "false"


def test_a_map_and_its_check_run_in_the_worker(space: Server, device_api: DeviceApi, sample_photo: Path):
    client = visitor(space, "203.0.113.8")
    client.predict(handle_file(str(sample_photo)), CIFAR, "random", "inferno", 0.6, True, api_name="/run")
    before = len(device_api.asked("/schedule"))
    _, caption = client.predict(method="Saliency", target=None, api_name="/view_0")
    assert caption.startswith("Saliency of the top-1 class"), caption
    controls = {"steps": 8, "layer": 1, "head": "mean", "rollout": False, "method": "Saliency", "target": None}
    caption, curves = client.predict(**controls, api_name="/check_0")  # (the button and the curves' box: no values)
    assert "**Can this map be trusted?** On this photo, this map " in caption and curves
    asked = [int(params["durationSeconds"]) for params in device_api.asked("/schedule")[before:]]
    assert len(asked) == 2 and all(gpu_cost.MIN_S <= seconds <= gpu_cost.CAP_S for seconds in asked), asked
    assert client.predict(**controls, api_name="/check_0")[0] == caption  # kept on the run: no GPU call again
    assert len(device_api.asked("/schedule")) == before + 2


def test_a_refusal_in_the_worker_shows_the_apps_own_line(space: Server, sample_photo: Path):
    client = visitor(space, "203.0.113.9")
    with pytest.raises(AppError, match="unknown model 'no_such_model'"):  # found as the worker loads it
        analyze(client, sample_photo, ["no_such_model"])
    with pytest.raises(AppError, match="not an image"):  # found before any GPU is asked for
        client.predict(handle_file(str(ROOT / "README.md")), CIFAR, "random", api_name="/analyze")
    assert len(analyze(client, sample_photo)["models"]) == 2  # the Space keeps serving


def test_stop_ends_a_map_in_the_worker_at_its_next_batch(space: Server, device_api: DeviceApi, sample_photo: Path):
    client = visitor(space, "203.0.113.10")
    client.predict(handle_file(str(sample_photo)), ["resnet50"], "random", "inferno", 0.6, True, api_name="/run")
    scheduled = len(device_api.asked("/schedule"))
    released = len(device_api.asked("/release"))
    job = client.submit(method="Occlusion", target=None, api_name="/view_0")  # about 200 passes of ResNet-50
    while len(device_api.asked("/schedule")) == scheduled:
        time.sleep(0.1)
    time.sleep(3)  # a few batches in
    client.predict(api_name="/stop_0")
    stopped = time.monotonic()
    while len(device_api.asked("/release")) == released:
        assert time.monotonic() - stopped < 30, "the GPU was not released after Stop"
        time.sleep(0.1)
    print(f"released {time.monotonic() - stopped:.1f} s after Stop")
    try:
        shown = job.result()
    except CancelledError:
        shown = None
    caption = shown[1] if shown else None
    assert not isinstance(caption, str) or not caption.startswith("Occlusion"), shown  # no half-made map


def test_five_visitors_at_once_all_complete(space: Server, sample_photo: Path):
    clients = [visitor(space, f"198.51.100.{i}") for i in range(5)]
    with ThreadPoolExecutor(5) as pool:
        results = list(pool.map(lambda client: analyze(client, sample_photo, ["vit_cifar"]), clients))
    assert all(out["models"][0]["name"] == "vit_cifar" for out in results)


def said_while_running(job) -> list[str]:
    """Every toast and progress line the page was shown while `job` ran (its status, read every 20 ms)."""
    said: list[str] = []
    while not job.done():
        status = job.status()
        if status.log:
            said.append(status.log[0])
        said += [unit.desc for unit in status.progress_data or () if unit.desc]
        time.sleep(0.02)
    return said


def test_a_quota_refusal_runs_the_job_on_the_cpu_and_says_so(space: Server, device_api: DeviceApi, sample_photo: Path):
    client = visitor(space, "203.0.113.11")
    device_api.mode = "quota"
    try:
        job = client.submit(handle_file(str(sample_photo)), CIFAR, "random", "inferno", 0.6, True, api_name="/run")
        said = said_while_running(job)
        job.result()
        out = analyze(client, sample_photo)
    finally:
        device_api.mode = "gpu"
    assert out["device"] == "cpu" and len(out["models"]) == 2  # the JSON says where it ran
    assert NOTICE in said or any(line.startswith(ON_CPU) for line in said), said
    assert "ZeroGPU quota exceeded" not in " ".join(said)


def test_a_queued_gpu_still_answers(space: Server, device_api: DeviceApi, sample_photo: Path):
    device_api.mode = "queue"
    try:
        assert len(analyze(visitor(space, "203.0.113.12"), sample_photo, ["vit_cifar"])["models"]) == 1
    finally:
        device_api.mode = "gpu"

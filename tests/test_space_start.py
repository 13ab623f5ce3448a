"""The Spaces as their hosts start them: the README's header is one the ZeroGPU Space accepts with the pins CI tests;
`python app.py` as a CPU Space runs it (a non-root user with a HOME of its own, every address, port from the
environment); the Streamlit Docker Space's command as its container runs it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gradio_client import handle_file

from tests.conftest import OUTPUT, ROOT, free_port, running
from tests.helpers.gradio_http import gradio_client
from tests.zero_gpu_standin import as_space_user, space_settings

ZERO_GPU_TORCH = ((2, 8), (2, 11))  # the PyTorch releases ZeroGPU runs (hub-docs spaces-zerogpu.md)


def header(readme: Path) -> str:
    return readme.read_text().split("---")[1]


def pins() -> dict[str, str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if "==" in line)


def test_the_readme_header_is_a_zero_gpu_space_with_the_pins_ci_tests():
    front, pinned = header(ROOT / "README.md"), pins()
    assert re.search(r'^python_version: "3\.12"$', front, re.M)
    assert sys.version_info[:2] == (3, 12)  # what CI tests is what the Space runs
    assert re.search(rf"^sdk_version: {re.escape(pinned['gradio'])}$", front, re.M)
    major, minor = map(int, pinned["torch"].split(".")[:2])
    assert ZERO_GPU_TORCH[0] <= (major, minor) <= ZERO_GPU_TORCH[1], pinned["torch"]
    assert "spaces" in pinned and "suggested_hardware: zero-a10g" in front
    import timm

    from app.backend.service import DEFAULT_MODELS

    for name in DEFAULT_MODELS:  # the pretrained weights the page offers first, fetched as the Space is built
        repo = timm.models.get_pretrained_cfg(name).hf_hub_id
        assert f"  - {repo} model.safetensors" in front, repo


def test_without_zero_gpu_app_py_serves_as_a_cpu_space(sample_photo: Path):
    port = free_port()
    settings = space_settings(port)
    command = as_space_user([sys.executable, str(ROOT / "app.py")], settings["HOME"])
    with running(command, f"http://127.0.0.1:{port}", "", OUTPUT / "cpu-space.log", settings) as server:
        client = gradio_client(server.url)
        out = client.predict(handle_file(str(sample_photo)), ["vit_cifar"], "random", api_name="/analyze")
        assert out["device"] == "cpu" and out["models"][0]["name"] == "vit_cifar"


def test_the_streamlit_docker_space_serves_as_its_container_runs_it():
    space = ROOT / "deploy" / "streamlit-space"
    assert re.search(r"^sdk: docker$", header(space / "README.md"), re.M)
    assert re.search(r"^app_port: 8501$", header(space / "README.md"), re.M)
    dockerfile = (space / "Dockerfile").read_text()
    assert "useradd -m -u 1000 user" in dockerfile and "USER user" in dockerfile
    assert 'CMD ["bash", "deploy/streamlit-space/start.sh"]' in dockerfile
    port = free_port()
    settings = {**space_settings(port), "PORT": str(port), "PYTHON": sys.executable}
    command = as_space_user(["bash", str(space / "start.sh")], settings["HOME"])
    with running(command, f"http://127.0.0.1:{port}", "/_stcore/health", OUTPUT / "streamlit-space.log", settings):
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as page:
            assert page.status == 200 and b"<html" in page.read().lower()

"""Redraw benchmark (not a test): how long a view change takes to show, in a real browser, per front end.

    .venv/bin/python bench/redraw_speed.py [--repeats 8]

Starts the Gradio and the Streamlit server offline on loopback ports, opens each in headless Chromium,
analyzes the sample photo with the default models (PreAct ResNet, AlterNet and ViT/4, trained on
CIFAR-10), then steps the first column with a layer slider (AlterNet's) down one layer at a time (up
from the first) with the keyboard and times, per step, from the key press to the moment the map's image
has changed on the page; then the same for the map opacity, which redraws every column (in Streamlit: a
rerun of the whole page, every tab). Prints the median and the slowest step per front end and change.
Target: under 1 s for both (a redraw runs no model: Streamlit re-draws one fragment, or re-runs the page
from stored results; Gradio runs one event).
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository, for `app`

from app.views.texts import LABEL  # noqa: E402

PHOTO = ROOT / "assets" / "samples" / "cat.jpg"
IMAGE = """([scope, inside, sel]) => {
    const s = [...document.querySelectorAll(scope)].find(e => !inside || e.querySelector(inside));
    const i = s && s.querySelector(sel);
    return i && i.getAttribute('src');
}"""  # looked up afresh each time: a Streamlit rerun may replace the nodes
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WAIT_MS = int(os.environ.get("WAIT_MS", 600_000))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command: list[str], health: str) -> subprocess.Popen:
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_CACHE": tempfile.mkdtemp()}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(health, timeout=2)
            return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit(f"{command[2]} did not start")


def steps(page, image: list[str], slider, repeats: int) -> list[float]:
    """Seconds from each step down (up, from the lowest) on `slider`, an input of type range, to a new src
    on the image that `image` finds (see IMAGE)."""
    seconds = []
    for _ in range(repeats):
        before = page.evaluate(IMAGE, image)
        start = time.perf_counter()
        lowest = slider.evaluate("e => Number(e.value) <= Number(e.min)")  # then back up one step
        slider.press("ArrowRight" if lowest else "ArrowLeft")
        page.wait_for_function(
            f"a => {{ const s = ({IMAGE})(a); return s && s !== a[3] }}", arg=[*image, before], timeout=WAIT_MS
        )
        seconds.append(time.perf_counter() - start)
    return seconds


def gradio(page, url: str, repeats: int) -> dict[str, list[float]]:
    page.goto(url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=WAIT_MS)
    page.locator("input[type=file]").first.set_input_files(str(PHOTO))
    page.get_by_label("ViT-S/16").uncheck()
    page.get_by_label("ViT-Ti/16").check()
    page.get_by_label("random (seeded)").check()
    page.locator("#image-input img").first.wait_for()
    page.get_by_role("button", name="Analyze").click()
    page.locator("#variance .js-plotly-plot").wait_for(timeout=WAIT_MS)
    view = ["#view-1", "", "img"]
    layer = steps(page, view, page.locator("#model-1 input[type=range]"), repeats)
    opacity = steps(page, view, page.get_by_label(f"range slider for {LABEL.opacity}"), repeats)
    return {"layer": layer, "opacity": opacity}


def streamlit(page, url: str, repeats: int) -> dict[str, list[float]]:
    page.goto(url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=WAIT_MS)
    page.locator("input[type=file]").first.set_input_files(str(PHOTO))
    page.locator("[data-testid=stFileChipName]", has_text=PHOTO.name).first.wait_for(timeout=60_000)
    page.locator("[data-testid=stFileChipIconSpinner]").first.wait_for(state="detached", timeout=60_000)
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=WAIT_MS)
    page.get_by_role("button", name="Analyze").click()
    page.get_by_role("slider", name=LABEL.layer).first.wait_for(timeout=WAIT_MS)  # shown once analyzed
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=WAIT_MS)
    layered = f"[aria-label={LABEL.layer}]"
    column = page.locator("[data-testid=stColumn]", has=page.locator(layered)).first
    image = ["[data-testid=stColumn]", layered, "[data-testid=stImage] img"]
    layer = steps(page, image, column.get_by_role("slider", name=LABEL.layer), repeats)
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=WAIT_MS)
    opacity = steps(page, image, page.get_by_role("slider", name=LABEL.opacity), repeats)
    return {"layer": layer, "opacity": opacity}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=8)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    g_port, s_port = free_port(), free_port()
    servers = [
        start([sys.executable, "-m", "app.gradio_app", "--port", str(g_port)], f"http://127.0.0.1:{g_port}"),
        start(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app/streamlit_server.py",
                "--server.port",
                str(s_port),
                "--server.headless",
                "true",
                "--server.address",
                "127.0.0.1",
            ],
            f"http://127.0.0.1:{s_port}/_stcore/health",
        ),
    ]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; {args.repeats} steps of each change")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for name, run, url in (
                ("Gradio", gradio, f"http://127.0.0.1:{g_port}"),
                ("Streamlit", streamlit, f"http://127.0.0.1:{s_port}"),
            ):
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                for change, seconds in run(page, url, args.repeats).items():
                    median, slowest = statistics.median(seconds), max(seconds)
                    print(f"{name:9s} {change:7s} change: median {median:.2f} s, slowest {slowest:.2f} s")
                page.close()
            browser.close()
    finally:
        for server in servers:
            server.terminate()


if __name__ == "__main__":
    main()

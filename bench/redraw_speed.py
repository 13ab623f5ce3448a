"""Redraw benchmark (not a test): how long a view change takes to show, in a real browser, per front end.

    .venv/bin/python bench/redraw_speed.py [--repeats 8]

Starts the Gradio and the Streamlit server offline on loopback ports, opens each in headless Chromium,
analyzes the sample photo with ResNet-50 and ViT-Ti/16 (random weights), then steps the ViT column's
layer slider down one layer at a time with the keyboard and times, per step, from the key press to the
moment the map's image has changed on the page. Prints the median and the slowest step per front end.
Target: under 1 s for both (a redraw runs no model: Streamlit re-draws one fragment, Gradio one event).
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
PHOTO = ROOT / "assets" / "samples" / "cat.jpg"
CHANGED = "([sel, before]) => { const i = document.querySelector(sel); return i && i.getAttribute('src') !== before }"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WAIT_MS = 600_000


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


def steps(page, image_selector: str, slider, repeats: int) -> list[float]:
    """Seconds from each ArrowLeft on `slider` to a new src on the image at `image_selector`."""
    seconds = []
    for _ in range(repeats):
        before = page.locator(image_selector).get_attribute("src")
        start = time.perf_counter()
        slider.press("ArrowLeft")
        page.wait_for_function(
            CHANGED,
            arg=[image_selector, before],
            timeout=WAIT_MS,
        )
        seconds.append(time.perf_counter() - start)
    return seconds


def gradio(page, url: str, repeats: int) -> list[float]:
    page.goto(url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=WAIT_MS)
    page.locator("input[type=file]").first.set_input_files(str(PHOTO))
    page.get_by_label("ViT-S/16").uncheck()
    page.get_by_label("ViT-Ti/16").check()
    page.get_by_label("random (seeded)").check()
    page.locator("#image-input img").first.wait_for()
    page.get_by_role("button", name="Analyze").click()
    page.locator("#variance .js-plotly-plot").wait_for(timeout=WAIT_MS)
    slider = page.locator("#model-1 input[type=range]")
    return steps(page, "#view-1 img", slider, repeats)


def streamlit(page, url: str, repeats: int) -> list[float]:
    page.goto(url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=WAIT_MS)
    page.locator("input[type=file]").first.set_input_files(str(PHOTO))
    page.locator("[data-testid=stFileChipName]", has_text=PHOTO.name).first.wait_for(timeout=60_000)
    page.locator("[data-testid=stFileChipIconSpinner]").first.wait_for(state="detached", timeout=60_000)
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=WAIT_MS)
    page.get_by_role("button", name="Analyze").click()
    slider = page.get_by_role("slider", name="Layer").first  # the ViT column's, once the analysis is shown
    slider.wait_for(timeout=WAIT_MS)
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=WAIT_MS)
    selector = "[data-testid=stColumn]:has([data-testid=stSlider]) [data-testid=stImage] img"
    return steps(page, selector, slider, repeats)


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
                "app/streamlit_app.py",
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
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; {args.repeats} layer steps each")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for name, run, url in (
                ("Gradio", gradio, f"http://127.0.0.1:{g_port}"),
                ("Streamlit", streamlit, f"http://127.0.0.1:{s_port}"),
            ):
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                seconds = run(page, url, args.repeats)
                print(f"{name:9s} redraw: median {statistics.median(seconds):.2f} s, slowest {max(seconds):.2f} s")
                page.close()
            browser.close()
    finally:
        for server in servers:
            server.terminate()


if __name__ == "__main__":
    main()

"""Front-end speed benchmark (not a test): Analyze and a computed map, timed in a real browser, Gradio against
Streamlit on the same machine.

    .venv/bin/python bench/front_end_speed.py [--repeats 3] [--method Occlusion]

Starts both servers offline (bench/redraw_speed.py's starters), opens each in headless Chromium with the default
models (offline: PreAct ResNet, AlterNet and ViT/4, trained on CIFAR-10), and, `--repeats` times, alternating
two sample photos (the same photo twice in a row would be a double click, which re-runs nothing):

- Analyze: from the click to the status line naming the photo, with the page drawn (Streamlit: its run ended);
- map: from the click on `--method` in the first column's open list to its caption naming it, with the page
  drawn.

The front ends run one after the other, not at once. Prints each median and slowest time, and Streamlit's
median over Gradio's (target: at most 1.2x).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for redraw_speed
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `app`

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from redraw_speed import CHROMIUM_ARGS, ROOT, WAIT_MS, free_port, start  # noqa: E402

from app.views.texts import LABEL  # noqa: E402

PHOTOS = [ROOT / "assets" / "samples" / name for name in ("cat.jpg", "coffee.jpg")]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"


class Gradio:
    def __init__(self, page, url: str) -> None:
        self.page = page
        page.goto(url)
        page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=WAIT_MS)

    def upload(self, photo: Path) -> None:
        self.page.locator("#image-input input[type=file]").first.set_input_files(str(photo))
        self.page.locator("#image-input img").first.wait_for(timeout=WAIT_MS)

    def settled(self) -> None:
        self.page.locator(".progress-text, .eta-bar").first.wait_for(state="detached", timeout=WAIT_MS)

    def analyzed(self, photo: Path) -> None:
        status = self.page.locator("#status")
        status.filter(has_text=re.compile(rf"Analyzed \d+ models? on {re.escape(photo.name)} in")).wait_for(
            timeout=WAIT_MS
        )
        self.settled()

    def offer(self, method: str):
        """The first column's list opened: the option `method`, to click."""
        self.page.locator("#model-0").get_by_role("combobox", name=LABEL.method).click()
        option = self.page.get_by_role("option", name=method, exact=True)
        option.wait_for(timeout=WAIT_MS)
        return option

    def drawn(self, method: str) -> None:
        self.page.locator("#model-0 .caption").filter(has_text=method).first.wait_for(timeout=WAIT_MS)
        self.settled()


class Streamlit:
    def __init__(self, page, url: str) -> None:
        self.page = page
        page.goto(url)
        page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=WAIT_MS)
        page.locator(IDLE).wait_for(timeout=WAIT_MS)

    def column(self):
        headed = self.page.locator("[data-testid=stColumn]").filter(has=self.page.locator("h3"))
        return headed.filter(visible=True).first

    def upload(self, photo: Path) -> None:
        self.page.locator("input[type=file]").first.set_input_files(str(photo))
        self.page.locator("[data-testid=stFileChipName]", has_text=photo.name).first.wait_for(timeout=WAIT_MS)
        self.page.locator("[data-testid=stFileChipIconSpinner]").first.wait_for(state="detached", timeout=WAIT_MS)
        self.page.locator(IDLE).wait_for(timeout=WAIT_MS)

    def settled(self) -> None:  # called once the page shows the new result: its run has started
        self.page.locator(IDLE).wait_for(timeout=WAIT_MS)

    def analyzed(self, photo: Path) -> None:
        said = re.compile(rf"Analyzed \d+ models? on {re.escape(photo.name)} in")
        self.page.locator("[data-testid=stExpander] summary").filter(has_text=said).first.wait_for(timeout=WAIT_MS)
        self.settled()

    def offer(self, method: str):
        """The first column's list opened (again, where a rerun starting just then closed it): the option `method`."""
        option = self.page.get_by_role("option", name=method, exact=True)
        for _ in range(3):
            self.page.locator(IDLE).wait_for(timeout=WAIT_MS)
            self.column().get_by_role("combobox", name=LABEL.method).click()
            try:
                option.wait_for(timeout=10_000)
                self.page.wait_for_timeout(500)  # not timed: a rerun starting now would close the list
                if option.is_visible() and self.page.locator(IDLE).count():
                    return option
            except PlaywrightTimeout:
                pass
            self.page.keyboard.press("Escape")
        raise SystemExit(f"the list of methods did not open: no {method!r}")

    def drawn(self, method: str) -> None:
        caption = self.column().locator("[data-testid=stImageCaption]").filter(has_text=method)
        caption.first.wait_for(timeout=WAIT_MS)
        self.settled()


def timed(act, wait) -> float:
    start = time.perf_counter()
    act()
    wait()
    return time.perf_counter() - start


def measure(front, repeats: int, method: str) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {"Analyze": [], method: []}
    for n in range(repeats):
        photo = PHOTOS[n % 2]
        front.upload(photo)
        click = front.page.get_by_role("button", name=LABEL.analyze).click
        seconds["Analyze"].append(timed(click, lambda: front.analyzed(photo)))
        option = front.offer(method)  # the list opened, not timed: the click on the method is
        seconds[method].append(timed(option.click, lambda: front.drawn(method)))
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--method", default="Occlusion")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; {args.repeats} of each")
    medians: dict[str, dict[str, float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name, front in (("Gradio", Gradio), ("Streamlit", Streamlit)):
            port = free_port()
            if name == "Gradio":
                server = start(
                    [sys.executable, "-m", "app.gradio_app", "--port", str(port)], f"http://127.0.0.1:{port}"
                )
            else:
                command = [sys.executable, "-m", "streamlit", "run", "app/streamlit_server.py", "--server.port"]
                command += [str(port), "--server.headless", "true", "--server.address", "127.0.0.1"]
                server = start(command, f"http://127.0.0.1:{port}/_stcore/health")
            try:
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                shown = front(page, f"http://127.0.0.1:{port}")
                for what, seconds in measure(shown, args.repeats, args.method).items():
                    median = medians.setdefault(what, {})[name] = statistics.median(seconds)
                    print(f"{name:9s} {what:12s} median {median:6.2f} s, slowest {max(seconds):6.2f} s")
                page.close()
            finally:
                server.terminate()
                server.wait(timeout=60)
        browser.close()
    for what, by in medians.items():
        ratio = by["Streamlit"] / by["Gradio"]
        print(f"{what:12s} Streamlit / Gradio: {ratio:.2f}x ({'within' if ratio <= 1.2 else 'over'} the 1.2x target)")


if __name__ == "__main__":
    main()

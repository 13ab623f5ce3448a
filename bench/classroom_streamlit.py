"""Classroom benchmark in Streamlit (not a test): bench/classroom.py's class of students, and its visitor running the
largest map the server admits all the while, on the real Streamlit server, each student a real page of one shared
headless Chromium; latency per step, errors and the server's memory.

    .venv/bin/python bench/classroom_streamlit.py [--students 10] [--minutes 6] [--after 120] [--no-big-map]
                                                  [--addresses bind|one]

Starts `streamlit run app/streamlit_server.py` offline on a free loopback port with the app's own limits (through
tests.conftest.streamlit_server, as bench/streamlit_uploads.py) and one headless Chromium that every page shares over
CDP; a first page warms the server (its first run starts the models' service, as the Gradio app does before it
answers) and is closed. Each student arrives in the first 40% of `--minutes` and runs in a thread of its own, with
its own Playwright connection to the browser and its own browser context (one Streamlit session); with a pause of a
few seconds between steps (about half the run over a whole journey, as classroom.py), it opens the page, uploads a
phone photo (its own copy of classroom.py's 12-megapixel JPEG), analyzes the default models (Analyze: offline the
CIFAR models, weights auto), asks for two maps (Saliency in the first column, Occlusion in the third), opens the
guided tour and walks it to its last step and back one, exports Fig 9 as a PNG (the Compare tab's Export figure,
then its download) and closes its page. With `--big-map` (the default) one more page keeps asking for the largest map
the server admits, as classroom.py's: Integrated Gradients with the most steps (the page's slider) on the biggest
model of classroom.py's list (typed as a timm model, random weights) that the server does not refuse, each time on a
new copy of the photo analyzed anew (a map is computed once per analysis and kept), until the last student has left;
its page is then closed, whatever it is computing.

Addresses: `bind` (default) sends each page through a TCP relay of its own whose connections to the server come from
the visitor's own loopback address (students 127.1.0.N, the big-map visitor 127.2.0.1), as classroom.py's `bind`
(a browser cannot choose its source address); `one`: every page straight from 127.0.0.1, a class behind one NAT.
The first page, which warms the server, comes straight from 127.0.0.1 in both.

A step is timed from its action to the page showing its result: Streamlit's run ended and the expected element shown
(the page's Analyze button, the photo named in use, the models' headings, the map's caption, the tour's step, the
download started). It fails on a timeout, or on an exception or a traceback then shown on the page. Prints a line per
student step and a summary every 30 s; at the end classroom.py's summary: each kind of step's count, median, p95 and
max latency (the tour's first step is its tab opened; the export's includes going back to the Compare tab), the big
maps, the errors (the first few messages, with the error boxes the page showed), the server's process-tree memory
(resident summed, and PSS: at the start, the peak sampled every second, and `--after` seconds after the last student
left) and the client addresses on its connections; then the server log's refusals and tracebacks, and the exit
status (1 when a step failed). Streamlit holds uploads in memory, in that tree: there is no upload folder to measure.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import urlsplit

from classroom import BIG_MAPS, KINDS, MAPS, TOUR_STEPS, Run, own_copy, phone_photo, report, sample
from playwright.sync_api import Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PageTimeout
from server import ROOT, stop_process
from streamlit_uploads import PICKER

sys.path.insert(0, str(ROOT))  # the repository, for the tests' Streamlit helpers and app's labels

from app.backend.service import OFFLINE_MODELS, WEIGHT_LABELS  # noqa: E402
from app.views.texts import LABEL  # noqa: E402
from engine.models.registry import get_spec  # noqa: E402
from tests.conftest import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402
from tests.test_journey import ANALYSIS_MS, REDRAW_MS, Streamlit  # noqa: E402

START_S = 60  # for Chromium to say where it listens
# as Playwright launches it: a page that is not in front is not slowed down
AWAKE = [
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
]
ERROR_BOX = "[data-testid=stAlertContentError]"  # st.error's box
BIG_METHOD = "Integrated Gradients"
DEFAULT_LABELS = [get_spec(name).label for name in OFFLINE_MODELS]  # the models the page ticks offline


class Relay:
    """TCP relays to the server's port, one per visitor address: a page sent through one reaches the server from that
    address (Linux accepts any 127.0.0.0/8 source), its WebSocket and its uploads alike."""

    def __init__(self, port: int) -> None:
        self.port, self.loop, self.listening = port, asyncio.new_event_loop(), []
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def url(self, address: str) -> str:
        """The address of a new relay whose connections to the server come from `address`."""

        async def listen() -> int:
            server = await asyncio.start_server(partial(self.pipe, address), "127.0.0.1", 0)
            self.listening.append(server)
            return server.sockets[0].getsockname()[1]

        return f"http://127.0.0.1:{asyncio.run_coroutine_threadsafe(listen(), self.loop).result()}"

    async def pipe(self, address: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(address, 0))
        except OSError:
            writer.close()
            return
        await asyncio.gather(copy(reader, upstream[1]), copy(upstream[0], writer))


async def copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes from `reader` to `writer` until either end closes; then `writer` closed."""
    try:
        while data := await reader.read(2**16):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


def source(n: int, block: int = 1) -> str:
    """Visitor `n`'s (from 0) loopback address in address block `block`, as classroom.py's."""
    return f"127.{block}.{(n + 1) // 250}.{(n + 1) % 250}"


@contextmanager
def chromium(folder: Path) -> Iterator[str]:
    """One headless Chromium (tests.conftest's) for every page: its CDP endpoint."""
    profile = folder / "chromium"
    command = [CHROMIUM, *CHROMIUM_ARGS, *AWAKE, "--remote-debugging-port=0", f"--user-data-dir={profile}"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        listening, deadline = profile / "DevToolsActivePort", time.monotonic() + START_S
        while len(listening.read_text().split() if listening.exists() else []) < 2:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"Chromium did not start (exit status {process.poll()})")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{listening.read_text().split()[0]}"
    finally:
        stop_process(process)


@contextmanager
def browsing(endpoint: str, url: str) -> Iterator[Streamlit]:
    """A page of its own browser context (one Streamlit session) in the shared Chromium, driven as tests/test_journey
    drives Streamlit; this thread's own Playwright (its sync API serves one thread). Closed on leaving."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(endpoint)
        context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        try:
            yield Streamlit(context.new_page(), url, Path(), Path())
        finally:
            context.close()
            browser.close()


def one_line(exc: BaseException) -> str:
    """`exc`'s message on one line, at most 200 characters."""
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def act(run: Run, front: Streamlit, who: str, kind: str, what: str, action: Callable[[], object]) -> None:
    """`action` timed under `kind`; failed when it raises (with the error boxes the page shows) or when the page then
    shows an exception or a traceback."""

    def checked() -> None:
        try:
            action()
        except Exception as exc:
            raise RuntimeError(f"{said(front.page)}{one_line(exc)}") from exc
        if broken := front.exceptions():
            raise RuntimeError(f"the page shows: {broken[0][:150]}")

    run.timed(who, kind, what, checked)


def said(page: Page) -> str:
    """The error boxes the page shows, as a prefix for a failure's message ('' when none)."""
    with suppress(Exception):
        if boxes := [" ".join(box.split()) for box in page.locator(ERROR_BOX).all_inner_texts()]:
            return f"the page says: {' | '.join(boxes)}; "
    return ""


def open_page(front: Streamlit) -> None:
    """The page loaded and its first run ended."""
    front.page.goto(front.url)
    front.page.get_by_role("button", name=LABEL.analyze).wait_for(timeout=ANALYSIS_MS)
    front.settle()


def upload(front: Streamlit, photo: Path) -> None:
    """`photo` uploaded, and the run that takes it ended: the photo picker says it is in use."""
    front.upload(photo)
    front.page.locator(PICKER).first.get_by_text(f"Using {photo.name}").wait_for(timeout=REDRAW_MS)
    front.settle()


def show_map(front: Streamlit, column: int, method: str) -> None:
    front.choose_method(column, method)
    expect(front.caption(column)).to_contain_text(f"{method} of", timeout=ANALYSIS_MS)


def tour_tab(front: Streamlit) -> None:
    front.tab("Guided tour")
    expect(front.tour_position()).to_contain_text("Step 1 of", timeout=REDRAW_MS)


def tour_step(front: Streamlit, move: str, number: int) -> None:
    front.tour_move(move)
    expect(front.tour_position()).to_contain_text(f"Step {number} of", timeout=REDRAW_MS)


def export(front: Streamlit) -> None:
    """Back to the Compare tab, Fig 9 exported as a PNG and its download started."""
    front.tab("Compare models")
    name = front.export_default_figure()
    if not name.endswith(".png"):
        raise RuntimeError(f"the export downloaded {name}, not a PNG")


def own_photo(photo: Path, folder: Path, who: str, name: str = "") -> Path:
    """A copy of `photo` of `who`'s own (other bytes, the same picture) named `name` (default: as `photo`)."""
    folder.mkdir(exist_ok=True)
    path = folder / (name or photo.name)
    path.write_bytes(own_copy(photo, f"{who} at {time.time()}"))
    return path


def journey(run: Run, endpoint: str, url: str, who: str, photo: Path, think: float, seed: int) -> None:
    """One student's visit, from opening the page to closing it; it gives up at its first error."""
    rng = random.Random(seed)

    def pause() -> None:
        time.sleep(rng.uniform(0.5, 1.5) * think)

    def step(kind: str, what: str, action: Callable[[], object]) -> None:
        pause()
        act(run, front, who, kind, what, action)

    with run.lock:
        run.present += 1
    try:
        with browsing(endpoint, url) as front:
            act(run, front, who, "open", "opened the page", lambda: open_page(front))
            step("upload", "uploaded the photo", lambda: upload(front, photo))
            step("analyze", "analyzed the default models", lambda: front.analyze(DEFAULT_LABELS))
            for column, method in MAPS:
                step("map", f"{method} map", lambda: show_map(front, column, method))
            step("tour", "opened the guided tour", lambda: tour_tab(front))
            for number in range(2, TOUR_STEPS + 1):
                step("tour", f"tour step {number}", lambda: tour_step(front, "next", number))
            step("tour", f"tour back to step {TOUR_STEPS - 1}", lambda: tour_step(front, "back", TOUR_STEPS - 1))
            step("export", "exported a figure", lambda: export(front))
    except Exception:
        run.say(f"{who}: gave up")
    finally:
        with run.lock:
            run.present, run.left = run.present - 1, run.left + 1
        run.say(f"{who}: left")


def big_page(front: Streamlit) -> None:
    """The page opened with no model ticked and random weights: only a typed model is analyzed."""
    open_page(front)
    for label in front.ticked():
        front.untick(label)
    weights = front.page.locator("[data-testid=stRadio]").filter(has_text=LABEL.weights)
    weights.get_by_text(WEIGHT_LABELS["random"]).click()
    front.settle()


def big_analysis(front: Streamlit, model: str, steps: int, photo: Path) -> None:
    """`model` typed, `photo` uploaded and analyzed with it, and Integrated Gradients' steps set to `steps`."""
    typed = front.page.get_by_role("textbox", name=LABEL.typed_models)
    if typed.input_value() != model:
        front.settle()
        typed.fill(model)
        typed.press("Enter")
        front.settle()
    upload(front, photo)
    front.analyze([get_spec(model).label])
    slider = front.page.locator("[data-testid=stSlider]").filter(has_text=LABEL.ig_steps).get_by_role("slider")
    while (now := slider.input_value()) != str(steps):  # one key at a time: a key may be lost
        front.settle()
        slider.focus()
        slider.press("ArrowLeft" if int(now) > steps else "ArrowRight")
        expect(slider).not_to_have_value(now)
    front.settle()


def big_map_done(front: Streamlit, stop: threading.Event) -> bool:
    """Whether the map asked for in the first column was shown before `stop` was set; the column's error raised."""
    shown = front.column(0).locator("[data-testid=stImageCaption]", has_text=f"{BIG_METHOD} of")
    refused = front.column(0).locator(ERROR_BOX)
    while not stop.is_set():
        with suppress(PageTimeout):
            shown.or_(refused).first.wait_for(timeout=1000)
            if refused.count():
                raise RuntimeError("no map")  # the error box is said with the failure
            return True
    return False


def big_visitor(run: Run, endpoint: str, url: str, who: str, photo: Path, stop: threading.Event) -> None:
    """The largest admitted map, one after another until `stop`: for each, a new copy of the photo analyzed with the
    candidate model, then its Integrated Gradients map in the first column. A refusal as too long, or three failures
    in a row, moves to the next candidate of BIG_MAPS."""
    candidates, failures, rounds = list(BIG_MAPS), 0, 0
    with browsing(endpoint, url) as front:
        try:
            big_page(front)
        except Exception as exc:
            run.errors.append(f"big map: {said(front.page)}{one_line(exc)}")
            return
        while candidates and not stop.is_set():
            (model, steps), rounds = candidates[0], rounds + 1
            label, started = f"{BIG_METHOD}, {steps} steps, on {model}", time.monotonic()
            try:
                big_analysis(front, model, steps, own_photo(photo, photo.parent / "big", who, f"big-{rounds}.jpg"))
                started = time.monotonic()
                front.choose_method(0, BIG_METHOD, wait=False)
                if not big_map_done(front, stop):
                    run.say(f"{who}: {label}: cancelled after {time.monotonic() - started:.0f} s, the class left")
                    break
            except Exception as exc:
                failures = run.big_map_failed(who, label, started, f"{said(front.page)}{one_line(exc)}"[:300], failures)
                if not failures:
                    candidates.pop(0)
                continue
            failures = run.big_map_done(who, label, started)


def summary(run: Run, stop: threading.Event) -> None:
    """Every 30 s, a line saying where the run stands."""
    while not stop.wait(30):
        done = sum(len(v) for v in run.latencies.values())
        run.say(
            f"-- {run.present} students in class, {run.left} left; {done} steps, {len(run.errors)} errors, "
            f"{len(run.big_maps)} big maps; server {run.memory.now:,.0f} MB (peak {run.memory.peak:,.0f})"
        )


def classroom(args: argparse.Namespace, url: str, pid: int, endpoint: str, photo: Path) -> Run:
    """The class and the big-map visitor on the server at `url` (process `pid`); what the run measured."""
    port = urlsplit(url).port
    relay = Relay(port) if args.addresses == "bind" else None

    def entrance(address: str) -> str:
        """Where a visitor from `address` opens the page."""
        return relay.url(address) if relay else url

    run, stop_sampling, stop_big = Run(), threading.Event(), threading.Event()
    background = [
        threading.Thread(target=sample, args=(run, pid, None, port, stop_sampling), daemon=True),
        threading.Thread(target=summary, args=(run, stop_sampling), daemon=True),
    ]
    for thread in background:
        thread.start()
    time.sleep(1.5)
    heavy = None
    if args.big_map:
        visit = (run, endpoint, entrance(source(0, block=2)), "big-map visitor", photo, stop_big)
        heavy = threading.Thread(target=big_visitor, args=visit)
        heavy.start()
    seconds = args.minutes * 60
    think = max(1.0, 0.5 * seconds / (len(KINDS) + len(MAPS) + TOUR_STEPS + 1))
    rng = random.Random(1)
    arrivals = sorted(rng.uniform(0, 0.4 * seconds) for _ in range(args.students))
    students = []
    for n, at in enumerate(arrivals):
        time.sleep(max(0.0, run.began + at - time.monotonic()))
        who = f"student {n + 1:02d}"
        own = own_photo(photo, photo.parent / f"student-{n + 1:02d}", who)
        thread = threading.Thread(target=journey, args=(run, endpoint, entrance(source(n)), who, own, think, n))
        thread.start()
        students.append(thread)
    for thread in students:
        thread.join()
    run.say(f"the last student left{'; the big-map visitor stops' if heavy else ''}; waiting {args.after:g} s")
    stop_big.set()
    if heavy:
        heavy.join()
    time.sleep(args.after)
    stop_sampling.set()
    for thread in background:
        thread.join()
    return run


def warm(endpoint: str, url: str) -> float:
    """Seconds for a first page to load and end its first run (the server starts the models' service then)."""
    began = time.monotonic()
    with browsing(endpoint, url) as front:
        open_page(front)
    return time.monotonic() - began


def server_log(log: Path) -> None:
    """The server log's refusals and tracebacks, with the first few."""
    lines = log.read_text(errors="replace").splitlines()
    for what, word in (("refusals", "refused"), ("tracebacks", "Traceback")):
        found = [line for line in lines if word in line]
        print(f"server log: {len(found)} {what}" + "".join(f"\n  {line[:200]}" for line in found[:5]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=10)
    p.add_argument("--minutes", type=float, default=6, help="the class's length; arrivals in its first 40%%")
    p.add_argument("--after", type=float, default=120, help="seconds to measure after the last student left")
    p.add_argument("--big-map", action=argparse.BooleanOptionalAction, default=True, help="the big-map visitor")
    p.add_argument("--addresses", choices=["bind", "one"], default="bind")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a killed bench stops its server and browser
    with tempfile.TemporaryDirectory(prefix="classroom-streamlit-") as scratch:
        folder, began = Path(scratch), time.monotonic()
        photo, log = phone_photo(folder), folder / "streamlit.log"
        with streamlit_server(log) as server, chromium(folder) as endpoint:
            print(f"server {server.url} (pid {server.pid}) up in {time.monotonic() - began:.0f} s", flush=True)
            print(f"a first page loaded in {warm(endpoint, server.url):.0f} s", flush=True)
            print(
                f"photo {photo.stat().st_size / 2**20:.1f} MB; {args.students} students over {args.minutes:g} min, "
                f"addresses: {args.addresses}, big map: {'on' if args.big_map else 'off'}",
                flush=True,
            )
            run = classroom(args, server.url, server.pid, endpoint, photo)
        report(run, args.after, args.students, args.addresses)
        server_log(log)
    status = 1 if run.errors else 0
    print(f"whole run {time.monotonic() - began:.0f} s; exit status {status}")
    sys.exit(status)


if __name__ == "__main__":
    main()

"""Classroom benchmark (not a test): a class of students on one hosted server at once, with one visitor running the
largest map the server admits all the while; latency per step, errors, the server's memory and its upload folder.

    .venv/bin/python bench/classroom.py [--students 30] [--minutes 10] [--after 120] [--no-big-map]
                                        [--port N | --url URL]
                                        [--addresses bind|forwarded] [--check-addresses]

Starts `python -m app.gradio_app` offline on a free loopback port with its own upload folder (GRADIO_TEMP_DIR) and
the app's own limits (`--url`: a running server instead; its memory and folder are measured only with `--pid` and
`--uploads`). Each student comes from its own address and arrives in the first 40% of `--minutes`; with a pause of
a few seconds between steps (about half the run over a whole journey, as a class reading the page), it opens the
page (gradio_client: one session), uploads a phone photo (a 12-megapixel JPEG made once from a sample photo, with
noise so that it compresses like a photo), analyzes the default models (`/run`, the page's Analyze: offline the
CIFAR models, weights auto), asks for two maps (the page's map controls: Saliency in the first column, Occlusion in
the third), walks the guided tour (`/tour_next` to the last step, then `/tour_back`), exports a figure
(`/export_figure`, Fig 9 as a PNG) and leaves (its heartbeat stops, as when a page is closed). Meanwhile one more
visitor, from its own address, keeps asking for the largest map the server admits: Integrated Gradients with the
most steps on the biggest model of a list (ViT-B/16, then ResNet-50, random weights) that the server does not refuse
as over its time limit, one map after another, until the last student has left.

Addresses: `bind` (default) binds each client's connections to its own loopback source address (students
127.1.0.N, the big-map visitor 127.2.0.1; Linux accepts any 127.0.0.0/8 source), patching gradio_client's
module-level httpx calls, which do not take a transport; `forwarded` sends an X-Forwarded-For of 10.1.0.N instead,
the started server trusting 127.0.0.1 (VIT_EXPLORER_TRUSTED_PROXIES). `--check-addresses` first sends 14
/analyze calls at once from one address, then 14 from 14 addresses, and counts the per-address refusals (the limit
is 12): only the first should have any.

Prints a line per student step and a summary every 30 s; at the end each kind of step's count, median, p95 and max
latency, the big maps, the errors (the first few messages), the server's process-tree memory (start, peak sampled
every second, and `--after` seconds after the last student left), the upload folder's size (start, peak, end) and
the client addresses seen on the server's connections.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import tempfile
import threading
import time
import types
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

import gradio_client.client
import httpx
import numpy as np
from gradio_client import Client
from PIL import Image
from server import ROOT, free_port, gradio_server, tree_mb

SAMPLE = ROOT / "assets" / "samples" / "cat.jpg"
MODELS = ["preact_resnet", "alternet", "vit_cifar"]  # app.backend.service's offline defaults
MAPS = [(0, "Saliency"), (2, "Occlusion")]  # (column, method) a student asks for
FIGURE = "fig9-variance"
TOUR_STEPS = 7  # app.tabs.tour.KEYS
KINDS = ["open", "upload", "analyze", "map", "tour", "export"]
# the big map, largest first: (model, Integrated Gradients steps); the first the server admits is kept
BIG_MAPS = [
    ("vit_base_patch16_224", 128),
    ("vit_base_patch16_224", 64),
    ("resnet50", 128),
    ("vit_base_patch16_224", 32),
    ("resnet50", 64),
    ("resnet50", 32),
    ("resnet50", 8),
]
TOO_LONG = ("would take", "allows")  # words of the server's refusal of a map over its time or memory budget


@dataclass
class Visitor:
    """Who a client is to the server: connections bound to `address`, or `forwarded` as X-Forwarded-For."""

    name: str
    address: str | None = None
    forwarded: str | None = None
    transport: Bound | None = None

    def __post_init__(self) -> None:
        self.transport = Bound(self.address) if self.address else None

    def httpx_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"timeout": httpx.Timeout(600)}
        if self.transport:
            kwargs["transport"] = self.transport
        if self.forwarded:
            kwargs["headers"] = {"X-Forwarded-For": self.forwarded}
        return kwargs

    def client(self, url: str, downloads: Path) -> Client:
        kwargs = self.httpx_kwargs()
        headers = kwargs.pop("headers", None)
        return Client(url, verbose=False, headers=headers, download_files=str(downloads), httpx_kwargs=kwargs)

    def leave(self, client: Client | None) -> None:
        """`client` closed (its heartbeat stops, as when a page is closed), then this visitor's connections."""
        if client is not None:
            client.close()
        if self.transport:
            self.transport.shut()


def visitor(n: int, mode: str, block: int = 1, name: str = "") -> Visitor:
    """Student `n` (from 0) of address block `block`: 127.<block>.x.y, or 10.<block>.x.y forwarded."""
    host = f"{block}.{(n + 1) // 250}.{(n + 1) % 250}"
    name = name or f"student {n + 1:02d}"
    return Visitor(name, f"127.{host}") if mode == "bind" else Visitor(name, forwarded=f"10.{host}")


class Bound(httpx.HTTPTransport):
    """Connections from one local source address; left open when a client using it closes (gradio_client opens
    a client per request), so one pool serves all of a visitor's clients, until `shut`."""

    def __init__(self, address: str) -> None:
        super().__init__(local_address=address)

    def __enter__(self) -> Bound:
        return self

    def __exit__(self, *_) -> None:
        pass

    def close(self) -> None:
        pass

    def shut(self) -> None:
        super().close()


_CLIENT_ARGUMENTS = ("cookies", "auth", "proxy", "timeout", "follow_redirects", "verify", "trust_env")


def _through(transport: httpx.BaseTransport, kwargs: dict) -> httpx.Client:
    """A client on `transport`, taking the client-level arguments out of a module-level call's `kwargs`."""
    return httpx.Client(transport=transport, **{k: kwargs.pop(k) for k in _CLIENT_ARGUMENTS if k in kwargs})


def _request(method: str, url: str, *, transport: httpx.BaseTransport | None = None, **kwargs) -> httpx.Response:
    if transport is None:
        return httpx.request(method, url, **kwargs)
    with _through(transport, kwargs) as client:
        return client.request(method, url, **kwargs)


@contextlib.contextmanager
def _stream(method: str, url: str, *, transport: httpx.BaseTransport | None = None, **kwargs) -> Iterator:
    if transport is None:
        with httpx.stream(method, url, **kwargs) as response:
            yield response
        return
    with _through(transport, kwargs) as client, client.stream(method, url, **kwargs) as response:
        yield response


def bind_gradio_client() -> None:
    """Let gradio_client's `httpx_kwargs` carry a `transport`: its httpx.Client calls take one, but its module-level
    httpx.get, post and stream do not; they are routed through a client on that transport (gradio_client's own
    module sees this copy of httpx, nothing else does)."""
    shim = types.ModuleType("httpx")
    shim.__dict__.update(vars(httpx))
    shim.get = lambda url, **kwargs: _request("GET", url, **kwargs)
    shim.post = lambda url, **kwargs: _request("POST", url, **kwargs)
    shim.stream = _stream
    gradio_client.client.httpx = shim


def phone_photo(folder: Path, seed: int = 0) -> Path:
    """A 4000x3000 JPEG of the sample cat with sensor-like noise: it compresses as a phone photo does (~2 MB)."""
    small = Image.open(SAMPLE).convert("RGB").resize((1000, 750), Image.Resampling.BICUBIC)
    pixels = np.asarray(small.resize((4000, 3000), Image.Resampling.BICUBIC), dtype=np.int16)
    noise = np.random.default_rng(seed).normal(0, 5, pixels.shape).astype(np.int16)
    path = folder / "IMG_0001.jpg"
    Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8)).save(path, quality=90)
    return path


def own_copy(photo: Path, who: str) -> bytes:
    """`photo`'s JPEG with a comment naming `who` after its start marker: the same picture, other bytes (Gradio
    stores uploads by content hash, so identical photos would share one file)."""
    data, comment = photo.read_bytes(), f"taken by {who}".encode()
    return data[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + data[2:]


def upload(url: str, who: Visitor, photo: Path) -> dict:
    """The visitor's own copy of the photo as the page uploads it (POST /gradio_api/upload), as a file the server's
    events accept; without gradio's FileData mark, so that gradio_client does not upload it again."""
    kwargs, data = who.httpx_kwargs(), own_copy(photo, f"{who.name} at {time.time()}")
    with httpx.Client(transport=kwargs.pop("transport", None), **kwargs) as client:
        answer = client.post(f"{url}/gradio_api/upload", files=[("files", (photo.name, data, "image/jpeg"))])
    answer.raise_for_status()
    return {"path": answer.json()[0], "orig_name": photo.name}


def folder_mb(folder: Path) -> float:
    """Bytes of every file under `folder`, in MB."""
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            total += path.stat().st_size if path.is_file() else 0
    return total / 2**20


def folder_kinds(folder: Path) -> str:
    """What the files under `folder` are, by suffix: '3.1 MB in 40 .webp, 0.4 MB in 2 .png'."""
    kinds: dict[str, list[int]] = defaultdict(list)
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                kinds[path.suffix or path.name].append(path.stat().st_size)
    ordered = sorted(kinds.items(), key=lambda kind: -sum(kind[1]))
    return ", ".join(f"{sum(sizes) / 2**20:.1f} MB in {len(sizes)} {suffix}" for suffix, sizes in ordered) or "empty"


def peers(port: int) -> set[str]:
    """The client addresses of this machine's IPv4 TCP connections to local `port` (from /proc/net/tcp)."""
    found = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            local, remote = line.split()[1:3]
            if int(local.split(":")[1], 16) == port:
                found.add(".".join(str(b) for b in reversed(bytes.fromhex(remote.split(":")[0]))))
    return found - {"0.0.0.0"}  # the listening socket


@dataclass
class Range:
    """A quantity sampled over the run: its first value, largest, and latest."""

    start: float | None = None
    peak: float = 0.0
    now: float = 0.0

    def add(self, value: float) -> None:
        self.start = value if self.start is None else self.start
        self.peak, self.now = max(self.peak, value), value


@dataclass
class Run:
    """What the run measured, shared by every thread."""

    began: float = field(default_factory=time.monotonic)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    big_maps: list[tuple[str, float]] = field(default_factory=list)
    memory: Range = field(default_factory=Range)
    shared: Range = field(default_factory=Range)  # the tree's memory with shared pages counted once (PSS)
    folder: Range = field(default_factory=Range)
    addresses: set[str] = field(default_factory=set)
    present: int = 0
    left: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def say(self, line: str) -> None:
        print(f"[{time.monotonic() - self.began:5.0f} s] {line}", flush=True)

    def big_map_failed(self, who: str, label: str, started: float, message: str, failures: int) -> int:
        """Note a big map refused or failed; the failures in a row now, 0 when its model is to be given up (refused
        as over the server's limits, or 3 failures): the next, smaller one is tried."""
        seconds = time.monotonic() - started
        failures = 3 if any(word in message for word in TOO_LONG) else failures + 1
        if failures < 3:
            with self.lock:
                self.errors.append(f"big map: {message}")
        self.say(f"{who}: {label} refused or failed after {seconds:.0f} s: {message}")
        if failures >= 3:
            return 0
        time.sleep(5)
        return failures

    def big_map_done(self, who: str, label: str, started: float) -> int:
        """Note a big map finished; the failures in a row now (0)."""
        seconds = time.monotonic() - started
        with self.lock:
            self.big_maps.append((label, seconds))
        self.say(f"{who}: {label} in {seconds:.0f} s")
        return 0

    def timed(self, who: str, kind: str, what: str, call: Callable[[], Any]) -> Any:
        """`call()`'s result, its latency counted under `kind`; an error counted, printed and raised."""
        start = time.monotonic()
        try:
            result = call()
        except Exception as exc:
            message = " ".join(str(exc).split())[:200] or type(exc).__name__
            with self.lock:
                self.errors.append(f"{kind}: {message}")
            self.say(f"{who}: {what} FAILED after {time.monotonic() - start:.1f} s: {message}")
            raise
        seconds = time.monotonic() - start
        with self.lock:
            self.latencies[kind].append(seconds)
        self.say(f"{who}: {what} {seconds:.1f} s")
        return result


def journey(run: Run, url: str, who: Visitor, photo: Path, think: float, downloads: Path, seed: int) -> None:
    """One student's visit, from opening the page to leaving; it gives up at its first error."""
    rng = random.Random(seed)

    def pause() -> None:
        time.sleep(rng.uniform(0.5, 1.5) * think)

    with run.lock:
        run.present += 1
    client = None
    try:
        client = run.timed(who.name, "open", "opened the page", lambda: who.client(url, downloads))
        pause()
        photo_data = run.timed(who.name, "upload", "uploaded the photo", lambda: upload(url, who, photo))
        pause()
        run.timed(
            who.name,
            "analyze",
            "analyzed the default models",
            lambda: client.predict(photo_data, MODELS, "auto", "inferno", 0.6, True, "", api_name="/run"),
        )
        for column, method in MAPS:
            pause()
            run.timed(
                who.name, "map", f"{method} map", lambda: client.predict(method=method, api_name=f"/view_{column}")
            )
        for step in range(2, TOUR_STEPS + 1):
            pause()
            run.timed(who.name, "tour", f"tour step {step}", lambda: client.predict(api_name="/tour_next"))
        pause()
        run.timed(
            who.name, "tour", f"tour back to step {TOUR_STEPS - 1}", lambda: client.predict(api_name="/tour_back")
        )
        pause()
        run.timed(
            who.name, "export", "exported a figure", lambda: client.predict(FIGURE, "png", api_name="/export_figure")
        )
    except Exception:
        run.say(f"{who.name}: gave up")
    finally:
        who.leave(client)
        with run.lock:
            run.present, run.left = run.present - 1, run.left + 1
        run.say(f"{who.name}: left")


def big_visitor(run: Run, url: str, who: Visitor, photo: Path, stop: threading.Event, downloads: Path) -> None:
    """The largest admitted map, one after another until `stop`: for each, the page's Analyze with the candidate
    model typed (random weights; a new analysis, since a map is computed once per analysis and kept), then its
    Integrated Gradients map in the first column. A refusal as too long, or three failures in a row, moves to the
    next candidate of BIG_MAPS."""
    try:
        client = who.client(url, downloads)
        photo_data = upload(url, who, photo)
    except Exception as exc:
        run.errors.append(f"big map: {' '.join(str(exc).split())[:200]}")
        return
    candidates, failures = list(BIG_MAPS), 0
    while candidates and not stop.is_set():
        model, steps = candidates[0]
        label, started = f"Integrated Gradients, {steps} steps, on {model}", time.monotonic()
        try:
            client.predict(photo_data, [], "random", "inferno", 0.6, True, model, api_name="/run")
            started = time.monotonic()
            job = client.submit(steps=steps, method="Integrated Gradients", api_name="/view_0")
            while not job.done() and not stop.is_set():
                time.sleep(0.5)
            if not job.done():
                job.cancel()
                run.say(f"{who.name}: {label}: cancelled after {time.monotonic() - started:.0f} s, the class has left")
                break
            job.result()
        except Exception as exc:
            failures = run.big_map_failed(who.name, label, started, " ".join(str(exc).split())[:200], failures)
            if not failures:
                candidates.pop(0)
            continue
        failures = run.big_map_done(who.name, label, started)
    who.leave(client)


def sample(run: Run, pid: int | None, uploads: Path | None, port: int | None, stop: threading.Event) -> None:
    """Every second: the server's process tree, its upload folder and the addresses connected to it."""
    while not stop.is_set():
        if pid:
            run.memory.add(tree_mb(pid))
            run.shared.add(tree_mb(pid, "pss"))
        if uploads:
            run.folder.add(folder_mb(uploads))
        if port:
            run.addresses |= peers(port)
        stop.wait(1)


def summary(run: Run, stop: threading.Event) -> None:
    """Every 30 s, a line saying where the run stands."""
    while not stop.wait(30):
        done = sum(len(v) for v in run.latencies.values())
        run.say(
            f"-- {run.present} students in class, {run.left} left; {done} steps, {len(run.errors)} errors, "
            f"{len(run.big_maps)} big maps; server {run.memory.now:,.0f} MB (peak {run.memory.peak:,.0f}), "
            f"uploads {run.folder.now:,.1f} MB"
        )


def check_addresses(url: str, mode: str, photo: Path, downloads: Path, count: int = 14) -> None:
    """`count` /analyze calls at once from one address, then from `count` addresses: the refusals for the
    address (past its limit of requests waiting or running) of each."""
    for label, visitors in (
        ("one address", [visitor(0, mode, block=3)] * count),
        (f"{count} addresses", [visitor(n, mode, block=3) for n in range(count)]),
    ):
        file = upload(url, visitors[0], photo)  # anew: the last batch's sessions deleted theirs on leaving
        clients = [who.client(url, downloads) for who in visitors]
        outcomes: list[str] = []
        gate = threading.Barrier(count)

        def call(client: Client) -> None:
            gate.wait()
            try:
                client.predict(file, MODELS, "auto", api_name="/analyze")
                outcomes.append("ok")
            except Exception as exc:
                outcomes.append(str(exc))

        threads = [threading.Thread(target=call, args=(client,)) for client in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for who, client in zip(visitors, clients):
            who.leave(client)
        refused = [o for o in outcomes if "your address" in o or "429" in o]
        others = [o for o in outcomes if o != "ok" and o not in refused]
        print(
            f"address check, {count} /analyze at once from {label}: {outcomes.count('ok')} served, "
            f"{len(refused)} refused for the address"
            + (f", {len(others)} other errors: {others[0][:150]}" if others else ""),
            flush=True,
        )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(run: Run, after: float, students: int, mode: str) -> None:
    print("\nstep      count  median     p95     max")
    for kind in KINDS:
        values = run.latencies.get(kind, [])
        if values:
            print(
                f"{kind:8} {len(values):6d} {statistics.median(values):6.2f} s "
                f"{percentile(values, 0.95):6.2f} s {max(values):6.2f} s"
            )
        else:
            print(f"{kind:8} {0:6d}")
    labels = sorted({label for label, _ in run.big_maps})
    for label in labels:
        times = [s for name, s in run.big_maps if name == label]
        print(f"big map: {label}: {len(times)} done, median {statistics.median(times):.0f} s, max {max(times):.0f} s")
    if not labels:
        print("big map: none finished")
    print(f"errors: {len(run.errors)}" + "".join(f"\n  {e}" for e in run.errors[:8]))
    if run.memory.start is not None:
        print(
            f"server process tree: {run.memory.start:,.0f} MB at start, peak {run.memory.peak:,.0f} MB, "
            f"{run.memory.now:,.0f} MB {after:.0f} s after the last student left (resident, summed)"
        )
        print(
            f"the same counting shared pages once (PSS): {run.shared.start:,.0f} MB, peak {run.shared.peak:,.0f} MB, "
            f"{run.shared.now:,.0f} MB"
        )
    if run.folder.start is not None:
        print(
            f"upload folder: {run.folder.start:,.1f} MB at start, peak {run.folder.peak:,.1f} MB, "
            f"{run.folder.now:,.1f} MB at the end"
        )
    if run.addresses:
        shown = sorted(run.addresses, key=lambda a: tuple(int(p) for p in a.split(".")))
        listed = ", ".join(shown) if len(shown) <= 8 else f"{', '.join(shown[:4])}, ..., {', '.join(shown[-2:])}"
        print(f"client addresses on the server's connections: {len(shown)} ({listed})")
    if mode == "forwarded":
        print(f"addresses: X-Forwarded-For 10.1.0.1-10.1.0.{students}, believed from 127.0.0.1")


def classroom(
    url: str, args: argparse.Namespace, pid: int | None, uploads: Path | None, port: int | None, scratch: Path
) -> None:
    photo = phone_photo(scratch)
    downloads = scratch / "downloads"
    print(
        f"server {url}; photo {photo.stat().st_size / 2**20:.1f} MB, {'x'.join(map(str, Image.open(photo).size))}; "
        f"{args.students} students over {args.minutes:g} min, addresses: {args.addresses}",
        flush=True,
    )
    if args.check_addresses:
        check_addresses(url, args.addresses, photo, downloads)
    run, stop_sampling, stop_big = Run(), threading.Event(), threading.Event()
    background = [
        threading.Thread(target=sample, args=(run, pid, uploads, port, stop_sampling), daemon=True),
        threading.Thread(target=summary, args=(run, stop_sampling), daemon=True),
    ]
    for thread in background:
        thread.start()
    time.sleep(1.5)
    big = visitor(0, args.addresses, block=2, name="big-map visitor")
    heavy = threading.Thread(target=big_visitor, args=(run, url, big, photo, stop_big, downloads))
    if args.big_map:
        heavy.start()
    seconds = args.minutes * 60
    think = max(1.0, 0.5 * seconds / (len(KINDS) + len(MAPS) + TOUR_STEPS + 1))
    rng = random.Random(1)
    arrivals = sorted(rng.uniform(0, 0.4 * seconds) for _ in range(args.students))
    students = []
    for n, at in enumerate(arrivals):
        time.sleep(max(0.0, run.began + at - time.monotonic()))
        who = visitor(n, args.addresses)
        thread = threading.Thread(target=journey, args=(run, url, who, photo, think, downloads, n))
        thread.start()
        students.append(thread)
    for thread in students:
        thread.join()
    run.say(f"the last student left; the big-map visitor stops; waiting {args.after:g} s")
    stop_big.set()
    if args.big_map:
        heavy.join()
    time.sleep(args.after)
    stop_sampling.set()
    for thread in background:
        thread.join()
    report(run, args.after, args.students, args.addresses)
    if uploads:
        print(f"left in the upload folder: {folder_kinds(uploads)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--minutes", type=float, default=10, help="the class's length; arrivals in its first 40%%")
    p.add_argument("--after", type=float, default=120, help="seconds to measure after the last student left")
    p.add_argument("--no-big-map", dest="big_map", action="store_false", help="no visitor running the largest map")
    p.add_argument("--url", help="a running server instead of starting one")
    p.add_argument("--pid", type=int, help="with --url: the server's process, to measure its memory")
    p.add_argument("--uploads", type=Path, help="with --url: its upload folder (GRADIO_TEMP_DIR), to measure")
    p.add_argument("--port", type=int, default=0, help="the started server's port (default: a free one)")
    p.add_argument("--addresses", choices=["bind", "forwarded"], default="bind")
    p.add_argument("--check-addresses", action="store_true", help="first check the server tells the addresses apart")
    args = p.parse_args()
    if args.addresses == "bind":
        bind_gradio_client()
    with tempfile.TemporaryDirectory(prefix="classroom-") as scratch:
        scratch_path = Path(scratch)
        if args.url:
            url = args.url.rstrip("/")
            local = urlsplit(url).hostname in ("127.0.0.1", "localhost")
            port = urlsplit(url).port if local else None
            classroom(url, args, args.pid, args.uploads, port, scratch_path)
            return
        port, uploads, log = args.port or free_port(), scratch_path / "uploads", scratch_path / "server.log"
        uploads.mkdir()
        settings = {
            "GRADIO_TEMP_DIR": str(uploads),
            "VIT_EXPLORER_MAX_PER_ADDRESS": None,  # the app's own limit: the students' addresses are their own
            "VIT_EXPLORER_TRUSTED_PROXIES": "127.0.0.1" if args.addresses == "forwarded" else None,
        }
        with gradio_server(port, settings, log) as server:
            classroom(f"http://127.0.0.1:{port}", args, server.pid, uploads, port, scratch_path)
        refusals = [line for line in log.read_text(errors="replace").splitlines() if "refused" in line]
        print(f"server log: {len(refusals)} refusals" + "".join(f"\n  {line[:200]}" for line in refusals[:5]))


if __name__ == "__main__":
    main()

"""Session memory benchmark (not a test): what each open page session keeps on the real Gradio server after it has
analysed a 12-megapixel phone photo on two models, measured two ways.

    .venv/bin/python bench/session_memory.py [--sessions 20] [--models resnet18 vit_tiny_patch16_224]
                                             [--map Saliency] [--port N]

Starts the Gradio app (`app.gradio_app.main`, offline, random weights, as bench/server.py starts it) in a process of
its own through this script's `--serve`, which adds one thing to the server: on asking (a file beside its report),
it writes the deep size of each page session's stored state (Gradio's `state_holder`, app.server.gradio_adapter's
`sessions`: the runs, the views and every value Gradio keeps of the page's components) without what the sessions
share (the page, the models, the code), by app.server.sizes.kept_bytes, the measure tests/test_session_memory.py
bounds. A warm-up session loads the models first; then `--sessions` clients (gradio_client, one page session each)
each upload their own copy of a 4000x3000 JPEG, press Analyze (`/run`) with the two models typed in, random
weights, and ask for one `--map` in the first column ('' for none), and stay open. Prints, per session, the
server's resident memory grown since the previous session (/proc) and that session's kept state; then their
medians and the growth per session over all of them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository, for the app (--serve) and its sizing

import httpx  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402
from server import free_port, stop_process, tree_mb, wait_until_up  # noqa: E402

MODELS = ["resnet18", "vit_tiny_patch16_224"]  # small timm models, random weights (typed, as a visitor types them)
ASK_SUFFIX = ".ask"
MB = 2**20


def phone_photo(folder: Path, seed: int = 0) -> Path:
    """A 4000x3000 JPEG (12 MP): a smooth gradient with sensor-like noise, compressing as a phone photo does."""
    y, x = np.mgrid[0:750, 0:1000]
    small = np.stack([x * 255 / 1000, y * 255 / 750, (x + y) * 255 / 1750], axis=-1).astype(np.uint8)
    pixels = np.asarray(Image.fromarray(small).resize((4000, 3000), Image.Resampling.BICUBIC), dtype=np.int16)
    noise = np.random.default_rng(seed).normal(0, 6, pixels.shape).astype(np.int16)
    path = folder / "IMG_0001.jpg"
    Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8)).save(path, quality=90)
    return path


def own_copy(photo: Path, n: int) -> bytes:
    """`photo`'s JPEG with a comment after its start marker: the same picture, other bytes (Gradio stores uploads
    by content hash, so identical photos would share one file)."""
    data, comment = photo.read_bytes(), f"session {n} at {time.time()}".encode()
    return data[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + data[2:]


def upload(url: str, photo: Path, n: int) -> dict:
    """Session `n`'s copy of the photo as the page uploads it (POST /gradio_api/upload)."""
    answer = httpx.post(
        f"{url}/gradio_api/upload", files=[("files", (photo.name, own_copy(photo, n), "image/jpeg"))], timeout=600
    )
    answer.raise_for_status()
    return {"path": answer.json()[0], "orig_name": photo.name}


# -- the server side (--serve) -----------------------------------------------------------------------------------


def session_sizes(demo) -> dict[str, dict[str, float]]:
    """Each page session's own bytes (MB): all it stores, its State values (the runs, ...) and its components'
    kept values and config, without what is reachable from the page itself (shared by every session)."""
    from app.server.gradio_adapter import sessions
    from app.server.sizes import kept_bytes, reachable

    gc.collect()
    holder = sessions(demo)
    stored = dict(holder.session_data)
    shared = reachable(demo, stop=[holder.session_data, *stored.values()])
    sizes = {}
    for session, state in stored.items():
        sizes[session] = {
            "kept": kept_bytes(state, shared) / MB,
            "states": kept_bytes(state.state_data, shared) / MB,
            "config": kept_bytes(state.config_values, shared) / MB,
        }
    return sizes


def serve(report: Path, port: int) -> None:
    """The app as `python -m app.gradio_app` runs it, answering each ask for its sessions' sizes in `report`."""
    import app.gradio_app as gradio_app

    built = []
    build = gradio_app.build
    gradio_app.build = lambda: built.append(build()) or built[-1]
    ask = report.with_suffix(ASK_SUFFIX)

    def answer() -> None:
        while True:
            if ask.exists() and built:
                ask.unlink()
                sizes = session_sizes(built[0].demo)
                report.with_suffix(".tmp").write_text(json.dumps(sizes))
                report.with_suffix(".tmp").rename(report)
            time.sleep(0.2)

    threading.Thread(target=answer, daemon=True, name="session sizes").start()
    sys.argv = ["app.gradio_app", "--host", "127.0.0.1", "--port", str(port)]
    gradio_app.main()


# -- the benchmark -----------------------------------------------------------------------------------------------


def asked_sizes(report: Path) -> dict[str, dict[str, float]]:
    """The server's sessions' sizes, asked for and waited on."""
    report.unlink(missing_ok=True)
    report.with_suffix(ASK_SUFFIX).touch()
    deadline = time.monotonic() + 600
    while not report.exists():
        if time.monotonic() > deadline:
            raise SystemExit("the server did not report its sessions' sizes")
        time.sleep(0.2)
    return json.loads(report.read_text())


def resident_mb(pid: int) -> float:
    return tree_mb(pid)


def one_session(url: str, photo: Path, n: int, models: list[str], method: str):
    """A page session that has analysed the photo (and drawn `method`'s map in its first column); kept open."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    photo_data = upload(url, photo, n)
    client.predict(photo_data, [], "random", "inferno", 0.6, True, " ".join(models), api_name="/run")
    if method:
        client.predict(method=method, api_name="/view_0")
    return client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--models", nargs=2, default=MODELS)
    parser.add_argument("--map", default="Saliency", help="a map drawn in the first column ('' for none)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the server side: its report's path
    args = parser.parse_args()
    port = args.port or free_port()
    if args.serve:
        serve(args.serve, port)
        return
    with tempfile.TemporaryDirectory(prefix="session-memory-") as folder:
        work = Path(folder)
        photo, report, log = phone_photo(work), work / "sizes.json", work / "server.log"
        env = {
            **os.environ,
            "GRADIO_ANALYTICS_ENABLED": "False",
            "GRADIO_TEMP_DIR": str(work / "uploads"),
            "HF_ENDPOINT": "http://127.0.0.1:9",
            "HF_HUB_CACHE": str(work / "hub"),
            "VIT_EXPLORER_MAX_PER_ADDRESS": "64",
        }
        command = [sys.executable, __file__, "--serve", str(report), "--port", str(port)]
        with open(log, "wb") as out:
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        clients = []
        try:
            wait_until_up(process, url)
            print(f"server up; photo {photo.stat().st_size / MB:.1f} MB, models {' '.join(args.models)}", flush=True)
            clients.append(one_session(url, photo, 0, args.models, args.map))  # the models loaded, first use paid
            known = set(asked_sizes(report))
            start = before = resident_mb(process.pid)
            print(f"after a warm-up session: server {start:.0f} MB resident", flush=True)
            grown, kept = [], []
            for n in range(1, args.sessions + 1):
                began = time.monotonic()
                clients.append(one_session(url, photo, n, args.models, args.map))
                sizes = asked_sizes(report)
                new = [session for session in sizes if session not in known]
                known |= set(new)
                mine = sizes[new[0]] if len(new) == 1 else {"kept": float("nan"), "states": 0.0, "config": 0.0}
                now = resident_mb(process.pid)
                grown.append(now - before)
                kept.append(mine["kept"])
                print(
                    f"session {n:2d}: server +{now - before:5.1f} MB resident ({now:.0f} MB); the session keeps "
                    f"{mine['kept']:5.2f} MB (its State values {mine['states']:.2f} MB, its components' values and "
                    f"config {mine['config']:.2f} MB); {time.monotonic() - began:.1f} s",
                    flush=True,
                )
                before = now
            sizes = asked_sizes(report)
            every = [sizes[session]["kept"] for session in known if session in sizes]
            end = resident_mb(process.pid)
            print(
                f"\n{args.sessions} sessions: resident {start:.0f} -> {end:.0f} MB, "
                f"{(end - start) / args.sessions:.1f} MB per session (median step {statistics.median(grown):.1f} MB); "
                f"kept state per session median {statistics.median(kept):.2f} MB, max {max(kept):.2f} MB "
                f"(all {len(every)} sessions now: max {max(every):.2f} MB)"
            )
        finally:
            for client in clients:
                client.close()
            stop_process(process)
            if process.returncode not in (0, -15, None):
                print(log.read_text()[-3000:])


if __name__ == "__main__":
    main()

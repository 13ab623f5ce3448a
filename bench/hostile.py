"""Hostile-load benchmark (not a test): the real Gradio server's whole process tree under one too-large job, then
under a mixed soak, its memory printed as it goes.

    .venv/bin/python bench/hostile.py large [--model vit_large_patch16_384] [--port N]
    .venv/bin/python bench/hostile.py soak [--requests 320] [--clients 8] [--port N]
    .venv/bin/python bench/hostile.py zip [--port N]

`large`: /analyze with Integrated Gradients on the largest allowed typed model (random weights), the tree's
memory every 5 s, how the call ended (a map, or the refusal saying what would fit) and in how long, the tree
after it, and a plain /analyze's latency afterwards. Targets (issue 36): ends within 600 s, the tree grows at
most 3,000 MB, and ends within 2,000 MB of its start.
`soak`: 8 clients send /analyze calls mixing no map, Saliency, Integrated Gradients and Occlusion on small
models; the tree after the first 64 calls and at the end. Target: within 10% of it, no error.
`zip`: /dataset_curves with a 2.5 MB ZIP whose directory names one 64 MB member 500 times. Target: answered
within 60 s.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from gradio_client import Client, handle_file
from repeated_zip import one_copy_named
from server import ROOT, free_port, gradio_server, tree_mb

PHOTO = sorted((ROOT / "assets" / "samples").glob("*.jpg"))[0]
SMALL = [["vit_tiny_patch16_224"], ["resnet18"], ["vit_cifar"], ["preact_resnet"]]
METHODS = ["", "Saliency", "Integrated Gradients", "Occlusion"]


def analyze(client: Client, models: list[str], method: str) -> str:
    """One /analyze call: 'map', 'no map' or the refusal's text."""
    try:
        out = client.predict(handle_file(str(PHOTO)), models, "random", method, None, api_name="/analyze")
    except Exception as exc:  # the refusal, as the client sees it
        return f"refused: {exc}"
    return "map" if method and "attribution" in out["models"][0] else "no map"


def large(process: subprocess.Popen, url: str, model: str) -> None:
    start = tree_mb(process.pid)
    print(f"tree at start: {start:,.0f} MB", flush=True)
    outcome: list[str] = []
    began = time.monotonic()
    worker = threading.Thread(
        target=lambda: outcome.append(analyze(Client(url, verbose=False), [model], "Integrated Gradients"))
    )
    worker.start()
    peak = start
    while worker.is_alive():
        worker.join(5)
        now = tree_mb(process.pid)
        peak = max(peak, now)
        print(f"  {time.monotonic() - began:5.0f} s: {now:,.0f} MB", flush=True)
    seconds = time.monotonic() - began
    print(f"IG on {model}: {outcome[0][:300]} after {seconds:.0f} s; peak growth {peak - start:+,.0f} MB")
    time.sleep(10)
    print(f"tree 10 s after: {tree_mb(process.pid):,.0f} MB ({tree_mb(process.pid) - start:+,.0f} MB)")
    began = time.monotonic()
    plain = analyze(Client(url, verbose=False), ["vit_tiny_patch16_224"], "")
    print(f"a plain /analyze afterwards: {plain} in {time.monotonic() - began:.1f} s", flush=True)


def repeated_zip(copies: int = 500, member_mb: int = 64) -> bytes:
    """About 2.5 MB: one member of `member_mb` MB (compressible 25:1, under the 100:1 bomb check) that the central
    directory names `copies` times (a000.png, a001.png, ...), as issue 36's hostile run sent."""
    block = os.urandom(2**16)
    member = b"".join(block[: 2**16 // 25] + bytes(2**16 - 2**16 // 25) for _ in range(member_mb * 16))
    return one_copy_named(copies, member)


def repeated(url: str) -> None:
    path = Path(tempfile.mkdtemp()) / "repeated.zip"
    path.write_bytes(repeated_zip())
    began = time.monotonic()
    try:
        Client(url, verbose=False).predict(
            handle_file(str(path)), ["vit_cifar", "preact_resnet"], "", "random", api_name="/dataset_curves"
        )
        outcome = "measured"
    except Exception as exc:
        outcome = f"refused: {exc}"
    print(
        f"{path.stat().st_size / 2**20:.1f} MB ZIP naming one 64 MB member 500 times: {outcome[:200]} "
        f"in {time.monotonic() - began:.1f} s"
    )
    path.unlink()


def soak(process: subprocess.Popen, url: str, requests: int, clients: int) -> None:
    counter, errors, lock, sizes = iter(range(requests)), [], threading.Lock(), {}

    def worker(seed: int) -> None:
        rng, client = random.Random(seed), Client(url, verbose=False)
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                return
            outcome = analyze(client, rng.choice(SMALL), rng.choice(METHODS))
            with lock:
                if outcome.startswith("refused"):
                    errors.append(outcome[:200])
                if n + 1 in (64, requests):
                    sizes[n + 1] = tree_mb(process.pid)
                    print(f"after {n + 1} calls: {sizes[n + 1]:,.0f} MB", flush=True)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if 64 in sizes and requests in sizes:
        print(f"end against after 64: {100 * (sizes[requests] / sizes[64] - 1):+.1f}%; {len(errors)} errors")
    for error in errors[:5]:
        print("  ", error)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=["large", "soak", "zip"])
    parser.add_argument("--model", default="vit_large_patch16_384")
    parser.add_argument("--requests", type=int, default=320)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--port", type=int, default=0, help="default: a free one")
    args = parser.parse_args()
    port = args.port or free_port()
    with gradio_server(port) as process:
        url = f"http://127.0.0.1:{port}"
        if args.scenario == "large":
            large(process, url, args.model)
        elif args.scenario == "zip":
            repeated(url)
        else:
            soak(process, url, args.requests, args.clients)


if __name__ == "__main__":
    main()

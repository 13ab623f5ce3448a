"""Soak benchmark (not a test): the real Gradio server under many clients, its memory and latency.

    .venv/bin/python bench/soak.py [--requests 1000] [--clients 16] [--port N]

Starts `python -m app.gradio_app` offline on a loopback port, then 16 gradio_client clients (one
session each) send requests that mix the API's /analyze with the page's own events: Analyze
(/run), a lesion (/lesion_0) and a view redraw (/view_1), with ResNet-50 and ViT-Ti on random
weights. Prints the server's resident memory (its whole process tree) every 100 requests, then
p50/p95 latency per kind and the errors. Target: memory after 1,000 requests within 10% of memory after 100, no error.
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from collections import defaultdict

from gradio_client import Client, handle_file
from server import ROOT, free_port, gradio_server, tree_mb

PHOTOS = sorted((ROOT / "assets" / "samples").glob("*.jpg"))
MODELS = ["resnet50", "vit_tiny_patch16_224"]


def request(client: Client, kind: str, rng: random.Random, analyzed: bool) -> None:
    photo = handle_file(str(rng.choice(PHOTOS)))
    if kind == "analyze" or (kind != "run" and not analyzed):
        client.predict(photo, MODELS, "random", api_name="/analyze")
    elif kind == "run":
        client.predict(photo, MODELS, "random", "inferno", 0.6, True, api_name="/run")
    elif kind == "lesion":
        client.predict(rng.choice([[], [5], [5, 6]]), api_name="/lesion_0")
    else:
        client.predict(layer=rng.randint(1, 12), head="mean", rollout=False, colormap="viridis", api_name="/view_1")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=1000)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--port", type=int, default=0, help="default: a free one")
    args = p.parse_args()
    port = args.port or free_port()
    with gradio_server(port) as server:
        soak(server.pid, f"http://127.0.0.1:{port}", args.requests, args.clients)


def soak(pid: int, url: str, requests: int, clients: int) -> None:
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    done, lock = [0], threading.Lock()
    print(f"server pid {pid}: {tree_mb(pid):.0f} MB at start", flush=True)

    def worker(seed: int) -> None:
        rng, client, analyzed = random.Random(seed), Client(url, verbose=False), False
        while True:
            with lock:
                if done[0] >= requests:
                    return
                done[0] += 1
                count = done[0]
            kind = rng.choice(["analyze", "run", "lesion", "view"])
            start = time.perf_counter()
            try:
                request(client, kind, rng, analyzed)
                analyzed = analyzed or kind == "run"
                latencies[kind].append(time.perf_counter() - start)
            except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
                errors.append(f"{kind}: {exc}")
            if count % 100 == 0:
                print(f"{count:5d} requests: server {tree_mb(pid):.0f} MB", flush=True)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    print(f"{requests} requests from {clients} clients in {seconds:.0f} s ({requests / seconds:.1f}/s)")
    for kind, values in sorted(latencies.items()):
        values = sorted(values)
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        print(f"{kind:8} {len(values):5d}  p50 {statistics.median(values):6.2f} s  p95 {p95:6.2f} s")
    print(f"errors: {len(errors)}" + "".join(f"\n  {e}" for e in errors[:10]))


if __name__ == "__main__":
    main()

"""Idle-server benchmark (not a test): the CPU a started Gradio server takes while nobody uses it.

    .venv/bin/python bench/idle_server.py [--seconds 30]

Starts the real server (bench/server.py), lets it settle for 10 s, then reads its process tree's CPU time from
/proc over `--seconds` with no request made, and prints it as a share of one core with the date and the CPU. Gradio's
queue looks for work every millisecond on Linux unless told otherwise (app/server/gradio_adapter.calm): a Space or a
classroom server sits idle most of the day, and a test run keeps several servers open.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cpu_by_test import tree_cpu  # noqa: E402
from bench.server import free_port, gradio_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    with gradio_server(free_port()) as server:
        time.sleep(10)
        start, wall = sum(tree_cpu(server.pid).values()), time.monotonic()
        time.sleep(args.seconds)
        used, wall = sum(tree_cpu(server.pid).values()) - start, time.monotonic() - wall
    cpu = platform.processor() or platform.machine()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d} · {cpu} · {os.cpu_count()} cores · load {os.getloadavg()[0]:.2f}")
    print(f"idle Gradio server: {used:.2f} CPU-s in {wall:.0f} s = {100 * used / wall:.1f}% of one core")


if __name__ == "__main__":
    main()

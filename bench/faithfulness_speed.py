"""Faithfulness benchmark (not a test): what deletion and insertion of one map cost against the map itself.

    .venv/bin/python bench/faithfulness_speed.py [--threads 2] [--repeats 3] [--models resnet50,vit_small_patch16_224]

For every map method at its defaults (engine.analyses.attributions, seeded random weights: the time does not depend
on the weights), on assets/samples/cat.jpg for its top-1 class: the map's seconds, the check's seconds the first time
on a photo and class (engine.DeletionInsertion: 10 steps, blur fill, the map's two curves and 3 random orders' two,
88 images through a forward pass) and for each further map of the same photo and class (the random orders known:
22 images), each the median of `--repeats` after a warm-up, and the ratio of the further check to its map. Target
(issue #50): a check at most 2x its map. Prints a Markdown table with the date, the CPU and the load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from bench.attribution_speed import seconds  # noqa: E402
from engine.analyses.attributions import METHODS, unsupported  # noqa: E402

MODELS = "resnet50,vit_small_patch16_224"
PHOTO = ROOT / "assets" / "samples" / "cat.jpg"


def wall_seconds(run, repeats: int) -> float:
    """Median wall seconds of `repeats` runs after a warm-up (attribution_speed's timing)."""
    return seconds(run, repeats)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default=MODELS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
        f"{args.threads} threads, torch {torch.__version__}, load average {os.getloadavg()[0]:.1f}\n"
    )
    print("| model | method | map (s) | first check (s) | further check (s) | further / map |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.models.split(","):
        model = engine.create_model(name, weights="random", device="cpu")
        x = engine.DeletionInsertion(model).inputs([str(PHOTO)])
        for method in METHODS:
            if unsupported(method, model):
                continue
            drawn = METHODS[method](model).attribute(x)
            heat = drawn.map if drawn.raw is None else drawn.raw
            known = engine.DeletionInsertion(model).attribute(x, drawn.target, heat=heat).random
            mapped = wall_seconds(lambda: METHODS[method](model).attribute(x, drawn.target), args.repeats)
            first = wall_seconds(
                lambda: engine.DeletionInsertion(model).attribute(x, drawn.target, heat=heat), args.repeats
            )
            again = engine.DeletionInsertion(model, random=known)
            further = wall_seconds(lambda: again.attribute(x, drawn.target, heat=heat), args.repeats)
            row = [
                model.spec.label,
                method,
                f"{mapped:.2f}",
                f"{first:.2f}",
                f"{further:.2f}",
                f"{further / mapped:.1f}x",
            ]
            print(f"| {' | '.join(row)} |", flush=True)


if __name__ == "__main__":
    main()

"""Benchmark (not a test): plain forward pass vs the engine's full analysis of one 224x224 image.

    .venv/bin/python bench/engine_speed.py [--device cpu] [--repeats 7] [--model NAME ...]

Prints, per model, the median time of a plain forward pass and of the full analysis of the same
preprocessed image (`Analyzer.measure`: the forward pass with every block's Fourier curve and
variance, attention maps, rollout and distances, and the top-5), their ratio (target: <= 1.3x),
and the time of the eval transform (resize, crop, normalize) that both need before them.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
import statistics
import time

import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


def interleaved_medians(a, b, repeats: int) -> tuple[float, float]:
    """Median times of `a` and `b`, run alternately so that load on the machine hits both alike."""
    a(), b()  # warm-up
    pairs = [(seconds(a), seconds(b)) for _ in range(repeats)]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--model", action="append", help="default: every ImageNet model in the registry")
    args = parser.parse_args()
    import skimage.data

    image = Image.fromarray(skimage.data.chelsea())
    names = args.model or [n for n in engine.list_models() if engine.get_spec(n).dataset == "imagenet"]
    print(f"device {args.device}, torch threads {torch.get_num_threads()}, median of {args.repeats}")
    print("| model | forward (ms) | full analysis (ms) | ratio | eval transform (ms) |\n|---|---:|---:|---:|---:|")
    for name in names:
        model = engine.create_model(name, weights="random", device=args.device)
        analyzer = engine.Analyzer(model)
        x = analyzer.preprocess([image]).to(model.device)

        def forward() -> None:
            with torch.inference_mode():
                model.module(x)

        plain, full = interleaved_medians(forward, lambda: analyzer.measure(x), args.repeats)
        prep = statistics.median(seconds(lambda: analyzer.preprocess([image])) for _ in range(args.repeats))
        print(f"| {name} | {plain * 1e3:.1f} | {full * 1e3:.1f} | {full / plain:.2f} | {prep * 1e3:.1f} |", flush=True)


if __name__ == "__main__":
    main()
